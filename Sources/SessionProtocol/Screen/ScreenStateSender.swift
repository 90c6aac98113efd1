import ScreenModel

/// The computer's side of one screen session's states on one connection (docs/companion.md,
/// "Screen sessions"): numbers them, sends each as the change from the one sent before it (the
/// channel is ordered and reliable: what was sent on a connection arrives unless the connection
/// ends, and then the next state goes whole), and paces them as mosh does, after the path's round
/// trip. Pure: the time is passed in, the screen is handed over when `nextSendTime` comes.
public struct ScreenStateSender: Sendable {
    public struct Settings: Sendable, Hashable {
        /// The least and most time between two states: half the round trip, within these (mosh's
        /// SEND_INTERVAL_MIN and _MAX).
        public var minimumInterval: Double = 0.020
        public var maximumInterval: Double = 0.250
        /// The wait after a first change before its state goes, so a burst of output that
        /// belongs together goes in one state (mosh's server SEND_MINDELAY).
        public var collectDelay: Double = 0.008
        /// States sent and not acknowledged before the next waits for an acknowledgement: a busy
        /// path gets the newest screen when it has room, not a queue of stale ones.
        public var maximumUnacknowledged = 4
        /// How long input must have been with the program before a state says it was echoed
        /// (mosh's ECHO_TIMEOUT): a device's prediction is judged by a screen that had time to
        /// show it.
        public var echoDelay: Double = 0.050

        public init() {}
    }

    public private(set) var stream: UInt32
    public let settings: Settings
    /// The last state number used; numbers are never reused in a session, across connections too.
    public private(set) var lastState: UInt64
    /// Smoothed round trip of a state to its acknowledgement (RFC 6298's gain of 1/8); nil
    /// before the first.
    public private(set) var smoothedRoundTrip: Double?
    /// What the device has, or will have once what is in flight arrives: nil, the next goes whole.
    private var sent: (state: UInt64, screen: TerminalScreen, bells: UInt32, inputBytes: UInt64)?
    private var inFlight: [(state: UInt64, at: Double)] = []
    private var lastSendTime = -Double.infinity
    /// When the screen first changed after the last state went: the collect delay runs from here.
    private var changedSince: Double?
    private var echo = EchoAcknowledgement()

    /// A session's sender; `lastState` carries the numbering on from an earlier connection.
    public init(stream: UInt32, lastState: UInt64 = 0, settings: Settings = Settings()) {
        self.stream = stream
        self.lastState = lastState
        self.settings = settings
    }

    /// The time between two states on this path now.
    public var interval: Double {
        guard let smoothedRoundTrip else { return settings.minimumInterval }
        return min(settings.maximumInterval, max(settings.minimumInterval, smoothedRoundTrip / 2))
    }

    /// The program's screen changed at `now` (its output was read, or it was resized).
    public mutating func screenChanged(now: Double) {
        if changedSince == nil { changedSince = now }
    }

    /// The program has been given `total` input bytes of the session by `now`.
    public mutating func inputWritten(total: UInt64, now: Double) {
        echo.written(total: total, at: now)
    }

    /// When the next state should go: nil while nothing is new or too many are in flight. A
    /// caller that passed this time calls `messages(for:…)`.
    public func nextSendTime() -> Double? {
        guard inFlight.count < settings.maximumUnacknowledged else { return nil }
        var due: Double?
        if sent == nil {
            due = -.infinity
        } else if let changedSince {
            due = changedSince + settings.collectDelay
        }
        if let sent, let confirmed = echo.time(beyond: sent.inputBytes) {
            let echoDue = confirmed + settings.echoDelay
            due = min(due ?? echoDue, echoDue)
        }
        guard let due else { return nil }
        return max(due, lastSendTime + interval)
    }

    /// The messages of the next state, when `screen` (with `bells` rung so far) differs from what
    /// the device has: the whole screen after `restart`, else the change; empty when nothing did.
    public mutating func messages(for screen: TerminalScreen, bells: UInt32, now: Double) -> [SessionMessage] {
        changedSince = nil
        let inputBytes = echo.acknowledged(at: now - settings.echoDelay)
        let diff: ScreenDiff
        let base: UInt64
        let title: String?
        if let sent {
            if sent.screen == screen, sent.bells == bells, sent.inputBytes == inputBytes { return [] }
            diff = ScreenDiff.between(sent.screen, screen)
            base = sent.state
            title = sent.screen.title == screen.title ? nil : screen.title
        } else {
            diff = ScreenDiff.whole(screen)
            base = 0
            title = screen.title
        }
        lastState += 1
        sent = (lastState, screen, bells, inputBytes)
        inFlight.append((lastState, now))
        lastSendTime = now
        echo.forget(upTo: inputBytes)
        return ScreenParts.messages(
            stream: stream, state: lastState, base: base, inputBytes: inputBytes, screen: screen, bells: bells,
            title: title, diff: diff)
    }

    /// The device acknowledged `state` at `now`: false when no such state is in flight (the
    /// device is broken or hostile).
    public mutating func acknowledged(_ state: UInt64, now: Double) -> Bool {
        guard let position = inFlight.firstIndex(where: { $0.state == state }) else { return false }
        let sample = max(0, now - inFlight[position].at)
        smoothedRoundTrip = smoothedRoundTrip.map { 0.875 * $0 + 0.125 * sample } ?? sample
        inFlight.removeFirst(position + 1)
        return true
    }

    /// Whether the device has (or will have, once what is in flight arrives) the screen as it
    /// was last handed over: nothing waits to be sent but input's acknowledgement.
    public var isCaughtUp: Bool { sent != nil && changedSince == nil }

    /// A new connection (a resume) on `stream`: nothing sent before it counts, the next state
    /// goes whole; the numbering, the round trip and the input's times carry on.
    public mutating func restart(stream: UInt32) {
        self.stream = stream
        restart()
    }

    /// A new connection: nothing sent before it counts, the next state goes whole.
    public mutating func restart() {
        sent = nil
        inFlight = []
        lastSendTime = -.infinity
        changedSince = nil
    }
}

/// When the program was given each input byte, so a state can say which bytes it had had at
/// least `echoDelay` to echo.
struct EchoAcknowledgement: Sendable {
    /// Totals written, oldest first, each with its time; only those beyond the last acknowledged.
    private var writes: [(total: UInt64, at: Double)] = []
    private var confirmed: UInt64 = 0

    mutating func written(total: UInt64, at time: Double) {
        guard total > (writes.last?.total ?? confirmed) else { return }
        writes.append((total, time))
    }

    /// The input bytes written at or before `time`.
    func acknowledged(at time: Double) -> UInt64 {
        writes.last(where: { $0.at <= time })?.total ?? confirmed
    }

    /// When the first bytes beyond `total` were written, if any were.
    func time(beyond total: UInt64) -> Double? {
        writes.first(where: { $0.total > total })?.at
    }

    mutating func forget(upTo total: UInt64) {
        confirmed = max(confirmed, total)
        writes.removeAll { $0.total <= total }
    }
}
