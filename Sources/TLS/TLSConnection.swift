import COpenSSL
import Glibc

/// How far a handshake got. `wantRead` / `wantWrite`: call `handshake()` again once the socket is
/// readable / writable.
public enum TLSProgress: Sendable {
    case done
    case wantRead
    case wantWrite
    case failed(TLSError)
}

/// What one `read` or `write` did.
public enum TLSIOResult: Sendable {
    /// This many bytes were read or written (never 0 for a non-empty buffer).
    case bytes(Int)
    /// Nothing more until the socket is readable; then repeat the same call.
    case wantRead
    /// Nothing more until the socket is writable; then repeat the same call.
    case wantWrite
    /// The peer ended the stream: close_notify, or its socket closed without one.
    case closed
    case failed(TLSError)
}

/// One TLS connection over an existing non-blocking socket, for an event loop: every call does
/// what it can without blocking and says which readiness to wait for otherwise.
///
/// Not thread-safe: it belongs to the one loop thread that drives its socket. The socket stays
/// the caller's, who closes it after dropping the connection. Writes go through `write(2)`, so
/// the process must ignore SIGPIPE (herdr programs do, first thing) or a peer that resets the
/// connection kills it.
///
/// After `.failed` the connection is finished: further calls return the same failure and
/// `shutdown()` sends nothing.
public final class TLSConnection {
    public enum Role: Sendable, Equatable {
        case server
        /// `serverName` goes into SNI (unless it is an IP address) and the server's certificate
        /// must be valid for it (a DNS name or an IP address in its subjectAltName).
        case client(serverName: String)
    }

    public let context: TLSContext
    public let role: Role
    /// The socket, not owned.
    public let fd: Int32
    /// The `SSL*`, owned.
    private let ssl: OpaquePointer
    private var failure: TLSError?
    private var shutdownSent = false

    public init(context: TLSContext, fd: Int32, role: Role) throws(TLSError) {
        if case .client = role, context.isServer {
            throw TLSError(.configuration, "TLS: a client connection needs a client context")
        }
        if role == .server, !context.isServer {
            throw TLSError(.configuration, "TLS: a server connection needs a server context")
        }
        guard let ssl = SSL_new(context.handle) else {
            throw TLSError.openSSL(.configuration, "TLS: SSL_new failed")
        }
        self.ssl = ssl
        self.context = context
        self.role = role
        self.fd = fd
        // A socket BIO that leaves the descriptor open when freed.
        guard SSL_set_fd(ssl, fd) == 1 else {
            throw TLSError.openSSL(.configuration, "TLS: attaching socket \(fd) failed")
        }
        switch role {
        case .server:
            SSL_set_accept_state(ssl)
        case .client(let serverName):
            if !Self.isIPAddress(serverName) {
                // SSL_set_tlsext_host_name, a macro: OpenSSL copies the name.
                let set = serverName.withCString {
                    SSL_ctrl(
                        ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, Int(TLSEXT_NAMETYPE_host_name),
                        UnsafeMutableRawPointer(mutating: $0))
                }
                guard set == 1 else { throw TLSError.openSSL(.configuration, "TLS: setting SNI \(serverName) failed") }
            }
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            // Checks an IP address as one, any other name as a DNS name.
            guard SSL_set1_host(ssl, serverName) == 1 else {
                throw TLSError.openSSL(.configuration, "TLS: setting the expected host \(serverName) failed")
            }
            SSL_set_connect_state(ssl)
        }
    }

    deinit { SSL_free(ssl) }

    /// Whether the handshake has completed.
    /// Decrypted bytes OpenSSL holds that the socket will no longer signal: read again before
    /// waiting for readable.
    public var hasBufferedPlaintext: Bool { SSL_pending(ssl) > 0 }

    public var isEstablished: Bool { SSL_is_init_finished(ssl) == 1 }

    /// The protocol agreed by ALPN ("http/1.1"), if any.
    public var negotiatedProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// "TLSv1.3", "TLSv1.2".
    public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// Advances the handshake as far as the socket allows.
    public func handshake() -> TLSProgress {
        if let failure { return .failed(failure) }
        ERR_clear_error()
        let rc = SSL_do_handshake(ssl)
        if rc == 1 { return .done }
        let code = SSL_get_error(ssl, rc)
        switch code {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        default: return .failed(fail(handshakeError(code)))
        }
    }

