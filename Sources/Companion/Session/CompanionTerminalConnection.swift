import Dispatch
import Foundation
import HerdrAgents
import HomeRoad
import NetworkPath
import Noise
import RelayClient
import RelayProtocol
import Synchronization

/// A terminal session on the computer, reached over the Noise roads (home network or relay): the
/// device side of the companion terminal (docs/companion.md, "The session protocol"). One thread
/// connects (`DeviceRoads`: the home addresses and the relay raced, a fresh handshake, status),
/// attaches the session, reads the computer's messages and, when the link drops, reconnects with
/// backoff over whichever road answers and resumes from the last byte received. Keystrokes, resizes and credits go out from the caller's thread at once,
/// within the device's frame budget (a deferred flush sends what the budget held back).
///
/// It can also watch the computer's agents (docs/companion.md, "Agents"): each connection then
/// asks for the board, and every board put together arrives as an `agents` event. A connection
/// may attach nothing at first (`attach` nil: it only watches) and open a session later on the
/// same channel (`open(_:)`), as `connect --agent` does once the board named the agent.
public final class CompanionTerminalConnection: Sendable {
    /// What a connection attaches: a herdr session by name (nil: herdr's default), or an agent's pane.
    public enum Attach: Sendable, Equatable {
        case session(String?)
        case agent(AgentKey)
    }

    public struct Configuration: Sendable {
        public var roads: DeviceRoads
        /// What to attach on each connection (the computer chooses the command); nil attaches
        /// nothing until `open(_:)`.
        public var attach: Attach?
        /// Ask each connection for the agents board (`agents` events).
        public var watchAgents = false
        public var cols: Int
        public var rows: Int
        /// Output the computer may send ahead of what reached the screen: the most this side
        /// holds of it.
        public var window = 4 * 1024 * 1024
        /// Seconds before reconnect attempt `n` (1-based) after the link dropped; nil gives up.
        public var retryDelay: @Sendable (Int) -> Double? = { attempt in
            attempt <= 10 ? min(0.5 * Double(1 << min(attempt - 1, 5)), 15) : nil
        }
        /// Seconds between tries of the home addresses while the session runs over the relay: a
        /// home channel that comes up takes the session over (nil: never move back).
        public var homeProbeInterval: Double? = 5
        /// Output straight from the connection's thread instead of `output` events: one thread
        /// handoff less per echo. It may block (the computer then waits in the window); false ends
        /// the session.
        public var outputSink: (@Sendable ([UInt8]) -> Bool)?

        public init(roads: DeviceRoads, session: String?, cols: Int, rows: Int) {
            self.init(roads: roads, attach: .session(session), cols: cols, rows: rows)
        }

        public init(roads: DeviceRoads, attach: Attach?, cols: Int, rows: Int) {
            self.roads = roads
            self.attach = attach
            self.cols = cols
            self.rows = rows
        }
    }

    public enum Event: Sendable, Equatable {
        /// A connection is up over this road (before the session starts or resumes on it).
        case connected(via: CompanionRoad)
        /// The computer said where its home door listens now.
        case homeAddresses([HomeAddress])
        /// The session moved to this road without a drop (`because` says why).
        case moved(to: CompanionRoad, because: MoveReason)
        /// The session runs (the first time).
        case started
        /// Output for the screen (only without an `outputSink`); `acknowledgeOutput` when shown.
        case output([UInt8])
        /// The link dropped; attempt `attempt` comes after a backoff.
        case reconnecting(attempt: Int, reason: String)
        /// Back on the same session, from the last byte received.
        case resumed
        /// The computer had lost the session (`reason`); a fresh one runs.
        case attachedAfresh(reason: String)
        /// This connection registered the room with the relay (keep `registered`).
        case registered
        /// The computer's agents board, whole, each time it changed (only while watching agents).
        case agents(AgentBoard)
        /// The last event.
        case finished(Termination)
    }

    /// Why the session moved to another connection while the old one had not dropped.
    public enum MoveReason: Sendable, Equatable {
        /// A home channel came up while the session ran over the relay.
        case homeIsBack
        /// A ping was out and nothing came for this many seconds: a fresh connection won the race.
        case pathWentQuiet(seconds: Double)
        /// The network moved away from under the old connection (`change` says how): a fresh
        /// connection won the race.
        case networkChanged(String)
    }

