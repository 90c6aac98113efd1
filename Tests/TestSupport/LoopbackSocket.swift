import Glibc

/// TCP sockets on 127.0.0.1 for fixtures.
public enum LoopbackSocket {
    /// A listening socket (close-on-exec, blocking) at a port the kernel picks.
    public static func listen(backlog: Int32 = 16) throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && Glibc.listen(fd, backlog) == 0
                    && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FixtureError("listening on 127.0.0.1 failed: \(reason)")
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A free loopback port that refuses connections (listened on, then closed).
    public static func closedPort() throws -> UInt16 {
        let (fd, port) = try listen()
        close(fd)
        return port
    }
}
