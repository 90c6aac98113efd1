import NetworkPath

/// A connection that carries whole frames both ways, each one Noise message of the companion
/// channel: a relay room's WebSocket (`RelayConnection`), or the home road's TCP stream with a
/// 16-bit length before each message (`HomeConnection`). The channel above does not care which.
///
/// `send` never blocks and is thread-safe; `deliver` hands every event, in order, to one handler
/// on the pipe's own thread, `ended` last; `close` returns at once.
public protocol FramePipe: AnyObject, Sendable {
    /// Sends one frame, or throws (`backpressure`, `frameTooLarge`, `closed`).
    func send(_ frame: [UInt8]) throws(RelayClientError)
    /// The next event, blocking at most `timeout` seconds; nil on timeout or after `ended`.
    func receive(timeout: Double?) -> RelayConnectionEvent?
    /// Every event from now on to `handler` on the pipe's thread instead of `receive`.
    func deliver(to handler: @escaping @Sendable (RelayConnectionEvent) -> Void)
    /// Bytes sent and not yet handed to the socket.
    var queuedByteCount: Int { get }
    /// Both ends of the TCP socket underneath, once it connected (to notice the network moving
    /// away from under it).
    var socketEndpoints: SocketEndpoints? { get }
    /// Ends the pipe (idempotent; returns at once).
    func close()
    /// Ends the pipe at once: what is queued is dropped and no closing handshake is waited for.
    /// For a path believed dead, or one a new connection has replaced, where waiting for the peer
    /// would only hold up what comes next (idempotent; returns at once).
    func abandon()
    /// Blocks until the pipe has ended, at most `timeout` seconds.
    @discardableResult func waitUntilEnded(timeout: Double?) -> RelayConnectionEnd?
}

extension RelayConnection: FramePipe {}
