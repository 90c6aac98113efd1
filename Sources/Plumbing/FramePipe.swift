import NetworkPath
import RelayProtocol

/// A connection that carries whole frames both ways, each one Noise message of the companion
/// channel: a relay room's WebSocket (`RelayConnection`), or the home road's TCP stream with a
/// 16-bit length before each message (`HomeConnection`). The channel above does not care which.
///
/// `send` never blocks and is thread-safe; `deliver` hands every event, in order, to one handler
/// on the pipe's own thread, `ended` last; `close` returns at once.
public protocol FramePipe: AnyObject, Sendable {
    /// Sends one frame, or throws (`backpressure`, `frameTooLarge`, `closed`).
    func send(_ frame: [UInt8]) throws(ConnectionError)
    /// The next event, blocking at most `timeout` seconds; nil on timeout or after `ended`.
    func receive(timeout: Double?) -> FramePipeEvent?
    /// Every event from now on to `handler` on the pipe's thread instead of `receive`.
    func deliver(to handler: @escaping @Sendable (FramePipeEvent) -> Void)
    /// Bytes sent and not yet handed to the socket.
    var queuedByteCount: Int { get }
    /// Both ends of the TCP socket underneath, once its connect was issued (to notice the network
    /// moving away from under it, even while it connects).
    var socketEndpoints: SocketEndpoints? { get }
    /// Ends the pipe (idempotent; returns at once).
    func close()
    /// Ends the pipe at once: what is queued is dropped and no closing handshake is waited for.
    /// For a path believed dead, or one a new connection has replaced, where waiting for the peer
    /// would only hold up what comes next (idempotent; returns at once).
    func abandon()
    /// Blocks until the pipe has ended, at most `timeout` seconds.
    @discardableResult func waitUntilEnded(timeout: Double?) -> FramePipeEnd?
}

/// How a frame pipe ended.
public enum FramePipeEnd: Hashable, Sendable, CustomStringConvertible {
    /// The relay closed the WebSocket with this code and reason (`1000 room deleted`, …); 1005
    /// with an empty reason when its close frame carried no code. Never on the home road.
    case closedByRelay(RelayClose)
    /// `close()` was called (or the connection was dropped) and the close completed or timed out.
    case closedLocally
    /// The transport broke, the peer stopped answering pings, or it broke the protocol.
    case failed(ConnectionError)

    public var description: String {
        switch self {
        case .closedByRelay(let close): "closed by the relay: \(close)"
        case .closedLocally: "closed"
        case .failed(let error): "failed: \(error)"
        }
    }
}

/// What a pipe delivers, in order: whole frames, then exactly one `ended`.
public enum FramePipeEvent: Hashable, Sendable {
    case message([UInt8])
    case ended(FramePipeEnd)
}
