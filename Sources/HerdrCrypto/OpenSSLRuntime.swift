import COpenSSL

/// Process-wide OpenSSL setup, done once before any other OpenSSL call.
///
/// OpenSSL normally frees its global state in an `atexit` handler. A program that exits while
/// another thread (an SSH connection shutting down) still uses libcrypto then crashes inside
/// freed locks. `OPENSSL_INIT_NO_ATEXIT` leaves that state to the kernel; the first
/// initialization decides, so programs call `prepare()` first thing, and the libssh2 wrapper
/// calls it before `libssh2_init`.
public enum OpenSSLRuntime {
    private static let prepared: Bool = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Initializes OpenSSL without its exit-time cleanup. Safe to call any number of times.
    @discardableResult
    public static func prepare() -> Bool { prepared }
}