    public enum Termination: Sendable, Equatable {
        case exited(status: Int32?, signal: String?)
        case cancelled
        case failed(Failure)
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public enum Kind: Sendable, Equatable {
            /// Pair again: the room is gone or the relay no longer takes the join key.
            case pairingGone
            /// The computer or the relay could not be reached when the session was to start.
            case unreachable
            /// The relay refused for good: its daily quota, another connection of this device.
            case relayRefused
            /// The link dropped and reconnecting gave up.
            case connectionLost
            /// The computer refused the session, or it could not start there.
            case sessionRefused
            /// The agent to open is not on the computer's board (refusal reason 6), or the
            /// caller found no single agent for what the person named.
            case agentNotFound
            /// The computer cannot list its agents (herdr missing or failing there, or a
            /// herdr-host older than the agents family), as the caller found.
            case agentsUnavailable
            /// The computer broke the session protocol.
            case protocolViolation
            /// The output sink failed (the local terminal went away).
            case local
        }

        public let kind: Kind
        public let message: String
        public var description: String { message }

        public init(_ kind: Kind, _ message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// The events, in order; the stream ends after `finished`.
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    /// Where events go instead of `events`, when `start` was given a handler.
    private let handler = Mutex<(@Sendable (Event) -> Void)?>(nil)
    private let configuration: Configuration
    private let outgoing: Mutex<Outgoing>
    private let control = Mutex(Control())
    private let wakeUp = DispatchSemaphore(value: 0)
    /// Wakes the connection's thread while it serves a connection: a frame's outcome, or a
    /// liveness deadline that moved closer.
    private let livenessWake = DispatchSemaphore(value: 0)
    /// Signalled once the connection's thread has returned (its last socket closed).
    private let threadEnded = DispatchSemaphore(value: 0)

    /// Seconds between the first connection's quick retries while the computer is between parks.
    static let offlineRetries: [Double] = [0.1, 0.25, 0.5, 1]
    /// The same after an at-once retry: the relay closed the computer a moment ago, when this
    /// device's old socket went, and it parks again as soon as it sees that.
    static let reparkRetries: [Double] = [0.02, 0.05, 0.1, 0.25, 0.5, 1]

    /// Bytes typed while the link is down wait up to this many (later ones are dropped).
    public static let maximumPendingInput = 1024 * 1024

    /// What goes out, shared by the caller's threads and the connection's thread.
    private struct Outgoing: ~Copyable {
        var channel: FramedChannel?
        /// The session's stream on `channel` once it started there; nothing but the attach goes
        /// out before.
        var stream: UInt32?
        var budget = FrameBudget.device
        var input: [UInt8] = []
        /// The input sent in this session, for resending what a resume says did not arrive.
        var inputLog = DeviceInputLog()
        var endOfInput = false
        var size: (cols: Int, rows: Int)?
        var credit: UInt64?
        var flushScheduled = false
        /// The current connection's liveness (docs/companion.md, "Liveness").
        var liveness: PathLiveness?
        /// A pong owed to the computer, and a ping of ours due to go.
        var pong: UInt32?
        var ping: UInt32?
        /// The output window sized to the current connection's path, once the session runs on it,
        /// and a change of it still to tell the computer.
        var window: PathWindow?
        var windowChange: Int?
        /// When the connection's thread wakes next for liveness (monotonic seconds).
        var livenessWakesAt = Double.infinity
        /// Whether this connection's attach message went out (by the connection's thread at
        /// the start, or by `open(_:)` later).
        var attachSent = false
        /// A change of the agents watch to tell the computer.
        var watchChange: Bool?
    }

    private struct Control {
        var started = false
        var cancelled = false
        var finished = false
        var connection: (any FramePipe)?
        /// Counts connections, so a probe started for one never acts on the next.
        var generation = 0
        /// A channel a probe or a race brought up, for the connection's thread to move to.
        var switchTo: (established: DeviceRelayConnection.Established, reason: MoveReason)?
        /// A race for a fresh connection is under way, and when the last one started.
        var racing = false
        var racedAt = -Double.infinity
        /// The road of the connection in use.
        var road: CompanionRoad?
        /// Why this side closed the connection in use, when it did (the network went from under it).
        var closedBecause: String?
        /// The computer's home addresses as it last said.
        var home: [HomeAddress] = []
        var size: (cols: Int, rows: Int)
        /// What each connection attaches (nil: nothing yet), and whether it watches agents.
        var attach: Attach?
        var watchAgents = false
        /// A connection got through once (what "started" is for a connection that attaches nothing).
        var connectedOnce = false
        /// How the caller ended it (`cancel`, `end`): what `finished` says, whichever thread ends first.
        var ending: Termination?
        init() { size = (80, 24) }
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        outgoing = Mutex(Outgoing())
        control.withLock {
            $0.size = (configuration.cols, configuration.rows)
            $0.home = configuration.roads.home
            $0.attach = configuration.attach
            $0.watchAgents = configuration.watchAgents
        }
    }

    /// Starts the connection's thread (once). With `onEvent`, the events go to it on the
    /// connection's thread, in order, instead of to `events` (which then only ends): a caller
    /// with a queue of its own skips the stream's task hop.
    public func start(onEvent: (@Sendable (Event) -> Void)? = nil) {
        let first = control.withLock { control in
            defer { control.started = true }
            return !control.started
        }
        guard first else { return }
        handler.withLock { $0 = onEvent }
        let thread = Thread { [self] in
            run()
            threadEnded.signal()
        }
        thread.name = "relay terminal"
        thread.start()
    }

    // MARK: - From the caller (any thread)

    /// Blocks until the connection's thread has returned, at most `timeout` seconds: after
    /// `cancel`, the moment no socket of this connection is left to take the room at a relay
    /// from a connection made next (a connect under way when cancelled finishes first). True
    /// when it returned (or never started).
    public func waitUntilStopped(timeout: Double) -> Bool {
        guard control.withLock({ $0.started }) else { return true }
        guard threadEnded.wait(timeout: .now() + timeout) == .success else { return false }
        threadEnded.signal()
        return true
    }

    /// Keystrokes for the session; sent at once when the frame budget allows.
    public func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        outgoing.withLock { out in
            guard out.input.count + bytes.count <= Self.maximumPendingInput else { return }
            out.input += bytes
            flush(&out)
        }
    }

