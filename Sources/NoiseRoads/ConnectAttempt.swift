import NetworkPath
import Plumbing
import Synchronization

/// One attempt over the roads (a connect, a race, a probe) that another thread may call off:
/// what it has open is abandoned at once, and the attempt fails. The device calls off an attempt
/// the network moved under (`standsAfterNetworkChange`): a socket whose SYN or handshake left from
/// an address, or over a route, that is gone would otherwise wait out its time limit (issue 41).
public final class ConnectAttempt: Sendable {
    private struct State {
        var cancelled = false
        var pipes: [any FramePipe] = []
    }

    private let state = Mutex(State())

    /// An attempt not called off.
    public init() {}

    /// Whether it was called off.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Keeps `pipe` to abandon on `cancel`; false (the pipe abandoned) when already cancelled.
    @discardableResult
    func holds(_ pipe: any FramePipe) -> Bool {
        let kept = state.withLock { state -> Bool in
            guard !state.cancelled else { return false }
            state.pipes.append(pipe)
            return true
        }
        if !kept { pipe.abandon() }
        return kept
    }

    /// Calls the attempt off: its pipes are abandoned, and it fails as soon as it notices.
    public func cancel() {
        let pipes = state.withLock { state -> [any FramePipe] in
            state.cancelled = true
            defer { state.pipes = [] }
            return state.pipes
        }
        for pipe in pipes { pipe.abandon() }
    }

    /// Whether the attempt still stands after the network changed: none of its sockets lost its
    /// address or its route (`SocketEndpoints.change`), whether connected or still connecting. An
    /// attempt with no socket yet stands: it connects on the network as it is now.
    public func standsAfterNetworkChange() -> (stands: Bool, why: String) {
        let pipes = state.withLock { $0.pipes }
        for pipe in pipes {
            if let change = pipe.socketEndpoints?.change() { return (false, change.description) }
        }
        return (true, "no socket of it moved")
    }
}