    /// Reads decrypted bytes into `buffer`.
    ///
    /// OpenSSL may hold more plaintext than one call returns (a record larger than `buffer`, or
    /// several records read at once), and the socket will not become readable again for it:
    /// call `read` until it returns `.wantRead` (or `.closed` / `.failed`) before waiting on the
    /// socket again. `.wantWrite` (the peer asked for a key update) means: call `read` again
    /// once the socket is writable.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> TLSIOResult {
        if let failure { return .failed(failure) }
        guard let base = buffer.baseAddress, buffer.count > 0 else { return .bytes(0) }
        ERR_clear_error()
        var count = 0
        if SSL_read_ex(ssl, base, buffer.count, &count) == 1 { return .bytes(count) }
        return ioResult(SSL_get_error(ssl, 0), reading: true)
    }

    /// Encrypts and sends up to `bytes.count` bytes; partial writes return the count taken.
    ///
    /// After `.wantWrite` (or `.wantRead`), call `write` again with the same unsent bytes (at
    /// least as many, same content); they may be at another address, so a buffer that grew or
    /// moved is fine.
    public func write(_ bytes: UnsafeRawBufferPointer) -> TLSIOResult {
        if let failure { return .failed(failure) }
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .bytes(0) }
        ERR_clear_error()
        var count = 0
        if SSL_write_ex(ssl, base, bytes.count, &count) == 1 { return .bytes(count) }
        return ioResult(SSL_get_error(ssl, 0), reading: false)
    }

    /// Sends close_notify once, without waiting for the peer's: best effort, one non-blocking
    /// attempt. Nothing is sent before the handshake completes or after a failure. The peer's
    /// own close_notify, if the caller waits for it, shows up as `read` returning `.closed`.
    public func shutdown() {
        guard failure == nil, !shutdownSent, isEstablished else { return }
        shutdownSent = true
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    // MARK: - Errors

    private func fail(_ error: TLSError) -> TLSError {
        failure = error
        return error
    }

    private func ioResult(_ code: Int32, reading: Bool) -> TLSIOResult {
        switch code {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN:
            // The peer's close_notify (or EOF, with SSL_OP_IGNORE_UNEXPECTED_EOF).
            ERR_clear_error()
            return .closed
        case SSL_ERROR_SYSCALL:
            let errorNumber = Glibc.errno
            let queued = OpenSSLErrorQueue.drain()
            // EOF without close_notify (OpenSSL reports it so when the option above is off).
            if reading && errorNumber == 0 && queued.isEmpty { return .closed }
            let action = reading ? "reading" : "writing"
            let reason = errorNumber != 0 ? String(cString: strerror(errorNumber)) : "connection closed"
            let detail = queued.isEmpty ? "" : " (\(queued))"
            return .failed(
                fail(TLSError(.io, "TLS \(action) on socket \(fd) failed: \(reason)\(detail)", errno: errorNumber)))
        case SSL_ERROR_SSL:
            let action = reading ? "reading" : "writing"
            return .failed(fail(TLSError.openSSL(.protocolError, "TLS \(action) failed")))
        default:
            return .failed(fail(TLSError.openSSL(.protocolError, "TLS: unexpected SSL_get_error \(code)")))
        }
    }

    private func handshakeError(_ code: Int32) -> TLSError {
        let peer: String
        switch role {
        case .server: peer = "client"
        case .client(let serverName): peer = serverName
        }
        if case .client(let serverName) = role {
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                let reason = X509_verify_cert_error_string(verify).map { String(cString: $0) } ?? "error \(verify)"
                OpenSSLErrorQueue.clear()
                return TLSError(.verification, "TLS certificate of \(serverName) refused: \(reason)")
            }
        }
        switch code {
        case SSL_ERROR_ZERO_RETURN:
            ERR_clear_error()
            return TLSError(.handshake, "TLS handshake with \(peer) failed: the peer closed the connection")
        case SSL_ERROR_SYSCALL:
            let errorNumber = Glibc.errno
            let queued = OpenSSLErrorQueue.drain()
            let reason =
                errorNumber != 0 ? String(cString: strerror(errorNumber)) : "the peer closed the connection"
            let detail = queued.isEmpty ? "" : " (\(queued))"
            return TLSError(
                .handshake, "TLS handshake with \(peer) failed: \(reason)\(detail)",
                errno: errorNumber != 0 ? errorNumber : nil)
        case SSL_ERROR_SSL:
            return TLSError.openSSL(.handshake, "TLS handshake with \(peer) failed")
        default:
            return TLSError.openSSL(.handshake, "TLS handshake with \(peer) failed: SSL_get_error \(code)")
        }
    }

    private static func isIPAddress(_ name: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, name, &v4) == 1 || inet_pton(AF_INET6, name, &v6) == 1
    }
}

@available(*, unavailable)
extension TLSConnection: Sendable {}
