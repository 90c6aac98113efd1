import CompanionDevice
import Foundation
import HerdrAgents
import NoiseRoads

/// A computer's board on the Noise roads: a `DeviceConnection` that attaches nothing
/// and watches agents (docs/companion.md, "Agents"). It reconnects as `connect` does; a
/// connection that fails outright (the first try, or after giving up) is made again after
/// `retryDelay`, unless what failed will not change by itself (the pairing gone, the relay
/// refusing, a herdr-host that sends no board).
///
/// A relay room admits one connection of a device at a time: `suspend` hands the computer over
/// to another connection of this device (an agent's terminal opened from `watch`), which may
/// feed its boards here meanwhile (`feed`); `resume` takes it back.
@MainActor
public final class CompanionBoardWatch: ComputerBoardWatch {
    public let profile: HostProfile
    public private(set) var state: ComputerBoardState = .connecting
    public var onChange: (@MainActor (ComputerBoardState) -> Void)?
    private let store: HostStore
    private let options: BoardWatchOptions
    private var connection: DeviceConnection?
    /// Counts connections, so events of an old one are ignored.
    private var generation = 0
    private var failures = 0
    private var restart: Task<Void, Never>?
    private var stopped = false
    /// The road of the connection in use.
    private var road: NoiseRoad?

    init(profile: HostProfile, store: HostStore, options: BoardWatchOptions) {
        self.profile = profile
        self.store = store
        self.options = options
    }

    public func start() {
        stopped = false
        guard connection == nil, restart == nil else { return }
        connect()
    }

    public func stop() {
        onChange = nil
        halt()
        stopped = true
    }

    /// Stops this watch's connection and waits until its socket is gone (bounded by the
    /// connection's time limits), so that another connection of this device can take the room.
    public func suspend() async {
        let connection = connection
        halt()
        guard let connection else { return }
        let limit = options.session.connectTimeout.seconds + 1
        _ = await Task.detached { connection.waitUntilStopped(timeout: limit) }.value
    }

    /// Follows again after `suspend`.
    public func resume() {
        guard !stopped, connection == nil else { return }
        connect()
    }

    /// A board that reached this device another way (the connection of an agent's terminal).
    public func feed(_ board: AgentBoard, road: String) {
        set(.live(board, road: road))
    }

    private func halt() {
        generation += 1
        restart?.cancel()
        restart = nil
        connection?.cancel()
        connection = nil
    }

    private func set(_ state: ComputerBoardState) {
        self.state = state
        onChange?(state)
    }

    private func connect() {
        generation += 1
        let generation = generation
        var configuration: DeviceConnection.Configuration
        do {
            configuration = try CompanionSetup.configuration(
                for: profile, store: store, options: options.session, attach: nil, cols: 80, rows: 24)
        } catch {
            return set(.lost(ComputerProblem(.failed, error.description), retrying: false))
        }
        configuration.watchAgents = true
        // A connection up without a board within `boardTimeout`: a herdr-host that does not know
        // the family ignored the request.
        let seconds = options.boardTimeout
        configuration.boardWait = (
            seconds,
            .init(
                .agentsUnavailable,
                "the computer sent no agents board within \(Int(seconds)) s: its herdr-host is older than the agents family (update it)"
            )
        )
        // Reading once takes what the first connection gives; watching, a drop is reconnected as
        // `connect` does, and then again and again (a computer away all night comes back).
        if options.once {
            configuration.retryDelay = { _ in nil }
            configuration.homeProbeInterval = nil
        } else {
            configuration.retryDelay = { attempt in min(0.5 * Double(1 << min(attempt - 1, 5)), 15) }
        }
        let connection = DeviceConnection(configuration)
        self.connection = connection
        connection.start(
            onEvent: MainQueueEvents.handler { [weak self] event in
                guard let self, generation == self.generation else { return }
                self.handle(event)
            })
    }

    private func handle(_ event: DeviceConnection.Event) {
        switch event {
        case .connected(let road):
            self.road = road
            CompanionSetup.noteRoadWorked(road, of: profile, in: store)
        case .moved(let road, _):
            self.road = road
            CompanionSetup.noteRoadWorked(road, of: profile, in: store)
        case .homeAddresses(let addresses):
            CompanionSetup.keepHomeAddresses(addresses, of: profile, in: store)
        case .registered:
            CompanionSetup.markRegistered(profile, in: store)
        case .agents(let board):
            failures = 0
            set(.live(board, road: Self.roadWord(road)))
        case .reconnecting(_, let reason):
            set(.lost(ComputerProblem(.unreachable, "the link dropped (\(reason)); reconnecting"), retrying: true))
        case .finished(.failed(let failure)):
            connection = nil
            failed(Self.problem(failure))
        case .finished, .started, .resumed, .attachedAfresh:
            break
        }
    }

    private func failed(_ problem: ComputerProblem) {
        guard !options.once, !problem.isPermanent, !stopped else { return set(.lost(problem, retrying: false)) }
        failures += 1
        set(.lost(problem, retrying: true))
        let delay = options.retryDelay(failures)
        restart = Task { [weak self] in
            guard (try? await Task.sleep(for: .seconds(delay))) != nil, let self else { return }
            self.restart = nil
            self.connect()
        }
    }

    static func problem(_ failure: DeviceConnection.Failure) -> ComputerProblem {
        let kind: ComputerProblem.Kind =
            switch failure.kind {
            case .pairingGone: .pairingGone
            case .unreachable, .connectionLost: .unreachable
            case .relayRefused: .relayRefused
            case .protocolViolation: .protocolViolation
            // Only the board's wait ends a watch that attaches nothing this way.
            case .agentsUnavailable: .olderHerdrHost
            case .sessionRefused, .agentNotFound, .local: .failed
            }
        return ComputerProblem(kind, failure.message)
    }

    /// `home` or `relay`.
    static func roadWord(_ road: NoiseRoad?) -> String {
        road?.isHome == true ? "home" : "relay"
    }
}
