import NetworkPath
import Plumbing
import Synchronization

/// One connect attempt (a race's, or the reconnect loop's) that another thread may call off
/// because the network moved under it: what it has open is abandoned at once, and the attempt
/// fails. An attempt in flight when the network changes is kept only when its socket is connected
/// and still carried the way it was (`SocketEndpoints.change`); one still connecting may have
/// sent its SYN from an address, or over a route, that is gone (issue 41, item 6).
public final class ConnectAttempt: Sendable {
    private struct State {
        var cancelled = false
        var pipes: [any FramePipe] = []
    }

    private let state = Mutex(State())

    public init() {}

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

    /// Whether the attempt still stands after the network changed: it has a connected socket
    /// (not one still connecting, whose SYN may have left from a path now gone) whose address and
    /// route are as they were.
    public func standsAfterNetworkChange() -> (stands: Bool, why: String) {
        let pipes = state.withLock { $0.pipes }
        guard !pipes.isEmpty else { return (false, "no socket yet") }
        for pipe in pipes {
            guard let endpoints = pipe.socketEndpoints else { return (false, "its socket is still connecting") }
            if let change = endpoints.change() { return (false, change.description) }
        }
        return (true, "its socket is connected and still carried")
    }
}
