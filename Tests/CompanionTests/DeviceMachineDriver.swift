import HerdrAgents
import PeerGate
import Testing

@testable import CompanionDevice
@testable import NetworkPath
@testable import NoiseRoads
@testable import SessionProtocol

/// Drives a `DeviceConnectionMachine` with a fake clock: no socket, no thread, no sleep. It plays
/// the shell (attempts end when the test says, ticks come at `nextWake`) and the computer (the
/// messages it would send).
struct DeviceMachineDriver {
    typealias Machine = DeviceConnectionMachine
    typealias Action = Machine.Action

    static let relay = NoiseRoad.relay(host: "relay.test")
    static let homeAddress = try! HomeAddress(parsing: "[fd12::7]:4610")
    static let home = NoiseRoad.home(homeAddress)
    static let token = [UInt8](repeating: 7, count: SessionMessage.tokenSize)

    var machine: Machine
    var now = 1000.0
    /// Every action so far, in order.
    var log: [Action] = []

    init(_ configure: (inout Machine.Settings) -> Void = { _ in }) {
        var settings = Machine.Settings(attach: .session("main"), cols: 80, rows: 24)
        settings.home = [Self.homeAddress]
        settings.random = { 0.5 }
        // The home probe's own test turns it on: elsewhere its attempts would only be noise.
        settings.homeProbeInterval = nil
        configure(&settings)
        machine = Machine(settings)
    }

    @discardableResult
    mutating func handle(_ input: Machine.Input) -> [Action] {
        let actions = machine.handle(input, now: now)
        log += actions
        return actions
    }

    /// Ticks at every wake up to `time` (the clock then reads `time`): what they did.
    @discardableResult
    mutating func run(until time: Double) -> [Action] {
        var actions: [Action] = []
        for _ in 0..<10_000 {
            guard let wake = machine.nextWake, wake <= time else { break }
            now = max(now, wake)
            actions += handle(.tick)
        }
        now = max(now, time)
        return actions
    }

    @discardableResult
    mutating func advance(_ seconds: Double) -> [Action] { run(until: now + seconds) }

    // MARK: - The shell's part

    /// Starts, and ends its first attempt with a connection over `road`: its id.
    mutating func connect(over road: NoiseRoad = relay) -> Machine.AttemptID {
        let started = handle(.start)
        let id = Self.attempts(in: started)[0].id
        handle(.attemptEnded(id, .success(.init(road: road, registeredNow: false))))
        return id
    }

    /// The attempt the actions started (the last one), ended with a connection over `road`.
    @discardableResult
    mutating func arrive(_ actions: [Action], over road: NoiseRoad = relay) -> [Action] {
        guard let id = Self.attempts(in: actions).last?.id else {
            Issue.record("no attempt started in \(actions)")
            return []
        }
        return handle(.attemptEnded(id, .success(.init(road: road, registeredNow: false))))
    }

    // MARK: - The computer's part

    /// Messages from the computer on connection `id`.
    @discardableResult
    mutating func computer(_ id: Machine.AttemptID, _ messages: [[UInt8]]) -> [Action] {
        handle(.frame(id, messages: messages))
    }

    /// The computer starts (or resumes) the session the device last attached on `id`.
    @discardableResult
    mutating func started(on id: Machine.AttemptID, offset: UInt64 = 0, window: Int = 4 * 1024 * 1024) -> [Action] {
        let stream = machine.session.stream
        return computer(
            id, [SessionMessage.started(stream: stream, token: Self.token, offset: offset, window: window).bytes])
    }

    // MARK: - Reading actions

    static func attempts(in actions: [Action]) -> [(id: Machine.AttemptID, attempt: Machine.RoadAttempt)] {
        actions.compactMap { action in
            if case .connect(let id, let attempt) = action { return (id, attempt) }
            return nil
        }
    }

    /// The channel messages the actions sent, parsed.
    static func sent(_ actions: [Action]) -> [ChannelMessage] {
        actions.compactMap { action in
            if case .send(let bytes) = action { return try? ChannelMessage(parsing: bytes) }
            return nil
        }
    }

    /// The session messages the actions sent.
    static func sessionSent(_ actions: [Action]) -> [SessionMessage] {
        sent(actions).compactMap { message in
            if case .session(let message) = message { return message }
            return nil
        }
    }

    /// The input bytes the actions sent.
    static func input(_ actions: [Action]) -> [UInt8] {
        sessionSent(actions).flatMap { message -> [UInt8] in
            if case .input(_, let data) = message { return data }
            return []
        }
    }

    static func pings(_ actions: [Action]) -> [UInt32] {
        sent(actions).compactMap { message in
            if case .control(.ping(let id)) = message { return id }
            return nil
        }
    }

    static func events(_ actions: [Action]) -> [Machine.Event] {
        actions.compactMap { action in
            if case .emit(let event) = action { return event }
            return nil
        }
    }

    static func finish(_ actions: [Action]) -> Machine.Termination? {
        for case .finish(let termination) in actions { return termination }
        return nil
    }

    static func change(_ description: String, dead: Bool) -> PathChange {
        PathChange(description: description, oldPathIsDead: dead)
    }
}