    /// The end of input (the terminal's EOF character on the computer).
    public func sendEOF() {
        outgoing.withLock { out in
            out.endOfInput = true
            flush(&out)
        }
    }

    /// The window size, now and for every later resume.
    public func resize(cols: Int, rows: Int) {
        let size = (max(1, min(cols, SessionMessage.maximumCells)), max(1, min(rows, SessionMessage.maximumCells)))
        control.withLock { $0.size = size }
        outgoing.withLock { out in
            out.size = size
            flush(&out)
        }
    }

    /// `count` bytes of `output` events reached the screen (event mode only).
    public func acknowledgeOutput(_ count: Int) {
        consumed(count)
    }

    /// Attaches `attach` on the current connection (and resumes it on later ones), when nothing is
    /// attached yet; ignored otherwise.
    public func open(_ attach: Attach) {
        let fresh = control.withLock { control -> Bool in
            guard control.attach == nil, !control.cancelled, !control.finished else { return false }
            control.attach = attach
            return true
        }
        guard fresh else { return }
        session.withLock { $0 = Self.deviceSession(attach, window: configuration.window) }
        outgoing.withLock { out in sendAttach(&out) }
    }

    /// Starts or stops the agents board on this connection and the later ones.
    public func watchAgents(_ watch: Bool) {
        let changed = control.withLock { control -> Bool in
            defer { control.watchAgents = watch }
            return control.watchAgents != watch
        }
        guard changed else { return }
        outgoing.withLock { out in
            guard out.channel != nil else { return }
            out.watchChange = watch
            flush(&out)
        }
    }

    /// Ends the connection with `failure` (what the caller found: no such agent, say) instead of
    /// `cancelled`; the computer is told to hang up a session that runs.
    public func end(_ failure: Failure) {
        stopEverything(.failed(failure))
    }

    /// Ends the session: the computer is told to hang it up, and `finished(.cancelled)` follows.
    public func cancel() {
        stopEverything(.cancelled)
    }

    private func stopEverything(_ termination: Termination) {
        let connection = control.withLock { control -> (any FramePipe)? in
            control.cancelled = true
            if control.ending == nil { control.ending = termination }
            return control.connection
        }
        outgoing.withLock { out in
            if let stream = out.stream { try? out.channel?.send(SessionMessage.close(stream: stream).bytes) }
        }
        connection?.close()
        wakeUp.signal()
        finish(termination)
    }

    // MARK: - Sending

    private static func deviceSession(_ attach: Attach?, window: Int) -> DeviceSession {
        switch attach {
        case .agent(let agent): DeviceSession(agent: agent, window: window)
        case .session(let name): DeviceSession(name: name, window: window)
        case nil: DeviceSession(name: nil, window: window)
        }
    }

    /// Sends the attach message on the current connection, once, when there is something to attach.
    private func sendAttach(_ out: inout Outgoing) {
        guard out.channel != nil, !out.attachSent, control.withLock({ $0.attach != nil }) else { return }
        let size = control.withLock { $0.size }
        let attach = session.withLock { $0.attachMessage(cols: size.cols, rows: size.rows) }
        out.attachSent = true
        _ = out.budget.take(now: MonotonicClock.now)
        try? out.channel?.send(attach.bytes)
    }

