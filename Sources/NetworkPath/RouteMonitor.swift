import CSystem
import Foundation
import Glibc
import Synchronization

/// The kernel's news of link, address and route changes (a NETLINK_ROUTE socket), read on a
/// thread of its own: each batch of messages, or an overrun (ENOBUFS: some were lost), calls
/// `onChange` once. What changed is not parsed: the owner looks at its own connections again
/// (`SocketEndpoints.change`). One instance per socket; `stop()` ends the thread and closes it
/// (the thread keeps the monitor alive until then).
public final class RouteMonitor: Sendable {
    private let fd: Int32
    private let wake: Int32
    private let stopped = Atomic(false)

    /// Opens the socket and starts reading; throws when the kernel refuses it (no netlink in a
    /// sandbox): the owner then goes without, as before.
    public init(onChange: @escaping @Sendable () -> Void) throws(PathError) {
        fd = csystem_route_monitor_open()
        guard fd >= 0 else {
            throw PathError("cannot watch the network (netlink: \(String(cString: strerror(errno))))")
        }
        wake = csystem_eventfd_nonblocking()
        guard wake >= 0 else {
            let reason = String(cString: strerror(errno))
            Glibc.close(fd)
            throw PathError("cannot watch the network (eventfd: \(reason))")
        }
        // The thread holds the monitor until `stop()` ends it.
        let thread = Thread { [self] in
            read(onChange: onChange)
            Glibc.close(fd)
            Glibc.close(wake)
        }
        thread.name = "route monitor"
        thread.start()
    }

    /// Ends the thread; the socket closes with it. Idempotent.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
    }

    private func read(onChange: @Sendable () -> Void) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !stopped.load(ordering: .acquiring) {
            var fds = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                return
            }
            if fds[1].revents != 0 { return }
            guard fds[0].revents != 0 else { continue }
            var changed = false
            while true {
                let count = recv(fd, &buffer, buffer.count, 0)
                if count > 0 {
                    changed = true
                    continue
                }
                if count < 0 && errno == EINTR { continue }
                if count < 0 && errno == ENOBUFS {  // the kernel dropped some: look again anyway
                    changed = true
                    continue
                }
                if count < 0 && errno == EAGAIN { break }
                return  // closed or broken: no more news
            }
            if changed && !stopped.load(ordering: .acquiring) { onChange() }
        }
    }
}
