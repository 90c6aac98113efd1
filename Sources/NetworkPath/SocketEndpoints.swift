import Glibc
import PeerGate
import PeerGateListener

/// Both ends of a connected TCP socket, taken when it connected, and whether the network still
/// carries it the way it did: its local address still on an interface, and the kernel still
/// choosing that address for the peer. When either changes (Wi-Fi gone, a new default route),
/// the connection is as good as dead even if nothing told it so yet.
public struct SocketEndpoints: Sendable {
    public let local: SocketAddress
    public let peer: SocketAddress

    /// The ends of socket `fd` while its connect toward `peer` is in progress: the source the
    /// kernel gave it and the peer it is meant for; nil when it has none (not IP).
    public init?(connecting fd: Int32, toward peer: UnsafePointer<sockaddr>) {
        guard let local = SocketAddress.local(of: fd), let peer = SocketAddress(copying: peer), local.ip != nil,
            peer.ip != nil
        else { return nil }
        self.local = local
        self.peer = peer
    }

    /// The ends of connected socket `fd`; nil when it has none (not connected, not IP).
    public init?(connected fd: Int32) {
        guard let local = SocketAddress.local(of: fd), let peer = SocketAddress.peer(of: fd),
            local.ip != nil, peer.ip != nil
        else { return nil }
        self.local = local
        self.peer = peer
    }

    /// What changed under the connection, or nil while the network still carries it.
    /// `interfaces` nil: read them now.
    public func change(interfaces: InterfaceAddresses? = nil) -> PathChange? {
        guard let localIP = local.ip?.unwrappingIPv4Mapped, let peerIP = peer.ip?.unwrappingIPv4Mapped else {
            return nil
        }
        if let interfaces = interfaces ?? InterfaceAddresses.current(),
            !interfaces.entries.contains(where: { $0.address == localIP })
        {
            return PathChange(description: "this device's address \(localIP) went away", oldPathIsDead: true)
        }
        switch Self.sourceToward(peer) {
        case .success(let source?) where source != localIP:
            return PathChange(
                description: "the way to \(peerIP) now leaves from \(source), not \(localIP)", oldPathIsDead: false)
        case .failure(let reason):
            return PathChange(description: "no way to \(peerIP) any more (\(reason))", oldPathIsDead: true)
        default:
            return nil
        }
    }

    /// The source address the kernel would choose for a new connection to `peer` now: a UDP
    /// socket's connect sends nothing and picks the route.
    static func sourceToward(_ peer: SocketAddress) -> Result<IPAddress?, PathError> {
        let fd = socket(peer.family, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .success(nil) }  // cannot tell; not a change
        defer { close(fd) }
        let connected = peer.withSockaddr { Glibc.connect(fd, $0, $1) }
        guard connected == 0 else {
            let code = errno
            if code == ENETUNREACH || code == EHOSTUNREACH || code == EADDRNOTAVAIL {
                return .failure(PathError(String(cString: strerror(code))))
            }
            return .success(nil)
        }
        return .success(SocketAddress.local(of: fd)?.ip.map(\.unwrappingIPv4Mapped))
    }
}

/// How the network moved under a connection.
public struct PathChange: Sendable, Hashable, CustomStringConvertible {
    /// In words: "this device's address 100.64.3.2 went away".
    public let description: String
    /// The old connection cannot carry anything any more (its address is gone, or nothing
    /// routes to the peer); otherwise a better way appeared beside it.
    public let oldPathIsDead: Bool
}

/// Why a path is gone, in words.
public struct PathError: Error, Sendable, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
