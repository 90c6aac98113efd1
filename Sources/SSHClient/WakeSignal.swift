import CSystem
import Glibc

/// An eventfd that other threads signal to wake the connection thread out of `poll`.
final class WakeSignal: Sendable {
    let fd: Int32

    init() throws(SSHFailure) {
        let fd = csystem_eventfd_nonblocking()
        guard fd >= 0 else { throw SSHFailure(.internalError, "eventfd failed: \(errnoText())") }
        self.fd = fd
    }

    deinit { close(fd) }

    func signal() {
        var one: UInt64 = 1
        // A saturated counter (EAGAIN) still leaves the fd readable, which is all a wake needs.
        _ = write(fd, &one, 8)
    }

    /// Clears pending wakes.
    func drain() {
        var value: UInt64 = 0
        _ = read(fd, &value, 8)
    }
}