    /// Sends what waits, as far as the budget allows; schedules another try for the rest. A
    /// ping follows the session messages when one is due (`PathLiveness`).
    private func flush(_ out: inout Outgoing) {
        // The channel is used in place (`out.channel?.`): a copy would share its cipher states,
        // and each message would then pay for a fresh cipher context.
        guard out.channel != nil else { return }
        let stream = out.stream
        let now = MonotonicClock.now
        while out.budget.wait(now: now) == 0 {
            let bytes: [UInt8]
            if let id = out.pong {
                bytes = CompanionMessage.pong(id).bytes
                out.pong = nil
            } else if let watch = out.watchChange {
                bytes = CompanionMessage.agents(watch: watch).bytes
                out.watchChange = nil
            } else if let stream, let window = out.windowChange {
                bytes = CompanionMessage.window(stream: stream, bytes: window).bytes
                out.windowChange = nil
            } else if let stream, !out.input.isEmpty {
                let count = min(out.input.count, SessionMessage.maximumData - 8)
                let data = Array(out.input[0..<count])
                bytes = SessionMessage.input(stream: stream, data: data).bytes
                out.input.removeFirst(count)
                out.inputLog.record(data)
                out.liveness?.sentSessionMessage()
            } else if let stream, out.endOfInput {
                bytes = SessionMessage.endOfInput(stream: stream).bytes
                out.endOfInput = false
                out.liveness?.sentSessionMessage()
            } else if let stream, let size = out.size {
                bytes = SessionMessage.resize(stream: stream, cols: size.cols, rows: size.rows).bytes
                out.size = nil
                out.liveness?.sentSessionMessage()
            } else if let stream, let credit = out.credit {
                bytes = SessionMessage.credit(stream: stream, consumed: credit).bytes
                out.credit = nil
                out.liveness?.sentSessionMessage()
            } else if let id = out.ping ?? out.liveness?.pingIfDue(now: now) {
                bytes = CompanionMessage.ping(id).bytes
                out.ping = nil
            } else {
                break
            }
            _ = out.budget.take(now: now)
            // A failed send means the connection is ending: its thread will notice and resume.
            try? out.channel?.send(bytes)
        }
        // A ping now out, or a keystroke waiting for the ping that covers it: the connection's
        // thread must wake sooner than it planned.
        if let next = out.liveness?.nextDeadline(), next < out.livenessWakesAt - 0.001 {
            out.livenessWakesAt = next
            livenessWake.signal()
        }
        guard out.budget.wait(now: now) > 0, !out.flushScheduled else { return }
        out.flushScheduled = true
        let delay = out.budget.wait(now: now)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) { [self] in
            outgoing.withLock { out in
                out.flushScheduled = false
                flush(&out)
            }
        }
    }

    private func consumed(_ count: Int) {
        let now = MonotonicClock.now
        // What reached the screen is what the path delivered: the window follows it.
        if let window = outgoing.withLock({ $0.window?.received(count, now: now) }) {
            session.withLock { $0.setWindow(window) }
            outgoing.withLock { $0.windowChange = window }
        }
        guard let credit = session.withLock({ $0.consumed(count) }) else {
            if outgoing.withLock({ $0.windowChange != nil }) { outgoing.withLock { flush(&$0) } }
            return
        }
        outgoing.withLock { out in
            out.credit = credit
            flush(&out)
        }
    }

    // MARK: - The connection's thread

    private let session = Mutex(DeviceSession(name: nil))
    /// The agents board of the current connection, put together from its messages.
    private let agentsReceiver = Mutex(AgentBoardReceiver())

    /// Whether the session ran once, or, for a connection that attaches nothing, a connection
    /// got through once: failures after that are drops to retry, not a computer never reached.
    private var wasUp: Bool {
        if session.withLock({ $0.hasStarted }) { return true }
        return control.withLock { $0.attach == nil && $0.connectedOnce }
    }

