import Glibc

/// One request over a Unix stream socket, for the control sockets of the servers tests start
/// (Redis, HAProxy's stats socket).
public enum UnixSocketClient {
    /// Connects to `path`, writes `request`, and reads until `done` says the reply is complete,
    /// the server closes, or a read waits `timeout` seconds. Nil when the connection fails.
    public static func exchange(
        _ path: String, _ request: [UInt8], timeout: Int = 1, done: ([UInt8]) -> Bool = { _ in false }
    ) -> [UInt8]? {
        guard let fd = connect(path) else { return nil }
        defer { close(fd) }
        return exchange(fd: fd, request, timeout: timeout, done: done)
    }

    /// A stream socket connected to `path` (close-on-exec, blocking), or nil; the caller closes it.
    public static func connect(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes + [0])
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }

    /// Writes `request` to the connected socket `fd` and reads until `done` says the reply is
    /// complete, the peer closes, or a read waits `timeout` seconds (16 MiB at most). Nil when the
    /// write fails. The caller owns and closes `fd`.
    static func exchange(fd: Int32, _ request: [UInt8], timeout: Int, done: ([UInt8]) -> Bool) -> [UInt8]? {
        var wait = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        guard write(fd, request, request.count) == request.count else { return nil }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        // Bounded: a reply over 16 MiB is no answer these tests wait for.
        while reply.count < 1 << 24 {
            let got = read(fd, &buffer, buffer.count)
            guard got > 0 else { break }
            reply += buffer[0..<got]
            if done(reply) { break }
        }
        return reply
    }
}
