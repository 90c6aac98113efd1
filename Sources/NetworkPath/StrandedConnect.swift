import Glibc
import PeerGate
import PeerGateListener

/// A connect under way that nothing will ever answer: the kernel gave its socket a loopback
/// source toward a peer elsewhere. Seen when a connect is issued in the moment between an
/// interface's addresses going and its link going down (issue 41: a race's connect left from ::1
/// and waited out its 10 s limit while the new network was already up); the peer's answer has no
/// way back. Checked once the connect is in progress, so the caller fails at once and moves on.
public enum StrandedConnect {
    /// Why the connect of socket `fd` toward `peer` can never complete, or nil while it may.
    public static func reason(fd: Int32, toward peer: UnsafePointer<sockaddr>) -> String? {
        guard let peerIP = SocketAddress(copying: peer)?.ip, PeerKind(peerIP) != .loopback,
            let localIP = SocketAddress.local(of: fd)?.ip, PeerKind(localIP) == .loopback
        else { return nil }
        return "the kernel gave the connection to \(peerIP) the loopback source \(localIP) (the network is changing)"
    }
}