    private func run() {
        let attach = control.withLock { $0.attach }
        session.withLock { $0 = Self.deviceSession(attach, window: configuration.window) }
        // The kernel's news of addresses and routes; without it (no netlink here) liveness alone
        // notices a network that moved.
        let monitor = try? RouteMonitor { [self] in networkChanged() }
        defer { monitor?.stop() }
        var attempt = 0
        var reshards = 0
        var lastReason = ""
        // How the retry after a drop goes, and the quick retries it has used while the computer
        // was between two parks.
        var retry = RetryAfterDrop.backingOff
        var quickRetries = 0
        while !isCancelled {
            let established: DeviceRelayConnection.Established
            if let switched = control.withLock({ $0.switchTo.take() }) {
                established = switched.established
                emit(.moved(to: switched.established.road, because: switched.reason))
            } else {
                do {
                    established = try configuration.roads.connect(homeFirst: retry.homeFirst)
                } catch {
                    if case .resharding = error, waitSoon(&reshards, reason: error.description) { continue }
                    if let end = stop(after: error, attempt: attempt) { return finish(end) }
                    lastReason = error.description
                    if case .computerOffline = error, !wasUp {
                        _ = wakeUp.wait(timeout: .now() + Self.offlineRetries[attempt])
                        attempt += 1
                        continue
                    }
                    // An at-once retry can find the computer between two parks: the relay closed
                    // it when this device's old socket went, and it is parking again.
                    if case .computerOffline = error, retry.atOnce, quickRetries < Self.reparkRetries.count {
                        _ = wakeUp.wait(timeout: .now() + Self.reparkRetries[quickRetries])
                        quickRetries += 1
                        continue
                    }
                    retry = .backingOff
                    attempt += 1
                    guard backOff(attempt: attempt, reason: lastReason) else {
                        return finish(.failed(giveUp(attempt: attempt, lastReason: lastReason)))
                    }
                    continue
                }
            }
            reshards = 0
            retry = .backingOff
            quickRetries = 0
            if established.registeredNow { emit(.registered) }
            let road = established.road
            let connectedAt = MonotonicClock.now
            emit(.connected(via: road))
            let connection = established.channel.connection
            let generation = control.withLock { control in
                control.generation += 1
                return control.generation
            }
            if !road.isHome { probeHome(generation: generation) }
            // Moved, not copied, into `outgoing`: a copy left behind would share the channel's
            // cipher states, and every message would then build a fresh cipher context.
            var channel: FramedChannel? = (consume established).channel
            let watch = control.withLock { control in
                control.connection = connection
                control.road = road
                control.closedBecause = nil
                control.connectedOnce = true
                return control.watchAgents
            }
            if isCancelled { connection.close() }
            // Every connection's board starts afresh (its `seq` counts from 1).
            agentsReceiver.withLock { $0 = AgentBoardReceiver() }
            outgoing.withLock { out in
                out.channel = channel.take()
                // The relay caps frames per second; the home road has no relay to keep under.
                out.budget = road.isHome ? .unlimited : .device
                out.stream = nil
                out.size = nil
                out.credit = nil
                out.liveness = PathLiveness(now: MonotonicClock.now)
                out.ping = nil
                out.pong = nil
                out.window = nil
                out.windowChange = nil
                out.attachSent = false
                sendAttach(&out)
                // The board is asked for on each connection: none starts watching.
                out.watchChange = watch ? true : nil
                flush(&out)
            }
            switch serve(connection, road: road, generation: generation) {
            case .finished(let termination):
                connection.close()
                return finish(termination)
            case .dropped(let end):
                outgoing.withLock { out in
                    out.channel = nil
                    out.stream = nil
                    out.watchChange = nil
                }
                control.withLock { $0.connection = nil }
                if isCancelled { return finish(.cancelled) }
                // A race's new connection takes the old one's place at the relay, which closes
                // the old one (`displaced`): the race decides what comes next.
                while control.withLock({ $0.racing }) { _ = wakeUp.wait(timeout: .now() + 0.05) }
                // A probe or a race closed the old connection to move to the channel it brought up.
                if control.withLock({ $0.switchTo != nil }) { continue }
                var failure = configuration.roads.classify(end, on: road)
                if let why = control.withLock({ $0.closedBecause.take() }) { failure = .unavailable(why) }
                if failure == .displaced, MonotonicClock.now - control.withLock({ $0.racedAt }) < 60 {
                    failure = .unavailable("a new connection of this device took the old one's place at the relay")
                }
                if case .resharding = failure, waitSoon(&reshards, reason: failure.description) { continue }
                if let end = stop(after: failure, attempt: 1) { return finish(end) }
                lastReason = failure.description
                if wasUp { attempt = 0 }
                attempt += 1
                let next = RetryAfterDrop.after(
                    road, upFor: MonotonicClock.now - connectedAt, roads: configuration.roads)
                guard backOff(attempt: attempt, reason: lastReason, atOnce: next.atOnce) else {
                    return finish(.failed(giveUp(attempt: attempt, lastReason: lastReason)))
                }
                retry = next
            }
        }
        finish(.cancelled)
    }

    private enum ServeEnd {
        case finished(Termination)
        case dropped(RelayConnectionEnd)
    }

