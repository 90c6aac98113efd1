import Dispatch
import EndToEndChannel
import Foundation
import NetworkPath
import NoiseRoads
import Plumbing
import RelayClient
import SessionProtocol
import Synchronization

/// A terminal session on the computer over the Noise roads (home network or relay), on the
/// device: the thin shell that runs `DeviceConnectionMachine` (docs/companion.md, "The session
/// protocol"; docs/architecture.md). The machine decides everything; this carries it out: each
/// attempt over the roads (`DeviceRoads`) on a thread of its own, the channel of the connection in
/// use (its cipher states), the kernel's news (`RouteMonitor`), a clock thread for `nextWake`.
///
/// Inputs are handled one at a time under one lock by whichever thread brings them (a keystroke
/// on the caller's thread, a frame on its connection's thread, a tick on the clock thread:
/// `CombiningQueue`), so a keystroke and an echo cost no thread handoff. Sends are encrypted
/// under that lock, in the machine's order; output writes and events go out in order once the
/// lock is let go, so a terminal that blocks holds up nothing but more output.
///
/// It can also watch the computer's agents (docs/companion.md, "Agents"): each connection then
/// asks for the board, and every board put together arrives as an `agents` event. A connection
/// may attach nothing at first (`attach` nil: it only watches) and open a session later on the
/// same channel (`open(_:)`), as `connect --agent` does once the board named the agent.
public final class DeviceConnection: Sendable {
    public typealias Attach = DeviceConnectionMachine.Attach
    public typealias Event = DeviceConnectionMachine.Event
    public typealias MoveReason = DeviceConnectionMachine.MoveReason
    public typealias Termination = DeviceConnectionMachine.Termination
    public typealias Failure = DeviceConnectionMachine.Failure

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
        /// Where output goes, written from the thread that received it (no thread handoff per
        /// echo), in order; once it returns, the bytes count as on the screen. It may block (the
        /// computer then waits in the window); false ends the session. Nil: output is dropped (a
        /// connection that only watches agents never gets any).
        public var outputSink: (@Sendable ([UInt8]) -> Bool)?
        /// Attach as a screen session: the computer keeps the terminal and sends screens.
        public var screen = false
        /// Where a screen session's screens go, from the thread that received them, in order,
        /// each complete; false ends the session. Nil: dropped.
        public var screenSink: (@Sendable (ScreenFrame) -> Bool)?
        /// While watching agents with nothing attached, each connection waits this long for its
        /// first board, then ends with this failure.
        public var boardWait: (seconds: Double, failure: Failure)?

        public init(roads: DeviceRoads, attach: Attach?, cols: Int, rows: Int) {
            self.roads = roads
            self.attach = attach
            self.cols = cols
            self.rows = rows
        }

