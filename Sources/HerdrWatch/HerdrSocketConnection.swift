import Glibc
import Plumbing
import Synchronization

/// One connection to a herdr server's Unix socket, blocking with a time limit on every step, for
/// a thread of its own (never the agent's loop, never Swift's cooperative pool). Lines are read
/// through `HerdrLineReader`, so none is kept past `HerdrJSON.maximumLineBytes`. `cancel()` from
/// any thread wakes a read that waits (a subscription being closed). The descriptor is closed
/// when the object goes.
public final class HerdrSocketConnection: Sendable {
    /// sun_path's size less its NUL: a longer path cannot be connected to by name.
    static let maximumPathBytes = 107

    private let descriptor: Int32
    private let state: Mutex<HerdrLineReader>
    private let cancelled = Atomic<Bool>(false)

    /// Connects to `path` without waiting on the server: nothing listening, a missing socket and
    /// a server that accepts nothing (its queue full) are failures at once.
    public init(path: String) throws(HerdrRequestFailure) {
        guard path.utf8.count <= Self.maximumPathBytes else {
            throw HerdrRequestFailure(.system, "its socket path is longer than \(Self.maximumPathBytes) bytes")
        }
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw HerdrRequestFailure(.system, "socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8) + [0])
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        if result != 0 {
            let code = errno
            close(fd)
            switch code {
            case ENOENT, ECONNREFUSED, ENOTSOCK:
                throw HerdrRequestFailure(.notRunning, "herdr is not running (nothing listens on its socket)")
            case EAGAIN:
                throw HerdrRequestFailure(.timedOut, "its server accepts no connections (its queue is full)")
            default:
                throw HerdrRequestFailure(.system, "cannot connect to its socket: \(String(cString: strerror(code)))")
            }
        }
        descriptor = fd
        state = Mutex(HerdrLineReader())
    }

    deinit { close(descriptor) }

    /// Writes `bytes` whole by `deadline` (monotonic seconds).
    public func write(_ bytes: [UInt8], deadline: Double) throws(HerdrRequestFailure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                offset += written
                continue
            }
            if written < 0, errno == EINTR { continue }
            if written < 0, errno == EAGAIN {
                try wait(for: Int16(POLLOUT), deadline: deadline, doing: "take its request")
                continue
            }
            throw HerdrRequestFailure(.malformed, "closed the connection before taking its request")
        }
    }

    /// The next line (without its newline), waiting at most until `deadline` (nil: until it
    /// comes, the connection ends or `cancel()`).
    public func readLine(deadline: Double?) throws(HerdrRequestFailure) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let line: [UInt8]?
            do {
                line = try state.withLock { reader throws(HerdrLineError) in try reader.next() }
            } catch {
                throw HerdrRequestFailure(.malformed, "sent \(error)")
            }
            if let line { return line }
            if cancelled.load(ordering: .relaxed) { throw HerdrRequestFailure(.system, "closed by herdr-host") }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                state.withLock { $0.append(buffer[0..<count]) }
                continue
            }
            if count == 0 || (errno != EAGAIN && errno != EINTR) {
                if cancelled.load(ordering: .relaxed) { throw HerdrRequestFailure(.system, "closed by herdr-host") }
                throw HerdrRequestFailure(.malformed, "closed the connection")
            }
            if errno == EAGAIN { try wait(for: Int16(POLLIN), deadline: deadline, doing: "answer") }
        }
    }

    /// Ends the connection from another thread: a read waiting on it returns at once.
    public func cancel() {
        cancelled.store(true, ordering: .relaxed)
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    private func wait(for events: Int16, deadline: Double?, doing what: String) throws(HerdrRequestFailure) {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        while true {
            let left = deadline.map { $0 - MonotonicClock.now }
            if let left, left <= 0 {
                throw HerdrRequestFailure(.timedOut, "its server did not \(what) within the time limit")
            }
            let milliseconds = left.map { Int32(min(60_000, ($0 * 1000).rounded(.up))) } ?? -1
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return }
            if ready < 0, errno != EINTR {
                throw HerdrRequestFailure(.system, "poll(): \(String(cString: strerror(errno)))")
            }
        }
    }
}

extension HerdrSocketConnection {
    /// One request on a connection of its own (the pattern herdr's peers measured as reliable),
    /// all of it within `timeout` seconds: the answer, or why there is none.
    public static func request(
        _ method: HerdrProtocol.Method, socket: String, timeout: Double
    ) -> Result<HerdrProtocol.Answer, HerdrRequestFailure> {
        let deadline = MonotonicClock.now + timeout
        do throws(HerdrRequestFailure) {
            let connection = try HerdrSocketConnection(path: socket)
            let id = "herdr-host"
            try connection.write(HerdrProtocol.requestLine(id: id, method: method), deadline: deadline)
            for _ in 0..<HerdrProtocol.maximumLinesPerAnswer {
                if let answer = try HerdrProtocol.answer(
                    try connection.readLine(deadline: deadline), id: id, method: method)
                {
                    return .success(answer)
                }
            }
            throw HerdrRequestFailure(
                .malformed,
                "sent \(HerdrProtocol.maximumLinesPerAnswer) lines without answering \(method.rawValue)")
        } catch {
            return .failure(Self.during(method.rawValue, error))
        }
    }

    /// Names the request a time limit ran out on ("did not answer ping within 2 s").
    static func during(_ method: String, _ failure: HerdrRequestFailure) -> HerdrRequestFailure {
        guard failure.kind == .timedOut, failure.detail.hasSuffix("within the time limit") else { return failure }
        return HerdrRequestFailure(.timedOut, "accepted the connection and did not answer \(method) in time")
    }
}