    /// Handles the computer's messages on the connection's own thread (one handoff less per
    /// frame) until the session ends or the connection does; this thread meanwhile keeps the
    /// connection's liveness: an idle ping, and a race for a fresh connection when it goes quiet.
    private func serve(_ connection: any FramePipe, road: CompanionRoad, generation: Int) -> ServeEnd {
        let outcome = Mutex<ServeEnd?>(nil)
        connection.deliver { [self] event in
            guard outcome.withLock({ $0 == nil }) else { return }
            let end: ServeEnd?
            switch event {
            case .ended(let why): end = .dropped(why)
            case .message(let frame): end = receive(frame, on: connection)
            }
            guard let end else { return }
            outcome.withLock { $0 = end }
            livenessWake.signal()
        }
        while true {
            if let end = outcome.withLock({ $0 }) { return end }
            let wait = outgoing.withLock { out in
                flush(&out)  // an idle ping, when due
                let next = out.liveness?.nextDeadline() ?? .infinity
                out.livenessWakesAt = next
                return next - MonotonicClock.now
            }
            if wait > 0 { _ = livenessWake.wait(timeout: .now() + min(wait, 3600)) }
            if outcome.withLock({ $0 }) != nil { continue }
            let now = MonotonicClock.now
            if let silent = outgoing.withLock({ $0.liveness?.suspicion(now: now) }) {
                race(from: road, generation: generation, because: .quiet(silentFor: silent))
            }
        }
    }

    /// The kernel said addresses or routes changed: when the connection in use lost its address
    /// or its route, race a fresh one at once; between connections, cut the wait short.
    private func networkChanged() {
        let (connection, generation, road, cancelled) = control.withLock {
            ($0.connection, $0.generation, $0.road, $0.cancelled || $0.finished)
        }
        guard !cancelled else { return }
        guard let connection, let road else {
            wakeUp.signal()
            return
        }
        guard let change = connection.socketEndpoints?.change() else { return }
        race(from: road, generation: generation, because: .networkChanged(change.description))
        // A socket whose address or route is gone carries nothing more: drop it now, so that if
        // the race finds no way either, the reconnect loop says so and backs off, visibly.
        if change.oldPathIsDead {
            control.withLock { $0.closedBecause = change.description }
            connection.abandon()
        }
    }

    /// Seconds a failed race waits before the next, while the path stays quiet.
    static let raceRetryDelay = 2.0

    /// Why a race starts.
    private enum RaceCause {
        case quiet(silentFor: Double)
        case networkChanged(String)
    }

    /// The connection `generation` went quiet, or the network moved away from under it: a fresh
    /// connection over whatever road answers (home first unless home is the one in doubt), on a
    /// thread of its own; the old one carries on until the new one is up and takes the session
    /// over, as a home probe's channel does.
    private func race(from road: CompanionRoad, generation: Int, because cause: RaceCause) {
        // A race is a reconnect: not with reconnecting off (`--no-reattach`).
        guard configuration.retryDelay(1) != nil else { return }
        let (start, home) = control.withLock { control -> (Bool, [HomeAddress]) in
            guard control.generation == generation, !control.racing, !control.cancelled, control.switchTo == nil
            else { return (false, []) }
            control.racing = true
            control.racedAt = MonotonicClock.now
            return (true, control.home)
        }
        guard start else { return }
        var roads = configuration.roads
        roads.home = home
        let thread = Thread { [self, roads] in
            let result = Result { () throws(DeviceRelayConnection.Failure) in
                try roads.connect(homeFirst: !road.isHome)
            }
            let (handed, old) = control.withLock { control -> (Bool, (any FramePipe)?) in
                control.racing = false
                guard case .success(let established) = result, control.generation == generation,
                    !control.cancelled, control.switchTo == nil
                else { return (false, nil) }
                switch cause {
                case .quiet(let silentFor):
                    let quiet = silentFor + MonotonicClock.now - control.racedAt
                    control.switchTo = (established, .pathWentQuiet(seconds: quiet))
                case .networkChanged(let change):
                    control.switchTo = (established, .networkChanged(change))
                }
                return (true, control.connection)
            }
            if handed {
                // Still on the old connection: ending it hands over. At once, without the
                // closing handshake: the old path is quiet or gone, and its closing handshake
                // would hold the resume on the new connection up to its time limit (1 s). Already
                // dropped: the connection's thread waits for this race, and wakes on its own.
                old?.abandon()
            } else {
                if case .success(let established) = result { established.channel.connection.close() }
                let retry = MonotonicClock.now + Self.raceRetryDelay
                outgoing.withLock { $0.liveness?.suspectAgain(after: retry) }
                livenessWake.signal()
            }
            wakeUp.signal()
        }
        thread.name = "road race"
        thread.start()
    }