        var machineSettings: DeviceConnectionMachine.Settings {
            var settings = DeviceConnectionMachine.Settings(attach: attach, cols: cols, rows: rows)
            settings.watchAgents = watchAgents
            settings.screen = screen
            settings.window = window
            settings.retryDelay = retryDelay
            settings.homeProbeInterval = homeProbeInterval
            settings.choice = roads.choice
            settings.hasRelay = roads.relay != nil
            settings.home = roads.home
            settings.boardWait = boardWait
            return settings
        }
    }

    /// The events, in order; the stream ends after `finished`.
    public let events: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    /// Where events go instead of `events`, when `start` was given a handler.
    private let handler = Mutex<(@Sendable (Event) -> Void)?>(nil)
    private let configuration: Configuration
    private let state: ShellState
    private let steps: CombiningQueue<Step>
    /// Output writes and events, in the machine's order, outside the steps' lock.
    private let outbox: CombiningQueue<Effect>
    /// Wakes the clock thread: the machine's next wake moved closer, or it finished.
    private let clockWake = DispatchSemaphore(value: 0)
    /// The machine's next wake (a `Double`'s bits) as the last batch left it, and whether the
    /// clock thread may end (finished, every attempt reported): read by the clock thread without
    /// the steps' lock, so planning again never contends with a keystroke or an echo.
    private let plannedWake = Atomic<UInt64>(Double.infinity.bitPattern)
    private let clockDone = Atomic(false)
    /// Signalled once the clock thread has returned (finished, every attempt ended).
    private let threadEnded = DispatchSemaphore(value: 0)
    private let started = Atomic(false)

    private typealias AttemptID = DeviceConnectionMachine.AttemptID

    private enum Step: Sendable {
        case input(DeviceConnectionMachine.Input)
        case frame(AttemptID, [UInt8])
        case pipeEnded(AttemptID, FramePipeEnd)
        case attemptDone(AttemptID, Result<RoadConnection, RoadFailure>)
        case networkNews
    }

    private enum Effect: Sendable {
        case write([UInt8])
        case draw(ScreenFrame)
        case event(Event)
    }

    /// The connection in use: its channel is used in place (a copy would share its cipher states,
    /// and each message would then pay for a fresh cipher context).
    private struct InUse {
        let id: AttemptID
        let road: NoiseRoad
        var channel: FramedChannel
    }

    /// What the steps' handler owns; touched only with the steps' lock held.
    private final class ShellState: @unchecked Sendable {
        var machine: DeviceConnectionMachine
        var current: InUse?
        /// Connections up that the machine has not adopted or closed yet.
        var arrived: [AttemptID: RoadConnection] = [:]
        /// Attempts whose threads have not reported yet, each with its handle to call it off.
        var running: [AttemptID: ConnectAttempt] = [:]
        var monitor: RouteMonitor?

        init(machine: DeviceConnectionMachine) { self.machine = machine }
    }

    public init(_ configuration: Configuration) {
        self.configuration = configuration
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        state = ShellState(machine: DeviceConnectionMachine(configuration.machineSettings))
        // Both queues' handlers reach back to `self`, which owns them: set up through boxes.
        let stepsBox = Box<DeviceConnection>()
        let outboxBox = Box<DeviceConnection>()
        outbox = CombiningQueue { batch in outboxBox.value?.carryOut(batch) }
        steps = CombiningQueue(
            handle: { batch in stepsBox.value?.handle(batch) },
            afterward: { outboxBox.value?.outbox.drain() })
        stepsBox.value = self
        outboxBox.value = self
    }

    /// Starts connecting (once). With `onEvent`, the events go to it, in order, instead of to
    /// `events` (which then only ends): a caller with a queue of its own skips the stream's task hop.
    public func start(onEvent: (@Sendable (Event) -> Void)? = nil) {
        guard !started.exchange(true, ordering: .acquiringAndReleasing) else { return }
        handler.withLock { $0 = onEvent }
        // The kernel's news of addresses and routes; without it (no netlink here) liveness alone
        // notices a network that moved.
        let monitor = try? RouteMonitor { [self] in steps.push(.networkNews) }
        steps.withLock { state.monitor = monitor }
        let thread = Thread { [self] in
            runClock()
            threadEnded.signal()
        }
        thread.name = "device connection"
        thread.start()
        steps.push(.input(.start))
    }

    // MARK: - From the caller (any thread)

    /// Blocks until the connection has stopped, at most `timeout` seconds: after `cancel`, the
    /// moment no attempt of this connection is left to take the room at a relay from a
    /// connection made next (an attempt under way when cancelled finishes first). True when it
    /// stopped (or never started).
    public func waitUntilStopped(timeout: Double) -> Bool {
        guard started.load(ordering: .acquiring) else { return true }
        guard threadEnded.wait(timeout: .now() + timeout) == .success else { return false }
        threadEnded.signal()
        return true
    }

    /// Keystrokes for the session; sent at once when the frame budget allows.
    public func send(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        steps.push(.input(.keys(bytes)))
    }

    /// The end of input (the terminal's EOF character on the computer).
    public func sendEOF() { steps.push(.input(.endOfInput)) }

    /// The window size, now and for every later resume.
    public func resize(cols: Int, rows: Int) { steps.push(.input(.resize(cols: cols, rows: rows))) }

    /// Attaches `attach` on the current connection (and resumes it on later ones), when nothing is
    /// attached yet; ignored otherwise.
    public func open(_ attach: Attach) { steps.push(.input(.open(attach))) }

    /// Starts or stops the agents board on this connection and the later ones.
    public func watchAgents(_ watch: Bool) { steps.push(.input(.watchAgents(watch))) }

    /// Ends the connection with `failure` (what the caller found: no such agent, say) instead of
    /// `cancelled`; the computer is told to hang up a session that runs.
    public func end(_ failure: Failure) { steps.push(.input(.stop(.failed(failure)))) }

    /// Ends the session: the computer is told to hang it up, and `finished(.cancelled)` follows.
    public func cancel() { steps.push(.input(.stop(.cancelled))) }

    // MARK: - The steps (with the lock held)

    private func handle(_ batch: [Step]) {
        for step in batch { handle(step) }
        // A deadline set here that the clock thread would sleep through, or the end.
        let next = state.machine.nextWake ?? .infinity
        let planned = Double(bitPattern: plannedWake.exchange(next.bitPattern, ordering: .acquiringAndReleasing))
        if state.machine.isFinished, state.running.isEmpty, !clockDone.load(ordering: .acquiring) {
            clockDone.store(true, ordering: .releasing)
            clockWake.signal()
        } else if next < planned - 0.001 {
            clockWake.signal()
        }
    }

    private func handle(_ step: Step) {
        switch step {
        case .input(let input):
            run(input)
        case .frame(let id, let frame):
            guard let current = state.current?.id, current == id else { return }
            let outputs: [FramedChannel.Output]
            do {
                outputs = try state.current?.channel.receive(frame) ?? []
            } catch {
                // A frame that fails authentication: the path is broken; start over.
                state.current?.channel.connection.close()
                let end = FramePipeEnd.failed(ConnectionError(.protocolViolation, "\(error)"))
                return ended(id, end)
            }
            var messages: [[UInt8]] = []
            for case .message(let bytes) in outputs { messages.append(bytes) }
            run(.frame(id, messages: messages))
        case .pipeEnded(let id, let end):
            guard state.current?.id == id else { return }
            ended(id, end)
        case .attemptDone(let id, let result):
            state.running[id] = nil
            run(.attemptEnded(id, arrival(of: id, result)))
        case .networkNews:
            let change = state.current?.channel.connection.socketEndpoints?.change()
            let stale = state.running.filter { !$0.value.standsAfterNetworkChange().stands }.keys
            run(.networkChanged(change, stale: Set(stale)))
        }
    }

    /// Keeps an attempt's connection until the machine adopts or closes it; what it is to the machine.
    private func arrival(
        of id: AttemptID, _ result: Result<RoadConnection, RoadFailure>
    ) -> Result<DeviceConnectionMachine.Arrival, RoadFailure> {
        switch result {
        case .success(let established):
            state.arrived[id] = established
            return .success(
                .init(
                    road: established.road, registeredNow: established.registeredNow,
                    servesScreenSessions: established.servesScreenSessions))
        case .failure(let failure):
            return .failure(failure)
        }
    }

    private func ended(_ id: AttemptID, _ end: FramePipeEnd) {
        guard let road = state.current?.road else { return }
        run(.ended(id, configuration.roads.classify(end, on: road)))
    }

    private func run(_ input: DeviceConnectionMachine.Input) {
        let actions = state.machine.handle(input, now: MonotonicClock.now)
        for action in actions { carryOut(action) }
    }

    private func carryOut(_ action: DeviceConnectionMachine.Action) {
        switch action {
        case .connect(let id, let attempt):
            startAttempt(id, attempt)
        case .cancel(let id):
            state.running[id]?.cancel()
        case .adopt(let id):
            adopt(id)
        case .close(let id):
            if state.current?.id == id {
                state.current?.channel.connection.close()
                state.current = nil
            } else {
                state.arrived.removeValue(forKey: id)?.channel.connection.close()
            }
        case .abandon(let id):
            if state.current?.id == id {
                state.current?.channel.connection.abandon()
                state.current = nil
            } else {
                state.arrived.removeValue(forKey: id)?.channel.connection.abandon()
            }
        case .send(let bytes):
            // A failed send means the connection is ending: its end comes as an event.
            try? state.current?.channel.send(bytes)
        case .write(let bytes):
            outbox.enqueue(.write(bytes))
        case .draw(let frame):
            outbox.enqueue(.draw(frame))
        case .emit(let event):
            outbox.enqueue(.event(event))
        case .finish(let termination):
            state.monitor?.stop()
            outbox.enqueue(.event(.finished(termination)))
        }
    }

    private func adopt(_ id: AttemptID) {
        guard let established = state.arrived.removeValue(forKey: id) else { return }
        let connection = established.channel.connection
        state.current = InUse(id: id, road: established.road, channel: established.channel)
        connection.deliver { [self] event in
            switch event {
            case .message(let frame): steps.push(.frame(id, frame))
            case .ended(let end): steps.push(.pipeEnded(id, end))
            }
        }
    }

    /// One attempt over the roads on a thread of its own (it blocks: TCP, admission, handshake).
    private func startAttempt(_ id: AttemptID, _ attempt: DeviceConnectionMachine.RoadAttempt) {
        let handle = ConnectAttempt()
        state.running[id] = handle
        var roads = configuration.roads
        roads.home = attempt.home
        if attempt.homeOnly { roads.choice = .home }
        let thread = Thread { [self, roads] in
            let result = Result { () throws(RoadFailure) in
                try roads.connect(homeFirst: attempt.homeFirst, attempt: handle)
            }
            steps.push(.attemptDone(id, result))
        }
        thread.name = "device attempt"
        thread.start()
    }

    // MARK: - Outside the lock

    private func carryOut(_ batch: [Effect]) {
        for effect in batch {
            switch effect {
            case .write(let bytes):
                let written = configuration.outputSink?(bytes) ?? true
                steps.push(.input(written ? .shown(bytes.count) : .outputFailed))
            case .draw(let frame):
                if configuration.screenSink?(frame) == false { steps.push(.input(.outputFailed)) }
            case .event(let event):
                if let handler = handler.withLock({ $0 }) { handler(event) } else { continuation.yield(event) }
                if case .finished = event { continuation.finish() }
            }
        }
    }

    /// Ticks the machine at its next wake until it finished and every attempt reported. Woken
    /// sooner (a deadline moved closer), it only plans again.
    private func runClock() {
        while !clockDone.load(ordering: .acquiring) {
            let wait = Double(bitPattern: plannedWake.load(ordering: .acquiring)) - MonotonicClock.now
            if wait > 0, clockWake.wait(timeout: .now() + min(wait, 3600)) == .success { continue }
            steps.push(.input(.tick))
        }
    }
}

/// A reference filled in after init, for closures that must reach the object being built.
private final class Box<Value: AnyObject>: @unchecked Sendable {
    weak var value: Value?
}
