import COpenSSL
import Glibc

/// Why a TLS context could not be set up, or why a connection failed. `kind` is stable; `message`
/// names the file or peer and carries OpenSSL's own reasons (its error queue, drained).
public struct TLSError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The certificate chain file is missing, unreadable or not PEM certificates.
        case certificate
        /// The private key file is missing, unreadable, not a PEM key, or not the certificate's key.
        case privateKey
        /// The trusted certificates (a CA file or the system's default paths) could not be loaded.
        case trustStore
        /// OpenSSL refused a setting, or could not allocate a context or connection.
        case configuration
        /// The TLS handshake failed: a protocol error, a non-TLS peer, or the peer left mid-handshake.
        case handshake
        /// The client refused the server's certificate (untrusted chain, wrong host name, expired…).
        case verification
        /// The socket failed (`errno` says how).
        case io
        /// A TLS protocol error after the handshake (bad record, fatal alert from the peer…).
        case protocolError
    }

    public let kind: Kind
    public let message: String
    /// The `errno` value when a system call failed.
    public let errno: Int32?

    public init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    public var description: String { message }

    /// An error whose message is `context` followed by OpenSSL's queued reasons, which it drains.
    static func openSSL(_ kind: Kind, _ context: String) -> TLSError {
        let reasons = OpenSSLErrorQueue.drain()
        return TLSError(kind, reasons.isEmpty ? context : "\(context): \(reasons)")
    }
}

/// The calling thread's OpenSSL error queue.
enum OpenSSLErrorQueue {
    /// Empties the queue and returns its entries as one readable line, oldest first, e.g.
    /// "PEM_read_bio_ex: no start line (Expecting: TRUSTED CERTIFICATE)". Empty when the queue was.
    static func drain() -> String {
        var entries: [String] = []
        while true {
            var function: UnsafePointer<CChar>?
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, &function, &data, &flags)
            if code == 0 { break }
            let reason = ERR_reason_error_string(code).map { String(cString: $0) } ?? "error \(code)"
            var entry = reason
            if let function, function.pointee != 0 {
                entry = "\(String(cString: function)): \(reason)"
            } else if let library = ERR_lib_error_string(code) {
                entry = "\(String(cString: library)): \(reason)"
            }
            if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
                entry += " (\(String(cString: data)))"
            }
            if entries.last != entry { entries.append(entry) }
        }
        return entries.joined(separator: "; ")
    }

    /// Empties the queue, for paths that expect and ignore a failure.
    static func clear() { ERR_clear_error() }
}

/// OpenSSL's process-wide setup, done once before the first context: library and error strings
/// loaded, and no `atexit` cleanup (a program exiting while a loop thread still holds a connection
/// would otherwise crash inside freed state), in the spirit of HerdrCrypto's `OpenSSLRuntime`.
enum TLSRuntime {
    private static let initialized: Bool =
        OPENSSL_init_ssl(
            UInt64(OPENSSL_INIT_NO_ATEXIT) | UInt64(OPENSSL_INIT_LOAD_SSL_STRINGS)
                | UInt64(OPENSSL_INIT_LOAD_CRYPTO_STRINGS), nil) == 1

    static func prepare() throws(TLSError) {
        guard initialized else { throw TLSError.openSSL(.configuration, "TLS: OPENSSL_init_ssl failed") }
    }
}
