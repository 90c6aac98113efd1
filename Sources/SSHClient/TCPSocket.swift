import CSystem
import Glibc
import NetworkPath

/// Owns one connected TCP socket file descriptor, closed in deinit.
final class TCPSocket {
    let fd: Int32
    /// The numeric address of the peer, e.g. "100.64.0.2" or "fd7a:115c:a1e0::1".
    let peerAddress: String

    private init(fd: Int32, peerAddress: String) {
        self.fd = fd
        self.peerAddress = peerAddress
    }

    deinit { close(fd) }

    /// Ends both directions at once: every later send or receive on it fails at once (EPIPE,
    /// end of file) instead of waiting on a path that carries nothing.
    func shutDownBothWays() { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    /// Resolves `host` and connects to the first address that answers, trying each in order.
    /// `accept` sees each connected peer address before it is used; a non-nil answer refuses it.
    /// Returns the socket, or throws `.unreachable`, `.peerRefused` or `.timeout`.
    static func connect(
        host: String, port: Int, timeout: Duration, wake: WakeSignal, isCancelled: () -> Bool,
        accept: ((String) -> String?)?
    ) throws(SSHConnectionStop) -> TCPSocket {
        let addresses = try resolve(host: host, port: port)
        let deadline = Monotonic.now + timeout.seconds
        var lastFailure = SSHFailure(.unreachable, "No address for \(host)")
        var refusal: SSHFailure?
        for address in addresses {
            let fd = socket(
                Int32(address.family),
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastFailure = SSHFailure(.unreachable, "socket() failed: \(errnoText())")
                continue
            }
            var candidate: Int32? = fd
            defer { if let candidate { close(candidate) } }
            let numeric = address.numericHost
            let rc = address.storage.withUnsafeBytes { raw in
                Glibc.connect(fd, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), address.length)
            }
            if rc != 0 && errno != EINPROGRESS {
                lastFailure = SSHFailure(.unreachable, "Cannot connect to \(display(numeric, port)): \(errnoText())")
                continue
            }
            let stranded = address.storage.withUnsafeBytes { raw in
                StrandedConnect.reason(fd: fd, toward: raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
            }
            if let stranded {
                lastFailure = SSHFailure(.unreachable, "Cannot connect to \(display(numeric, port)): \(stranded)")
                continue
            }
            if rc != 0 {
                switch try waitWritable(fd: fd, deadline: deadline, wake: wake, isCancelled: isCancelled) {
                case .ready:
                    break
                case .timedOut:
                    throw .failure(
                        SSHFailure(
                            .unreachable, "Connection to \(host) port \(port) timed out after \(Int(timeout.seconds)) s"
                        ))
                }
                var error: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size)
                if error != 0 {
                    lastFailure = SSHFailure(
                        .unreachable, "Cannot connect to \(display(numeric, port)): \(String(cString: strerror(error)))"
                    )
                    continue
                }
            }
            let peer = peerName(fd) ?? numeric
            if let accept, let reason = accept(peer) {
                refusal = SSHFailure(.peerRefused, reason)
                continue
            }
            _ = csystem_tcp_interactive(fd)
            candidate = nil
            return TCPSocket(fd: fd, peerAddress: peer)
        }
        throw .failure(refusal ?? lastFailure)
    }

    private struct ResolvedAddress {
        var family: Int32
        var storage: [UInt8]
        var length: socklen_t
        var numericHost: String
    }

    private static func resolve(host: String, port: Int) throws(SSHConnectionStop) -> [ResolvedAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = getaddrinfo(host, String(port), &hints, &list)
        guard rc == 0, let list else {
            let reason = rc == EAI_SYSTEM ? errnoText() : String(cString: gai_strerror(rc))
            throw .failure(SSHFailure(.unreachable, "Could not resolve host \(host): \(reason)"))
        }
        defer { freeaddrinfo(list) }
        var out: [ResolvedAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let addr = entry.pointee.ai_addr {
                let bytes = [UInt8](UnsafeRawBufferPointer(start: addr, count: Int(entry.pointee.ai_addrlen)))
                out.append(
                    ResolvedAddress(
                        family: entry.pointee.ai_family, storage: bytes, length: entry.pointee.ai_addrlen,
                        numericHost: numericName(addr, entry.pointee.ai_addrlen) ?? host))
            }
            cursor = entry.pointee.ai_next
        }
        guard !out.isEmpty else {
            throw .failure(SSHFailure(.unreachable, "Could not resolve host \(host): no addresses"))
        }
        return out
    }

    private enum WaitResult { case ready, timedOut }

    private static func waitWritable(fd: Int32, deadline: Double, wake: WakeSignal, isCancelled: () -> Bool)
        throws(SSHConnectionStop) -> WaitResult
    {
        while true {
            if isCancelled() { throw .cancelled }
            let remaining = deadline - Monotonic.now
            if remaining <= 0 { return .timedOut }
            var fds = [
                pollfd(fd: fd, events: Int16(POLLOUT), revents: 0),
                pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0),
            ]
            let rc = poll(&fds, 2, Int32(min(remaining * 1000, 1000).rounded(.up)))
            if rc < 0 && errno != EINTR {
                throw .failure(SSHFailure(.internalError, "poll failed: \(errnoText())"))
            }
            if fds[1].revents != 0 { wake.drain() }
            if fds[0].revents != 0 { return .ready }
        }
    }

    static func peerName(_ fd: Int32) -> String? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard rc == 0 else { return nil }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { numericName($0, length) }
        }
    }

    private static func numericName(_ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> String? {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        guard getnameinfo(address, length, &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST) == 0 else {
            return nil
        }
        return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func display(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}

func errnoText() -> String { String(cString: strerror(errno)) }

/// Monotonic seconds, immune to wall-clock changes.
enum Monotonic {
    static var now: Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

extension Duration {
    /// The duration in seconds, for deadlines on a `Double` clock.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }
}

/// Why a connection phase stopped early: a local cancel, or a failure.
enum SSHConnectionStop: Error {
    case cancelled
    case failure(SSHFailure)
}
