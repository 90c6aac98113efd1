import CSystem
import Glibc
import NetworkPath
import Plumbing
import TLS

/// What one non-blocking read or write did.
enum TransportIO {
    case bytes(Int)
    /// Wait for readable, then repeat the call.
    case wantRead
    /// Wait for writable, then repeat the call.
    case wantWrite
    /// The peer ended the stream.
    case closed
    case failed(ConnectionError)
}

/// One TCP connection (non-blocking socket, optionally TLS) driven by one thread. The blocking
/// helpers poll with a deadline and, when given a wake descriptor, give up early once
/// `isCancelled` says so. Not thread-safe; never used on Swift's cooperative pool.
final class RelayTransport {
    let fd: Int32
    private(set) var tls: TLSConnection?
    /// An eventfd another thread writes to interrupt a blocking wait, or -1.
    let wakeFD: Int32
    let isCancelled: () -> Bool

    private init(fd: Int32, wakeFD: Int32, isCancelled: @escaping () -> Bool) {
        self.fd = fd
        self.wakeFD = wakeFD
        self.isCancelled = isCancelled
    }

    deinit {
        tls = nil
        Glibc.close(fd)
    }

    // MARK: - Connecting

    /// Resolves the endpoint's connect host, connects (each address in turn, all within
    /// `timeout`), and does the TLS handshake when the endpoint wants it. `connecting` hears the
    /// ends of each socket whose connect is in progress (to notice the network moving under it).
    static func open(
        _ endpoint: RelayEndpoint, timeout: Double, wakeFD: Int32 = -1, isCancelled: @escaping () -> Bool = { false },
        connecting: (SocketEndpoints) -> Void = { _ in }
    ) throws(ConnectionError) -> RelayTransport {
        let deadline = Deadline(seconds: timeout)
        let fd = try connect(
            host: endpoint.connectHost, port: endpoint.connectPort, deadline: deadline, wakeFD: wakeFD,
            isCancelled: isCancelled, connecting: connecting)
        let transport = RelayTransport(fd: fd, wakeFD: wakeFD, isCancelled: isCancelled)
        if endpoint.connectUsesTLS {
            try transport.startTLS(
                serverName: endpoint.host, trustedCertificatesFile: endpoint.trustedCertificatesFile, deadline: deadline
            )
        }
        return transport
    }

    private static func connect(
        host: String, port: UInt16, deadline: Deadline, wakeFD: Int32, isCancelled: () -> Bool,
        connecting: (SocketEndpoints) -> Void
    ) throws(ConnectionError) -> Int32 {
        let target = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_ADDRCONFIG
        var list: UnsafeMutablePointer<addrinfo>?
        // getaddrinfo has no timeout; this runs on a thread of our own, never the cooperative pool.
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            let reason = status == 0 ? "no address" : String(cString: gai_strerror(status))
            throw ConnectionError(.unreachable, "cannot resolve \(host): \(reason)")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let entry = cursor {
            cursor = entry.pointee.ai_next
            if deadline.hasPassed { break }
            let fd = socket(
                entry.pointee.ai_family,
                Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                lastError = String(cString: strerror(errno))
                continue
            }
            _ = csystem_tcp_interactive(fd)
            if Glibc.connect(fd, entry.pointee.ai_addr, entry.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = String(cString: strerror(errno))
                Glibc.close(fd)
                continue
            }
            if let stranded = StrandedConnect.reason(fd: fd, toward: entry.pointee.ai_addr) {
                lastError = stranded
                Glibc.close(fd)
                continue
            }
            if let ends = SocketEndpoints(connecting: fd, toward: entry.pointee.ai_addr) { connecting(ends) }
            // Wait for the outcome, or the deadline, or a cancellation.
            var outcome: Int32 = ETIMEDOUT
            while !deadline.hasPassed {
                var fds = [pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)]
                if wakeFD >= 0 { fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
                let ready = poll(&fds, nfds_t(fds.count), deadline.pollMilliseconds(cap: 200))
                if ready < 0 && errno != EINTR {
                    outcome = errno
                    break
                }
                if isCancelled() {
                    Glibc.close(fd)
                    throw ConnectionError(.cancelled, "connecting to \(target) was cancelled")
                }
                if ready > 0 && fds.count > 1 && fds[1].revents != 0 { drainWake(wakeFD) }
                if ready > 0 && fds[0].revents != 0 {
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    outcome = error
                    break
                }
            }
            if outcome == 0 { return fd }
            lastError = outcome == ETIMEDOUT ? "timed out" : String(cString: strerror(outcome))
            Glibc.close(fd)
        }
        throw ConnectionError(.unreachable, "cannot connect to \(target): \(lastError)")
    }

