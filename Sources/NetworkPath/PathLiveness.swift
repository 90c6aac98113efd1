/// One side's idea of whether a connection's path still carries anything, without waiting for
/// TCP (docs/companion.md, "Liveness"; the SSH road keeps one too, its keepalives as the pings): a
/// smoothed round-trip time from its own pings, and a ping whenever an answer is owed. Something
/// is owed when a ping is out: one follows every message that wants an answer (a keystroke, a
/// credit, a resize) within `coverDelay`, and one goes after `idlePing` of hearing nothing. A
/// ping out with nothing at all heard for max(`minimumSilence`, 4 × smoothed RTT) makes the path
/// suspect: the device then races a fresh connection. Anything heard (any frame) clears the
/// suspicion. Pure: the time is passed in.
public struct PathLiveness: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Seconds of hearing nothing before an idle ping.
        public var idlePing: Double = 5
        /// The least silence, in seconds, that makes a path with a ping out suspect.
        public var minimumSilence: Double = 1
        /// The silence that makes a path suspect, in smoothed round trips (when longer).
        public var roundTrips: Double = 4
        /// Seconds a session message may wait for the ping that covers it: at most one ping per
        /// this while typing, so a keystroke costs the frame budget a ping at most 4 times a second.
        public var coverDelay: Double = 0.25

        public init() {}
    }

    public enum Action: Sendable, Equatable {
        /// Send `{"ping":id}` now.
        case ping(UInt32)
        /// A ping is out and nothing was heard for `silentFor` seconds: race a fresh connection.
        case suspect(silentFor: Double)
    }

    public let settings: Settings
    /// Smoothed round-trip time and its variation (RFC 6298), from pong samples; nil before one.
    public private(set) var smoothedRTT: Double?
    public private(set) var rttVariation: Double?
    /// When anything was last heard on the path.
    public private(set) var lastHeard: Double
    private var lastPing: Double = -.infinity
    private var outstanding: (id: UInt32, sentAt: Double)?
    private var nextID: UInt32 = 1
    /// A session message went out that no ping sent since covers.
    private var coverWanted = false
    private var suspected = false
    /// No suspicion before this (a race that failed waits before the next).
    private var holdUntil = -Double.infinity

    /// A path that just came up at `now` (its handshake heard).
    public init(settings: Settings = Settings(), now: Double) {
        self.settings = settings
        lastHeard = now
    }

    /// Seconds of silence, with a ping out, that make the path suspect.
    public var silenceLimit: Double {
        max(settings.minimumSilence, settings.roundTrips * (smoothedRTT ?? 0))
    }

    /// Whether a ping is waiting for its pong.
    public var isOwed: Bool { outstanding != nil }

    /// Something arrived on the path (any frame).
    public mutating func heard(now: Double) {
        lastHeard = max(lastHeard, now)
        suspected = false
    }

    /// A pong arrived (heard too); the round trip it measured, when it answers the ping out.
    @discardableResult
    public mutating func pong(_ id: UInt32, now: Double) -> Double? {
        heard(now: now)
        guard let out = outstanding, out.id == id else { return nil }
        outstanding = nil
        let sample = max(0, now - out.sentAt)
        if let srtt = smoothedRTT, let variation = rttVariation {
            rttVariation = 0.75 * variation + 0.25 * abs(srtt - sample)
            smoothedRTT = 0.875 * srtt + 0.125 * sample
        } else {
            smoothedRTT = sample
            rttVariation = sample / 2
        }
        return sample
    }

    /// A race after a suspicion failed: suspect again no sooner than `until` if still silent.
    public mutating func suspectAgain(after until: Double) {
        suspected = false
        holdUntil = until
    }

    /// A session message that wants an answer went out.
    public mutating func sentSessionMessage() {
        coverWanted = true
    }

    /// The ping to send at `now`, if one is due (covering a session message, or after an idle
    /// spell); it is then out.
    public mutating func pingIfDue(now: Double) -> UInt32? {
        guard outstanding == nil else { return nil }
        let covering = coverWanted && now >= lastPing + settings.coverDelay
        let idle = now - lastHeard >= settings.idlePing && now - lastPing >= settings.idlePing
        guard covering || idle else { return nil }
        let id = nextID
        nextID = nextID == .max ? 1 : nextID + 1
        outstanding = (id, now)
        lastPing = now
        coverWanted = false
        return id
    }

    /// Seconds since anything was heard, once, when a ping is out and the silence passed the
    /// limit: the path is suspect. Nil otherwise, and until heard again (or `suspectAgain`).
    public mutating func suspicion(now: Double) -> Double? {
        guard let out = outstanding, !suspected, now >= holdUntil else { return nil }
        guard now - max(out.sentAt, lastHeard) >= silenceLimit else { return nil }
        suspected = true
        return now - lastHeard
    }

    /// A ping due at `now`, else a suspicion.
    public mutating func tick(now: Double) -> Action? {
        if let id = pingIfDue(now: now) { return .ping(id) }
        return suspicion(now: now).map { .suspect(silentFor: $0) }
    }

    /// When `tick` has something to do next, at the latest.
    public func nextDeadline() -> Double {
        if let out = outstanding {
            return suspected ? .infinity : max(max(out.sentAt, lastHeard) + silenceLimit, holdUntil)
        }
        var next = max(lastHeard, lastPing) + settings.idlePing
        if coverWanted { next = min(next, lastPing + settings.coverDelay) }
        return next
    }
}
