import CLibSSH2

/// Owns one `LIBSSH2_CHANNEL`. It must be released before its session; the connection worker
/// drops it first. A free that cannot finish (non-blocking) is left to the session's free.
final class SSHChannelHandle {
    let raw: OpaquePointer

    init(raw: OpaquePointer) { self.raw = raw }

    deinit { _ = libssh2_channel_free(raw) }
}
