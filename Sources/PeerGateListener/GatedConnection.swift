import Glibc
import PeerGate
import Synchronization

/// An admitted connection: the accepted socket (blocking, close-on-exec), the gate's decision,
/// and the listener's status document. Owns the descriptor and closes it in deinit unless it
/// was taken with `takeDescriptor()`.
public final class GatedConnection: Sendable {
    /// The policy's admission (`decision.link` says how the peer arrived).
    public let decision: PeerDecision
    /// The interface holding the connection's local address, when the listener looked it up
    /// (only when it refuses some interface).
    public let localInterface: String?
    private let descriptor: Mutex<Int32>
    private let statusSource: @Sendable () -> PeerGateStatus

    init(
        fd: Int32, decision: PeerDecision, localInterface: String?, status: @escaping @Sendable () -> PeerGateStatus
    ) {
        self.descriptor = Mutex(fd)
        self.decision = decision
        self.localInterface = localInterface
        self.statusSource = status
    }

    deinit { close() }

    /// The socket, or -1 once taken or closed. Only use it while this object lives.
    public var fd: Int32 { descriptor.withLock { $0 } }

    /// Hands the socket over: the caller closes it; this object forgets it. -1 if already gone.
    public func takeDescriptor() -> Int32 {
        descriptor.withLock { fd in
            defer { fd = -1 }
            return fd
        }
    }

    /// Closes the socket now (idempotent).
    public func close() {
        let fd = takeDescriptor()
        if fd >= 0 { _ = Glibc.close(fd) }
    }

    /// The listener's status document as of now.
    public var status: PeerGateStatus { statusSource() }
}
