import CSystem
import Glibc

/// One epoll instance (level-triggered), closed in deinit. The event struct never crosses into
/// Swift (it is packed on x86-64); CSystem's shims pass descriptors and event masks as plain ints.
final class Epoll {
    static let readable = csystem_epollin()
    static let writable = csystem_epollout()
    static let error = csystem_epollerr()
    static let hangUp = csystem_epollhup()

    // EPOLL_CTL_ADD and EPOLL_CTL_MOD (Linux ABI; the macros do not import).
    static let controlAdd: Int32 = 1
    static let controlModify: Int32 = 3

    let fd: Int32
    private var readyDescriptors = [Int32](repeating: 0, count: 256)
    private var readyEvents = [UInt32](repeating: 0, count: 256)

    init() throws(RelayServerError) {
        fd = csystem_epoll_create()
        guard fd >= 0 else { throw RelayServerError.posix("epoll_create1") }
    }

    deinit { close(fd) }

    func add(_ descriptor: Int32, events: UInt32) throws(RelayServerError) {
        guard csystem_epoll_ctl(fd, Self.controlAdd, descriptor, events) == 0 else {
            throw RelayServerError.posix("epoll_ctl(ADD)")
        }
    }

    func modify(_ descriptor: Int32, events: UInt32) throws(RelayServerError) {
        guard csystem_epoll_ctl(fd, Self.controlModify, descriptor, events) == 0 else {
            throw RelayServerError.posix("epoll_ctl(MOD)")
        }
    }

    /// Waits up to `timeout` milliseconds; calls `body` for each ready descriptor.
    func wait(timeout: Int32, _ body: (Int32, UInt32) -> Void) {
        let count = readyDescriptors.withUnsafeMutableBufferPointer { fds in
            readyEvents.withUnsafeMutableBufferPointer { events in
                csystem_epoll_wait(fd, fds.baseAddress, events.baseAddress, 256, timeout)
            }
        }
        guard count > 0 else { return }
        for index in 0..<Int(count) { body(readyDescriptors[index], readyEvents[index]) }
    }
}

/// Why the relay server could not start or stopped.
public struct RelayServerError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }

    static func posix(_ call: String) -> RelayServerError {
        let code = errno
        return RelayServerError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}
