import Glibc

/// Writes every byte to a file descriptor, however many `write(2)` calls that takes.
///
/// `write` may write fewer bytes than asked (pipes, terminals, sockets), fail with `EINTR` when a
/// signal arrives, or with `EAGAIN` on a non-blocking descriptor that is full; all three are
/// handled here (the last by waiting in `poll` until the descriptor is writable), so callers only
/// see real errors.
public enum FileDescriptorWriter {
    /// Writes all of `bytes` to `fd`.
    ///
    /// - Throws: ``SystemError`` for any other failure (`EBADF`, `EPIPE`, `EIO`, ...). Bytes before
    ///   the failure may have been written.
    public static func writeAll(fd: Int32, bytes: UnsafeRawBufferPointer) throws(SystemError) {
        guard var next = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            let written = write(fd, next, remaining)
            if written > 0 {
                next += written
                remaining -= written
                continue
            }
            let code = written < 0 ? errno : EIO
            switch code {
            case EINTR:
                continue
            case EAGAIN:
                try waitUntilWritable(fd)
            default:
                throw SystemError("write", code: code)
            }
        }
    }

    /// Writes all of `bytes` to `fd`.
    public static func writeAll(fd: Int32, bytes: [UInt8]) throws(SystemError) {
        let result: Result<Void, SystemError> = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemError) in try writeAll(fd: fd, bytes: buffer) }
        }
        try result.get()
    }

    /// Writes `string` as UTF-8 to `fd`.
    public static func writeAll(fd: Int32, string: String) throws(SystemError) {
        try writeAll(fd: fd, bytes: Array(string.utf8))
    }

    private static func waitUntilWritable(_ fd: Int32) throws(SystemError) {
        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        while poll(&entry, 1, -1) < 0 {
            if errno != EINTR { throw SystemError.fromErrno("poll") }
        }
    }
}
