import Glibc
import PeerGate

/// A socket address copied out of the kernel (getpeername, getsockname, getifaddrs).
public struct SocketAddress: Sendable {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)

    /// The peer of a connected socket.
    public static func peer(of fd: Int32) -> SocketAddress? {
        var address = SocketAddress()
        let rc = address.withMutableSockaddr { getpeername(fd, $0, &$1) }
        return rc == 0 ? address : nil
    }

    /// The local end of a socket.
    public static func local(of fd: Int32) -> SocketAddress? {
        var address = SocketAddress()
        let rc = address.withMutableSockaddr { getsockname(fd, $0, &$1) }
        return rc == 0 ? address : nil
    }

    /// A copy of a sockaddr the C library owns (AF_INET and AF_INET6 only).
    public init?(copying pointer: UnsafePointer<sockaddr>) {
        let size: Int
        switch Int32(pointer.pointee.sa_family) {
        case AF_INET: size = MemoryLayout<sockaddr_in>.size
        case AF_INET6: size = MemoryLayout<sockaddr_in6>.size
        default: return nil
        }
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: size))
        }
        length = socklen_t(size)
    }

    /// A bindable address for `ip` and `port`.
    public init(ip: IPAddress, port: UInt16) {
        switch ip.family {
        case .ipv4:
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: ip.bytes) }
            Self.store(&storage, address)
            length = socklen_t(MemoryLayout<sockaddr_in>.size)
        case .ipv6:
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: ip.bytes) }
            Self.store(&storage, address)
            length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        }
    }

    private init() {}

    public var family: Int32 { Int32(storage.ss_family) }

    /// The address bytes (IPv6 stays IPv6, mapped or not); nil for other families.
    public var ip: IPAddress? {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET:
                let address = raw.load(as: sockaddr_in.self)
                return IPAddress(bytes: withUnsafeBytes(of: address.sin_addr) { Array($0) })
            case AF_INET6:
                let address = raw.load(as: sockaddr_in6.self)
                return IPAddress(bytes: withUnsafeBytes(of: address.sin6_addr) { Array($0) })
            default:
                return nil
            }
        }
    }

    /// The IPv6 scope id (the interface index of a link-local address); 0 otherwise.
    public var scopeID: UInt32 {
        guard family == AF_INET6 else { return 0 }
        return withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self).sin6_scope_id }
    }

    public var port: UInt16 {
        withUnsafeBytes(of: storage) { raw in
            switch family {
            case AF_INET: UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
            case AF_INET6: UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
            default: 0
            }
        }
    }

    /// The numeric text getnameinfo gives: "100.64.0.2", "::ffff:10.0.0.1", "fe80::1%eth0".
    public var numericHost: String? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        let rc = withSockaddr { getnameinfo($0, $1, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) }
        guard rc == 0 else { return nil }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    public func withSockaddr<Result>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> Result) -> Result {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)
        }
    }

    private mutating func withMutableSockaddr<Result>(
        _ body: (UnsafeMutablePointer<sockaddr>, inout socklen_t) -> Result
    ) -> Result {
        var length = self.length
        let result = withUnsafeMutableBytes(of: &storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), &length)
        }
        self.length = length
        return result
    }

    private static func store<Address>(_ storage: inout sockaddr_storage, _ address: Address) {
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
        }
    }
}
