import HerdrAgents
import NetworkPath
import NoiseRoads
import PeerGate
import RelayClient
import ScreenModel
import SessionProtocol

/// The device's connection to its computer over the Noise roads, as a pure state machine: what
/// `DeviceConnection` decides, without its sockets, threads or clock (docs/companion.md, "The
/// session protocol", "Liveness"; docs/architecture.md). Inputs come in one at a time with the
/// time (`handle(_:now:)`): a keystroke, a frame of the connection in use, an attempt that ended,
/// the kernel's news, a tick of the clock, the person leaving. Actions come out: start an attempt
/// over the roads (a connect, a race, a home probe), adopt, close or abandon a connection, send a
/// message, write output, emit an event, finish. `nextWake` says when to tick next.
///
/// It keeps the session across connections (`DeviceSession`, the input not yet sent and the
/// input log for resending), each connection's state (`Link`: liveness, frame budget, flow
/// window, the agents board), and the retry state between connections.
public struct DeviceConnectionMachine: Sendable {
    /// Identifies one attempt over the roads, and the connection it brings up.
    public struct AttemptID: Hashable, Sendable, CustomStringConvertible {
        public let value: Int
        public var description: String { "#\(value)" }
    }

    /// How an attempt goes over the roads.
    public struct RoadAttempt: Hashable, Sendable {
        /// The home addresses go first, with their head start over the relay.
        public var homeFirst: Bool
        /// The computer's home addresses, as it last said.
        public var home: [HomeAddress]
        /// Only the home addresses (a probe while the session runs over the relay).
        public var homeOnly: Bool
    }

    /// A connection an attempt brought up: its road, and whether it registered the room.
    public struct Arrival: Hashable, Sendable {
        public var road: NoiseRoad
        public var registeredNow: Bool
        /// The computer said it serves screen sessions (`{"serves"}`).
        public var servesScreenSessions: Bool

        public init(road: NoiseRoad, registeredNow: Bool, servesScreenSessions: Bool = true) {
            self.road = road
            self.registeredNow = registeredNow
            self.servesScreenSessions = servesScreenSessions
        }
    }

    public enum Input: Sendable {
        /// Connect for the first time.
        case start
        /// Keystrokes for the session.
        case keys([UInt8])
        /// The end of input (the terminal's EOF character on the computer).
        case endOfInput
        case resize(cols: Int, rows: Int)
        /// `count` bytes of output reached the screen.
        case shown(Int)
        /// Output could not be written (the local terminal went away).
        case outputFailed
        /// Attach this when nothing is attached yet.
        case open(Attach)
        case watchAgents(Bool)
        /// The person or the caller ends it.
        case stop(Termination)
        /// An attempt ended: a connection up (its channel established, the status acknowledged),
        /// or why not.
        case attemptEnded(AttemptID, Result<Arrival, RoadFailure>)
        /// A frame arrived on connection `AttemptID`, completing these channel messages (none for
        /// a chunk of a longer message).
        case frame(AttemptID, messages: [[UInt8]])
        /// Connection `AttemptID` ended (or a frame on it failed to authenticate), as a failure:
        /// what it means for retrying.
        case ended(AttemptID, RoadFailure)
        /// The kernel said addresses or routes changed: the change under the connection in use,
        /// if there is one and it moved, and the attempts under way that the news may have left
        /// on a path that is gone (no connected socket yet, or one whose address or route moved).
        case networkChanged(PathChange?, stale: Set<AttemptID>)
        /// Time passed (at `nextWake`, or sooner).
        case tick
    }

    public enum Action: Sendable, Equatable {
        /// Start `RoadAttempt` on a thread of its own; `attemptEnded` follows.
        case connect(AttemptID, RoadAttempt)
        /// Call that attempt off: what it has open is abandoned (its result no longer matters).
        case cancel(AttemptID)
        /// The connection `AttemptID` brought up is the one in use from now on: its frames come
        /// as `frame`, its end as `ended`.
        case adopt(AttemptID)
        /// Close that connection (the in-use one or one not adopted), with its closing handshake.
        case close(AttemptID)
        /// End that connection at once: its path is quiet or gone, or a new one replaced it.
        case abandon(AttemptID)
        /// One channel message on the connection in use.
        case send([UInt8])
        /// Output for the output sink; `shown` (or `outputFailed`) follows once written.
        case write([UInt8])
        /// A screen session's screen, complete: draw it.
        case draw(ScreenFrame)
        case emit(Event)
        /// The last action.
        case finish(Termination)
    }

