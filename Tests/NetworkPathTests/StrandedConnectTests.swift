import Foundation
import Glibc
import NetworkPath
import PeerGateListener
import TestSupport
import Testing

/// A connect the kernel gave a loopback source toward a peer elsewhere is told apart at once,
/// in a namespace of the test's own: an interface whose addresses were flushed while its default
/// route stays (the moment between Wi-Fi's addresses going and its link going down).
@Suite("StrandedConnect: a loopback source toward a peer elsewhere", .serialized)
struct StrandedConnectTests {
    /// Starts a non-blocking TCP connect to `peer` port 9 inside `namespace`: what
    /// `StrandedConnect` says of it, and the source the kernel chose.
    static func connect(in namespace: String, to peer: String) throws -> (reason: String?, source: String?) {
        try NamespaceThread.run(in: namespace) {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = in_port_t(9).bigEndian
            guard inet_pton(AF_INET6, peer, &address.sin6_addr) == 1 else { throw FixtureError("not IPv6: \(peer)") }
            let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try withUnsafePointer(to: &address) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddrPointer in
                    let rc = Glibc.connect(fd, sockaddrPointer, socklen_t(MemoryLayout<sockaddr_in6>.size))
                    guard rc == 0 || errno == EINPROGRESS else {
                        throw FixtureError("connect: \(String(cString: strerror(errno)))")
                    }
                    return (
                        StrandedConnect.reason(fd: fd, toward: sockaddrPointer),
                        SocketAddress.local(of: fd)?.numericHost
                    )
                }
            }
        }
    }

    @Test("an address on the way: a connect in progress is not stranded; the address flushed, the route kept: it is")
    func loopbackSourceIsStranded() throws {
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let home = try namespace.addHomeLink()
        let ip = try ProcessRunner.which("ip")
        let inside = ["netns", "exec", namespace.name, "ip"]
        try ProcessRunner.run(ip, inside + ["-6", "route", "add", "default", "dev", home.innerInterface], check: true)
        let peer = home.rootIPv6.replacingOccurrences(of: "::1", with: "::99")

        let carried = try Self.connect(in: namespace.name, to: peer)
        #expect(carried.source == home.innerIPv6)
        #expect(carried.reason == nil)

        try ProcessRunner.run(ip, inside + ["-6", "addr", "flush", "dev", home.innerInterface], check: true)
        let stranded = try Self.connect(in: namespace.name, to: peer)
        #expect(stranded.source == "::1", "the kernel's choice with no address on the way")
        #expect(stranded.reason?.contains("loopback source ::1") == true)
    }
}