    private func startTLS(serverName: String, trustedCertificatesFile: String?, deadline: Deadline)
        throws(ConnectionError)
    {
        let connection: TLSConnection
        do {
            let context = try TLSContext.client(trustedCertificatesFile: trustedCertificatesFile)
            connection = try TLSConnection(context: context, fd: fd, role: .client(serverName: serverName))
        } catch {
            throw ConnectionError(.tls, "TLS setup failed: \(error)")
        }
        tls = connection
        while true {
            switch connection.handshake() {
            case .done: return
            case .wantRead: try wait(forWritable: false, deadline: deadline, what: "the TLS handshake")
            case .wantWrite: try wait(forWritable: true, deadline: deadline, what: "the TLS handshake")
            case .failed(let error):
                // A private relay's CA is the usual cause: say where trust comes from.
                let hint =
                    error.kind == .verification && trustedCertificatesFile == nil
                    ? " (a relay with a certificate from a private CA needs that CA in the system's trust store, or SSL_CERT_FILE=CA.pem in the environment)"
                    : ""
                throw ConnectionError(.tls, error.message + hint)
            }
        }
    }

    // MARK: - Non-blocking I/O

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportIO {
        if let tls {
            switch tls.read(into: buffer) {
            case .bytes(let count): return .bytes(count)
            case .wantRead: return .wantRead
            case .wantWrite: return .wantWrite
            case .closed: return .closed
            case .failed(let error): return .failed(ConnectionError(.tls, error.message))
            }
        }
        while true {
            let count = recv(fd, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .closed }
            switch errno {
            case EINTR: continue
            case EAGAIN: return .wantRead
            default:
                return .failed(ConnectionError(.connectionLost, "reading from the relay failed: \(Self.lastError)"))
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportIO {
        if let tls {
            switch tls.write(bytes) {
            case .bytes(let count): return .bytes(count)
            case .wantRead: return .wantRead
            case .wantWrite: return .wantWrite
            case .closed: return .closed
            case .failed(let error): return .failed(ConnectionError(.tls, error.message))
            }
        }
        while true {
            let count = send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .bytes(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN: return .wantWrite
            default:
                return .failed(ConnectionError(.connectionLost, "writing to the relay failed: \(Self.lastError)"))
            }
        }
    }

    /// Decrypted bytes TLS holds that the socket will not signal again.
    var hasBufferedInput: Bool { tls?.hasBufferedPlaintext ?? false }

    /// Best-effort close_notify and FIN.
    func shutdownWrite() {
        tls?.shutdown()
        Glibc.shutdown(fd, Int32(SHUT_WR))
    }

    // MARK: - Blocking helpers

    /// Writes every byte before `deadline`.
    func writeAll(_ bytes: [UInt8], deadline: Deadline, what: String) throws(ConnectionError) {
        var offset = 0
        while offset < bytes.count {
            let result = bytes.withUnsafeBytes { all in write(UnsafeRawBufferPointer(rebasing: all[offset...])) }
            switch result {
            case .bytes(let count): offset += count
            case .wantRead: try wait(forWritable: false, deadline: deadline, what: what)
            case .wantWrite: try wait(forWritable: true, deadline: deadline, what: what)
            case .closed: throw ConnectionError(.connectionLost, "the relay closed the connection during \(what)")
            case .failed(let error): throw error
            }
        }
    }

    /// Reads at least one byte before `deadline`; 0 means the peer ended the stream.
    func readSome(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline, what: String)
        throws(ConnectionError) -> Int
    {
        while true {
            switch read(into: buffer) {
            case .bytes(let count): return count
            case .wantRead: try wait(forWritable: false, deadline: deadline, what: what)
            case .wantWrite: try wait(forWritable: true, deadline: deadline, what: what)
            case .closed: return 0
            case .failed(let error): throw error
            }
        }
    }

    /// Waits until the socket is readable (or writable), the deadline passes (`timeout`), or the
    /// wait is cancelled.
    func wait(forWritable: Bool, deadline: Deadline, what: String) throws(ConnectionError) {
        while true {
            if isCancelled() { throw ConnectionError(.cancelled, "\(what) was cancelled") }
            if deadline.hasPassed { throw ConnectionError(.timeout, "the relay did not answer in time (\(what))") }
            var fds = [pollfd(fd: fd, events: Int16(forWritable ? POLLOUT : POLLIN), revents: 0)]
            if wakeFD >= 0 { fds.append(pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), deadline.pollMilliseconds(cap: 200))
            if ready < 0 && errno != EINTR {
                throw ConnectionError(.connectionLost, "poll failed: \(Self.lastError)")
            }
            if ready > 0 && fds[0].revents != 0 { return }
            if ready > 0 && fds.count > 1 && fds[1].revents != 0 { Self.drainWake(wakeFD) }
        }
    }

    /// Empties an eventfd so the next poll waits again.
    static func drainWake(_ fd: Int32) {
        var counter: UInt64 = 0
        _ = Glibc.read(fd, &counter, 8)
    }

    static var lastError: String { String(cString: strerror(errno)) }
}