    public struct Settings: Sendable {
        /// What to attach on each connection; nil attaches nothing until `open`.
        public var attach: Attach?
        /// Attach it as a screen session (docs/companion.md, "Screen sessions"): the computer
        /// keeps the terminal and sends screens.
        public var screen = false
        /// Ask each connection for the agents board.
        public var watchAgents = false
        public var cols: Int
        public var rows: Int
        /// The most output this side holds beyond what reached the screen.
        public var window = 4 * 1024 * 1024
        /// Seconds before reconnect attempt `n` (1-based) after the link dropped; nil gives up.
        public var retryDelay: @Sendable (Int) -> Double? = { attempt in
            attempt <= 10 ? min(0.5 * Double(1 << min(attempt - 1, 5)), 15) : nil
        }
        /// Seconds between tries of the home addresses while the session runs over the relay.
        public var homeProbeInterval: Double? = 5
        /// Which roads connections may take, and whether this computer has a relay road.
        public var choice: DeviceRoads.Choice = .any
        public var hasRelay = true
        /// The computer's home addresses at the start.
        public var home: [HomeAddress] = []
        /// While watching agents with nothing attached, each connection waits this long for its
        /// first board, then ends with this failure: a herdr-host older than the agents family
        /// ignores the request.
        public var boardWait: (seconds: Double, failure: Failure)?
        /// Uniform randomness in 0...1 (a relay cluster's jittered retry-soon delay).
        public var random: @Sendable () -> Double = { Double.random(in: 0...1) }

        public init(attach: Attach?, cols: Int, rows: Int) {
            self.attach = attach
            self.cols = cols
            self.rows = rows
        }
    }

    /// Seconds between the first connection's quick retries while the computer is between parks.
    static let offlineRetries: [Double] = [0.1, 0.25, 0.5, 1]
    /// The same after an at-once retry: the relay closed the computer a moment ago, when this
    /// device's old socket went, and it parks again as soon as it sees that.
    static let reparkRetries: [Double] = [0.02, 0.05, 0.1, 0.25, 0.5, 1]
    /// Seconds a failed race waits before the next, while the path stays quiet.
    static let raceRetryDelay = 2.0
    /// Bytes typed while the link is down wait up to this many (later ones are dropped).
    public static let maximumPendingInput = 1024 * 1024

    public let settings: Settings
    var phase = Phase.idle
    var session: DeviceSession
    var attach: Attach?
    var watching: Bool
    var size: (cols: Int, rows: Int)
    /// The computer's home addresses, as it last said.
    var home: [HomeAddress]
    /// Typed and not sent yet (sent once a session runs on a connection).
    var input: [UInt8] = []
    var inputLog = DeviceInputLog()
    var endOfInput = false
    /// A connection got through once (what "started" is for a connection that attaches nothing).
    var connectedOnce = false
    var retry = Retry()
    /// The connection in use.
    var link: Link?
    /// The latest connection adopted (in use or dropped since): races and probes act for it alone.
    var latestLink: AttemptID?
    var race: Race?
    /// When the last race started.
    var racedAt = -Double.infinity
    var probe: Probe?
    var nextAttempt = 0
    /// What the current `handle` decided.
    var actions: [Action] = []

    enum Phase: Equatable {
        /// Before `start`.
        case idle
        /// The attempt that connects (not a race or a probe) is under way.
        case connecting(AttemptID)
        /// Between attempts, until then.
        case waiting(until: Double)
        /// A connection is in use (`link`).
        case up
        /// The connection dropped while a race from it was under way: the race decides.
        case awaitingRace(RoadFailure, dropped: Dropped)
        case finished
    }

    /// What the decision after a drop needs of the connection that dropped.
    struct Dropped: Equatable {
        var road: NoiseRoad
        var connectedAt: Double
        var closedBecause: String?
    }

    public init(_ settings: Settings) {
        self.settings = settings
        attach = settings.attach
        watching = settings.watchAgents
        size = (Self.clamp(settings.cols), Self.clamp(settings.rows))
        home = settings.home
        session = Self.session(for: settings.attach, window: settings.window, screen: settings.screen)
    }

    /// Whether `finish` went out.
    public var isFinished: Bool { phase == .finished }

    /// When to `tick` next (monotonic seconds); nil when nothing waits on the clock.
    public var nextWake: Double? {
        var next = Double.infinity
        switch phase {
        case .waiting(let until): next = until
        case .up:
            if let link {
                // A ping due that waits for the budget goes at `flushAt`.
                if let flushAt = link.flushAt {
                    next = min(next, flushAt)
                    if link.liveness.isOwed { next = min(next, link.liveness.nextDeadline()) }
                } else {
                    next = min(next, link.liveness.nextDeadline())
                }
                if let board = link.boardDeadline { next = min(next, board) }
            }
        case .idle, .connecting, .awaitingRace, .finished: break
        }
        if phase != .finished, let probe, probe.running == nil { next = min(next, probe.nextAt) }
        return next.isFinite ? next : nil
    }

