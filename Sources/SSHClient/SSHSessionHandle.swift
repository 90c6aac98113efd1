import CLibSSH2
import Glibc

/// Owns one `LIBSSH2_SESSION`, freed in deinit. Used only on its connection's thread.
final class SSHSessionHandle {
    let raw: OpaquePointer

    /// `abstract` is handed back to every callback of this session.
    init(abstract: UnsafeMutableRawPointer) throws(SSHFailure) {
        try LibSSH2.ensureInitialized()
        guard let raw = libssh2_session_init_ex(nil, nil, nil, abstract) else {
            throw SSHFailure(.internalError, "libssh2_session_init_ex failed")
        }
        self.raw = raw
        libssh2_session_set_blocking(raw, 0)
    }

    deinit { libssh2_session_free(raw) }

    /// libssh2's description of the last error, e.g. "Unable to exchange encryption keys".
    var lastErrorMessage: String {
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        _ = libssh2_session_last_error(raw, &message, &length, 0)
        guard let message, length > 0 else { return "unknown libssh2 error" }
        return String(decoding: UnsafeRawBufferPointer(start: message, count: Int(length)), as: UTF8.self)
    }

    var lastErrorCode: Int32 { libssh2_session_last_errno(raw) }

    /// Which socket directions the last call that returned EAGAIN waits for.
    var blockDirections: (inbound: Bool, outbound: Bool) {
        let directions = libssh2_session_block_directions(raw)
        return (directions & LIBSSH2_SESSION_BLOCK_INBOUND != 0, directions & LIBSSH2_SESSION_BLOCK_OUTBOUND != 0)
    }

    func setMethodPreference(_ method: Int32, _ list: String) throws(SSHFailure) {
        let rc = libssh2_session_method_pref(raw, method, list)
        guard rc == 0 else {
            throw SSHFailure(
                .internalError, "libssh2_session_method_pref(\(method), \(list)) failed: \(lastErrorMessage)")
        }
    }

    /// The negotiated algorithm for `method`, e.g. the cipher server to client.
    func negotiated(_ method: Int32) -> String? {
        guard let name = libssh2_session_methods(raw, method) else { return nil }
        return String(cString: name)
    }

    /// The host key the server proved possession of during the key exchange.
    func hostKey() -> SSHHostKeyBlob? {
        var length = 0
        var type: Int32 = 0
        guard let key = libssh2_session_hostkey(raw, &length, &type), length > 0 else { return nil }
        let blob = [UInt8](UnsafeRawBufferPointer(start: key, count: length))
        return SSHHostKeyBlob(blob: blob, algorithm: SSHWireReader.firstString(of: blob) ?? "unknown")
    }
}
