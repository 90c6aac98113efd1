import Foundation
import HerdrAgents

/// Where one computer's agents board stands, as a device follows it.
public enum ComputerBoardState: Sendable, Equatable {
    /// Not read yet.
    case connecting
    /// The board as last read, and the road it came over (`ssh`, `home`, `relay`).
    case live(AgentBoard, road: String)
    /// No board now: why, and whether the watch is trying again.
    case lost(ComputerProblem, retrying: Bool)
}

/// How a computer's board is followed.
public struct BoardWatchOptions: Sendable {
    /// Read one board and stop (`agents`, `sessions`): no retry after a failure.
    public var once = false
    /// SSH road: seconds between two readings of herdr while watching.
    public var pollInterval: Double = 2
    /// SSH road: seconds one herdr request may take; a herdr that takes longer has its connection
    /// given up (and, while watching, made again).
    public var requestTimeout: Double = 10
    /// Noise roads: seconds from a connection being up to its first board; past it the computer's
    /// herdr-host is taken for one older than the agents family.
    public var boardTimeout: Double = 10
    /// While watching: seconds before attempt `n` (from 1) to connect again after a failure.
    public var retryDelay: @Sendable (Int) -> Double = { attempt in min(Double(1 << min(attempt - 1, 5)), 30) }
    /// Time limits, keys and roads of the connections, as `connect` has them.
    public var session = TerminalSessionOptions()

    public init() {}
}

/// One computer's agents board followed (docs/agents.md): on the SSH road by reading herdr over
/// one kept SSH connection (`herdr session list --json`, `herdr api snapshot`) every
/// `pollInterval`; on the Noise roads by watching the board the computer's herdr-host sends.
/// Reconnects on its own while watching. `onChange` hears each new state.
@MainActor
public protocol ComputerBoardWatch: AnyObject {
    var profile: HostProfile { get }
    var state: ComputerBoardState { get }
    var onChange: (@MainActor (ComputerBoardState) -> Void)? { get set }
    func start()
    /// Stops following; no `onChange` after it.
    func stop()
}

@MainActor
public enum ComputerBoards {
    /// A watch of `profile`'s board over its road (SSH, or the Noise roads for a companion host).
    public static func watch(_ profile: HostProfile, store: HostStore, options: BoardWatchOptions)
        -> any ComputerBoardWatch
    {
        profile.companion == nil
            ? SSHBoardWatch(profile: profile, store: store, options: options)
            : CompanionBoardWatch(profile: profile, store: store, options: options)
    }

    /// One board of `profile`, or why there is none, within `limit` seconds (`agents`, `sessions`).
    public static func read(_ profile: HostProfile, store: HostStore, limit: Double, options: BoardWatchOptions)
        async -> Result<(board: AgentBoard, road: String), ComputerProblem>
    {
        var options = options
        options.once = true
        let watch = watch(profile, store: store, options: options)
        let first = StartSignal<Result<(board: AgentBoard, road: String), ComputerProblem>>()
        watch.onChange = { state in
            switch state {
            case .connecting: break
            case .live(let board, let road): first.resume(.success((board, road)))
            case .lost(let problem, let retrying): if !retrying { first.resume(.failure(problem)) }
            }
        }
        let timer = Task { @MainActor in
            guard (try? await Task.sleep(for: .seconds(limit))) != nil else { return }
            let seconds = limit == limit.rounded() ? "\(Int(limit)) s" : "\(limit) s"
            first.resume(.failure(ComputerProblem(.timedOut, "no answer within \(seconds)")))
        }
        watch.start()
        let outcome = await first.value
        timer.cancel()
        watch.stop()
        return outcome
    }
}
