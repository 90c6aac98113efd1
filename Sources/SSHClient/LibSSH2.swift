import CLibSSH2
import HerdrCrypto

/// Process-wide libssh2 setup. `libssh2_init` is not thread-safe, so it runs exactly once,
/// after OpenSSL was told not to tear itself down at exit (see `OpenSSLRuntime`).
enum LibSSH2 {
    static let initialization: Int32 = {
        OpenSSLRuntime.prepare()
        return libssh2_init(0)
    }()

    static func ensureInitialized() throws(SSHFailure) {
        guard initialization == 0 else {
            throw SSHFailure(.internalError, "libssh2_init failed with \(initialization)")
        }
    }
}

/// The outcome of one non-blocking libssh2 call.
enum LibSSH2Status: Equatable {
    case done
    case wouldBlock
    case error(Int32)

    init(_ code: Int32) {
        if code == LIBSSH2_ERROR_EAGAIN {
            self = .wouldBlock
        } else if code < 0 {
            self = .error(code)
        } else {
            self = .done
        }
    }
}
