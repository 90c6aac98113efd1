import COpenSSL
import Glibc

/// The settings every connection of one side shares: an OpenSSL `SSL_CTX`, configured once here
/// and never changed afterwards, which makes it safe to share between loop threads.
///
/// Both roles speak TLS 1.2 or 1.3 only, and keep per-connection memory small: read and write
/// buffers are released while a connection is idle (`SSL_MODE_RELEASE_BUFFERS`), and the server
/// neither caches sessions nor issues tickets.
public final class TLSContext: @unchecked Sendable {
    /// The `SSL_CTX*`, owned.
    let handle: OpaquePointer
    /// Whether connections made from this context act as the server.
    public let isServer: Bool

    private init(handle: OpaquePointer, isServer: Bool) {
        self.handle = handle
        self.isServer = isServer
    }

    deinit { SSL_CTX_free(handle) }

    /// A server context presenting the PEM certificate chain in `certificateChainFile` (leaf
    /// first) with the PEM private key in `privateKeyFile`. Selects ALPN "http/1.1" when a
    /// client offers it, and goes on without ALPN otherwise.
    public static func server(certificateChainFile: String, privateKeyFile: String) throws(TLSError) -> TLSContext {
        let context = try make(server: true)
        let ctx = context.handle
        guard SSL_CTX_use_certificate_chain_file(ctx, certificateChainFile) == 1 else {
            throw fileError(.certificate, "TLS certificate", certificateChainFile)
        }
        guard SSL_CTX_use_PrivateKey_file(ctx, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            // A well-formed key of the certificate's type but not its own is refused here already.
            let first = ERR_peek_error()
            if ERR_GET_LIB(first) == ERR_LIB_X509 && ERR_GET_REASON(first) == X509_R_KEY_VALUES_MISMATCH {
                throw TLSError.openSSL(
                    .privateKey, "TLS private key \(privateKeyFile) does not match certificate \(certificateChainFile)")
            }
            throw fileError(
                .privateKey, "TLS private key", privateKeyFile, " (for certificate \(certificateChainFile))")
        }
        guard SSL_CTX_check_private_key(ctx) == 1 else {
            throw TLSError.openSSL(
                .privateKey,
                "TLS private key \(privateKeyFile) does not match certificate \(certificateChainFile)")
        }
        // Sessions are neither cached nor resumed by ticket: each cached session or ticket key
        // is memory the relay would hold for idle clients, and a full handshake is cheap enough.
        guard SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, Int(SSL_SESS_CACHE_OFF), nil) >= 0,
            SSL_CTX_set_num_tickets(ctx, 0) == 1
        else { throw TLSError.openSSL(.configuration, "TLS: turning session resumption off failed") }
        _ = SSL_CTX_set_options(ctx, noTicket)
        SSL_CTX_set_alpn_select_cb(
            ctx,
            { _, selected, selectedLength, offered, offeredLength, _ in
                guard let selected, let selectedLength, let offered else { return SSL_TLSEXT_ERR_NOACK }
                // The client's list: each protocol name preceded by its length in one byte.
                let wanted: [UInt8] = Array("http/1.1".utf8)
                var index = 0
                let end = Int(offeredLength)
                while index < end {
                    let length = Int(offered[index])
                    let start = index + 1
                    guard start + length <= end else { break }
                    if length == wanted.count && (0..<length).allSatisfy({ offered[start + $0] == wanted[$0] }) {
                        // OpenSSL copies the selection before `offered` goes away.
                        selected.pointee = offered + start
                        selectedLength.pointee = UInt8(length)
                        return SSL_TLSEXT_ERR_OK
                    }
                    index = start + length
                }
                return SSL_TLSEXT_ERR_NOACK
            }, nil)
        return context
    }

    /// A client context that verifies the server's certificate chain against the PEM certificates
    /// in `trustedCertificatesFile`, or against the system's default trust store when nil. Each
    /// connection also checks the host name it is given. Offers ALPN "http/1.1".
    public static func client(trustedCertificatesFile: String?) throws(TLSError) -> TLSContext {
        let context = try make(server: false)
        let ctx = context.handle
        if let trustedCertificatesFile {
            guard SSL_CTX_load_verify_file(ctx, trustedCertificatesFile) == 1 else {
                throw fileError(.trustStore, "TLS trusted certificates", trustedCertificatesFile)
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(ctx) == 1 else {
                throw TLSError.openSSL(.trustStore, "TLS: loading the system's trusted certificates failed")
            }
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nil)
        let protocols: [UInt8] = [8] + Array("http/1.1".utf8)
        // SSL_CTX_set_alpn_protos returns 0 on success.
        guard SSL_CTX_set_alpn_protos(ctx, protocols, UInt32(protocols.count)) == 0 else {
            throw TLSError.openSSL(.configuration, "TLS: setting ALPN protocols failed")
        }
        return context
    }

    /// `SSL_OP_NO_TICKET` (`SSL_OP_BIT(14)`, a macro Swift does not import).
    private static let noTicket: UInt64 = 1 << 14
    /// `SSL_OP_IGNORE_UNEXPECTED_EOF` (`SSL_OP_BIT(7)`): a peer closing its socket without
    /// close_notify reads as a clean end (`.closed`), as it did before OpenSSL 3.
    private static let ignoreUnexpectedEOF: UInt64 = 1 << 7

    /// A context with what both roles share: TLS 1.2 minimum, the buffer modes, EOF handling.
    private static func make(server: Bool) throws(TLSError) -> TLSContext {
        try TLSRuntime.prepare()
        guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw TLSError.openSSL(.configuration, "TLS: SSL_CTX_new failed")
        }
        let context = TLSContext(handle: ctx, isServer: server)
        guard SSL_CTX_ctrl(ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(TLS1_2_VERSION), nil) == 1 else {
            throw TLSError.openSSL(.configuration, "TLS: setting the minimum version to TLS 1.2 failed")
        }
        let modes =
            Int(SSL_MODE_ENABLE_PARTIAL_WRITE) | Int(SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER)
            | Int(SSL_MODE_RELEASE_BUFFERS)
        // SSL_CTX_set_mode returns the new mode bitmask.
        guard SSL_CTX_ctrl(ctx, SSL_CTRL_MODE, modes, nil) & modes == modes else {
            throw TLSError.openSSL(.configuration, "TLS: setting the buffer modes failed")
        }
        let options = ignoreUnexpectedEOF
        guard SSL_CTX_set_options(ctx, options) & options == options else {
            throw TLSError.openSSL(.configuration, "TLS: setting SSL_OP_IGNORE_UNEXPECTED_EOF failed")
        }
        return context
    }

    /// The error for a file OpenSSL could not use. A file that cannot be opened gets the system's
    /// reason ("No such file or directory"), since OpenSSL's own names fopen rather than the file;
    /// otherwise OpenSSL's reasons follow (`detail` inserted before them).
    private static func fileError(
        _ kind: TLSError.Kind, _ label: String, _ path: String, _ detail: String = ""
    ) -> TLSError {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = Glibc.errno
            OpenSSLErrorQueue.clear()
            return TLSError(kind, "\(label) \(path): \(String(cString: strerror(code)))", errno: code)
        }
        close(fd)
        return .openSSL(kind, "\(label) \(path)\(detail)")
    }
}