    /// Takes one input at `now` (monotonic seconds); the actions to carry out, in order.
    public mutating func handle(_ input: Input, now: Double) -> [Action] {
        actions.removeAll(keepingCapacity: true)
        guard phase != .finished else {
            // Whatever an attempt still brings up after the end is closed at once.
            if case .attemptEnded(let id, .success) = input { actions.append(.close(id)) }
            return actions
        }
        switch input {
        case .start:
            guard phase == .idle else { break }
            connect(now: now)
        case .keys(let bytes):
            guard !bytes.isEmpty, self.input.count + bytes.count <= Self.maximumPendingInput else { break }
            self.input += bytes
            flush(now: now)
        case .endOfInput:
            endOfInput = true
            flush(now: now)
        case .resize(let cols, let rows):
            size = (Self.clamp(cols), Self.clamp(rows))
            link?.resize = size
            flush(now: now)
        case .shown(let count):
            shown(count, now: now)
        case .outputFailed:
            finish(.failed(Failure(.local, "the terminal's output could not be written")))
        case .open(let attach):
            open(attach, now: now)
        case .watchAgents(let watch):
            guard watch != watching else { break }
            watching = watch
            if !watch { link?.boardDeadline = nil }
            link?.watchChange = watch
            flush(now: now)
        case .stop(let termination):
            if let link, let stream = link.stream { actions.append(.send(SessionMessage.close(stream: stream).bytes)) }
            finish(termination)
        case .attemptEnded(let id, let result):
            attemptEnded(id, result, now: now)
        case .frame(let id, let messages):
            guard link?.id == id else { break }
            link?.liveness.heard(now: now)
            for message in messages {
                receive(message, now: now)
                guard link?.id == id else { break }
            }
        case .ended(let id, let failure):
            guard let link, link.id == id else { break }
            dropped(failure, now: now)
        case .networkChanged(let change, let stale):
            networkChanged(change, stale: stale, now: now)
        case .tick:
            tick(now: now)
        }
        return actions
    }

    // MARK: - Events and the end

    mutating func emit(_ event: Event) {
        actions.append(.emit(event))
    }

    /// The last action: the connection in use is closed, and whatever comes after is ignored.
    mutating func finish(_ termination: Termination) {
        if let link { actions.append(.close(link.id)) }
        link = nil
        race = nil
        probe = nil
        phase = .finished
        actions.append(.finish(termination))
    }

    /// Whether the session ran once, or, for a connection that attaches nothing, a connection got
    /// through once: failures after that are drops to retry, not a computer never reached.
    var wasUp: Bool { session.hasStarted || (attach == nil && connectedOnce) }

    static func clamp(_ cells: Int) -> Int { max(1, min(cells, SessionMessage.maximumCells)) }

    static func session(for attach: Attach?, window: Int, screen: Bool) -> DeviceSession {
        switch attach {
        case .agent(let agent): DeviceSession(agent: agent, window: window, screen: screen)
        case .session(let name): DeviceSession(name: name, window: window, screen: screen)
        case nil: DeviceSession(name: nil, window: window, screen: screen)
        }
    }

    mutating func newAttemptID() -> AttemptID {
        nextAttempt += 1
        return AttemptID(value: nextAttempt)
    }

    // MARK: - The person's side

    private mutating func open(_ attach: Attach, now: Double) {
        guard self.attach == nil else { return }
        self.attach = attach
        session = Self.session(for: attach, window: settings.window, screen: settings.screen)
        link?.boardDeadline = nil
        sendAttach(now: now)
    }

    /// `count` bytes reached the screen: the window follows what the path delivered, and a
    /// credit goes when one is due.
    private mutating func shown(_ count: Int, now: Double) {
        if let window = link?.window?.received(count, now: now) {
            session.setWindow(window)
            link?.windowChange = window
        }
        let credit = session.consumed(count)
        guard link != nil else { return }
        if let credit { link?.credit = credit }
        if credit != nil || link?.windowChange != nil { flush(now: now) }
    }

    private mutating func tick(now: Double) {
        if case .waiting(let until) = phase, now >= until { connect(now: now) }
        if phase == .up, let link {
            flush(now: now)  // an idle ping, or what the budget held back
            if let deadline = link.boardDeadline, now >= deadline, let wait = settings.boardWait {
                return finish(.failed(wait.failure))
            }
            if let silent = self.link?.liveness.suspicion(now: now) {
                startRace(.quiet(silentFor: silent), now: now)
            }
        }
        probeIfDue(now: now)
    }
}