    /// One frame from the computer: decrypted, parsed, handled; the end it means, or nil.
    private func receive(_ frame: [UInt8], on connection: any FramePipe) -> ServeEnd? {
        let outputs: [FramedChannel.Output]
        do {
            outputs = try outgoing.withLock { out throws(FramedChannelError) in
                out.liveness?.heard(now: MonotonicClock.now)
                return try out.channel?.receive(frame) ?? []
            }
        } catch {
            // A frame that fails authentication: the path is broken; start over.
            connection.close()
            return .dropped(.failed(RelayClientError(.protocolViolation, "\(error)")))
        }
        for case .message(let bytes) in outputs {
            // A computer that breaks the channel's rule would break it again after a reconnect:
            // the session ends, saying what came.
            let message: ChannelMessage
            do {
                message = try ChannelMessage(parsing: bytes)
            } catch {
                return .finished(.failed(Failure(.protocolViolation, "the computer sent \(error)")))
            }
            switch message {
            case .control(.home(let addresses)):
                control.withLock { $0.home = addresses }
                emit(.homeAddresses(addresses))
            case .control(.ping(let id)):
                outgoing.withLock { out in
                    out.pong = id
                    flush(&out)
                }
            case .control(.pong(let id)):
                outgoing.withLock { out in
                    if let sample = out.liveness?.pong(id, now: MonotonicClock.now) { out.window?.roundTrip(sample) }
                }
            case .control(.inputReceived(let stream, let received)):
                // Before the resume's `started`: what the old connection did not deliver goes
                // first, ahead of anything typed since.
                guard stream == session.withLock({ $0.stream }) else { continue }
                outgoing.withLock { out in
                    if let resend = out.inputLog.rewind(toReceived: received) { out.input = resend + out.input }
                }
            case .agents(let message):
                let received = agentsReceiver.withLock { receiver -> Result<AgentBoard?, AgentBoardMessageError> in
                    Result { () throws(AgentBoardMessageError) in try receiver.receive(message) }
                }
                switch received {
                case .success(let board): if let board { emit(.agents(board)) }
                case .failure(let error):
                    return .finished(
                        .failed(Failure(.protocolViolation, "the computer broke the agents board: \(error)")))
                }
            case .control:
                continue
            case .session(let message):
                if let end = handle(message) { return end }
            }
        }
        return nil
    }

    private func handle(_ message: SessionMessage) -> ServeEnd? {
        let outcome = session.withLock { $0.receive(message) }
        switch outcome {
        case .none:
            return nil
        case .started(let kind):
            // The computer keeps to at most the window `started` names; the path's share of it
            // starts small and grows as the path shows it carries more.
            var window = PathWindow(ceiling: session.withLock { $0.flow.window })
            let stream = session.withLock { state in
                state.setWindow(window.current)
                return state.stream
            }
            outgoing.withLock { out in
                // A session opened afresh counts its input from 0, like the computer does.
                if kind == .afresh { out.inputLog.reset() }
                out.stream = stream
                if let rtt = out.liveness?.smoothedRTT { window.roundTrip(rtt) }
                if window.current < window.ceiling { out.windowChange = window.current }
                out.window = window
                flush(&out)
            }
            switch kind {
            case .first: emit(.started)
            case .resumed: emit(.resumed)
            case .afresh: break  // told with attachAfresh already
            }
            return nil
        case .output(let bytes):
            if let sink = configuration.outputSink {
                guard sink(bytes) else {
                    return .finished(.failed(Failure(.local, "the terminal's output could not be written")))
                }
                consumed(bytes.count)
            } else {
                emit(.output(bytes))
            }
            return nil
        case .exited(let status, let signal):
            // The computer keeps an ended session until told: its exit may have been lost.
            let stream = session.withLock { $0.stream }
            outgoing.withLock { out in
                try? out.channel?.send(SessionMessage.close(stream: stream).bytes)
                out.stream = nil
            }
            return .finished(.exited(status: status, signal: signal))
        case .attachAfresh(let text):
            emit(.attachedAfresh(reason: text))
            let attach = session.withLock { state in
                let size = control.withLock { $0.size }
                return state.attachMessage(cols: size.cols, rows: size.rows)
            }
            outgoing.withLock { out in
                out.stream = nil
                out.credit = nil
                _ = out.budget.take(now: MonotonicClock.now)
                try? out.channel?.send(attach.bytes)
            }
            return nil
        case .refused(let reason, let text):
            let kind: Failure.Kind = reason == .unknownAgent ? .agentNotFound : .sessionRefused
            return .finished(.failed(Failure(kind, "the computer refused the session: \(text)")))
        case .broken(let why):
            return .finished(.failed(Failure(.protocolViolation, "the computer broke the session protocol: \(why)")))
        }
    }

    /// While connection `generation` runs over the relay, tries the home addresses every
    /// `homeProbeInterval` on a thread of its own; a home channel that comes up is handed to the
    /// connection's thread (which resumes on it) by closing the relay connection.
    private func probeHome(generation: Int) {
        guard let interval = configuration.homeProbeInterval, configuration.roads.choice == .any else { return }
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: interval)
                let home = control.withLock { control -> [HomeAddress]? in
                    guard control.generation == generation, !control.cancelled, !control.finished else { return nil }
                    return control.home
                }
                guard let home else { return }
                guard !home.isEmpty else { continue }
                var roads = configuration.roads
                roads.home = home
                roads.choice = .home
                guard let established = try? roads.connect() else { continue }
                let (handed, relay) = control.withLock { control -> (Bool, (any FramePipe)?) in
                    guard control.generation == generation, !control.cancelled, control.switchTo == nil else {
                        return (false, nil)
                    }
                    control.switchTo = (established, .homeIsBack)
                    return (true, control.connection)
                }
                guard handed else {
                    established.channel.connection.close()
                    return
                }
                // Still on the relay: closing it hands over. Already dropped: cut the backoff short.
                if let relay { relay.close() } else { wakeUp.signal() }
                return
            }
        }
        thread.name = "home probe"
        thread.start()
    }

    /// The end a connection failure means, or nil to retry.
    private func stop(after failure: DeviceRelayConnection.Failure, attempt: Int) -> Termination? {
        switch failure {
        case .pairingGone: return .failed(Failure(.pairingGone, failure.description))
        case .quotaExceeded, .displaced, .refused: return .failed(Failure(.relayRefused, failure.description))
        case .unavailable(let why), .resharding(relay: let why):
            // Nothing ran yet and this was the first try: say so at once, as ssh does.
            if attempt == 0, !wasUp { return .failed(Failure(.unreachable, why)) }
            return nil
        case .computerOffline:
            // herdr-host parks again right after each device leaves: a connect just after another
            // one ended may find it between two parks, so the first try gets a few quick retries.
            if !wasUp, attempt >= Self.offlineRetries.count {
                return .failed(Failure(.unreachable, failure.description))
            }
            return nil
        }
    }

    /// A relay cluster moving the room: wait a fraction of a second (not a backoff step), up to
    /// RelayLink's number of reshards in a row; false once they are used up or on cancel.
    private func waitSoon(_ reshards: inout Int, reason: String) -> Bool {
        guard reshards < RelayLink.soonRetries, !isCancelled else { return false }
        reshards += 1
        // A session under way says why the screen is still; a first connect just takes a moment.
        if wasUp { emit(.reconnecting(attempt: reshards, reason: reason)) }
        _ = wakeUp.wait(timeout: .now() + RelayBackoff.soonDelay(random: Double.random(in: 0...1)))
        return !isCancelled
    }

    private func giveUp(attempt: Int, lastReason: String) -> Failure {
        // No attempt at all: the policy does not reconnect (`--no-reattach`).
        if attempt <= 1 { return Failure(.connectionLost, "the link dropped (\(lastReason)); reconnecting is off") }
        return Failure(.connectionLost, "gave up reconnecting after \(attempt - 1) attempts; last: \(lastReason)")
    }

    /// Waits before reconnect attempt `attempt` (not at all when `atOnce`); false when the
    /// policy gives up or on cancel.
    private func backOff(attempt: Int, reason: String, atOnce: Bool = false) -> Bool {
        guard let delay = configuration.retryDelay(attempt), !isCancelled else { return false }
        emit(.reconnecting(attempt: attempt, reason: reason))
        if !atOnce { _ = wakeUp.wait(timeout: .now() + delay) }
        return !isCancelled
    }

    private var isCancelled: Bool { control.withLock { $0.cancelled } }

    private func emit(_ event: Event) {
        let finished = control.withLock { $0.finished }
        if !finished { deliver(event) }
    }

    private func deliver(_ event: Event) {
        if let handler = handler.withLock({ $0 }) { handler(event) } else { continuation.yield(event) }
    }

    private func finish(_ termination: Termination) {
        let (first, termination) = control.withLock { control in
            defer { control.finished = true }
            return (!control.finished, control.ending ?? termination)
        }
        guard first else { return }
        deliver(.finished(termination))
        continuation.finish()
    }
}
