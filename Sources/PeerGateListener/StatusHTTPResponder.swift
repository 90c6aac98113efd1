import Glibc
import PeerGate

/// Serves one admitted connection as a tiny HTTP/1.1 server that knows only `GET /status`:
/// reads one bounded request head, writes one response with its Content-Length, and closes.
///
/// Blocking (in `poll`, with deadlines): call it on a thread of your own, never on Swift's
/// cooperative pool.
public enum StatusHTTPResponder {
    /// How long a client has to send its request head, and then to take the response.
    public static let requestTimeout: Duration = .seconds(5)
    /// After the response, how long (and how much) unread input is drained before the close, so
    /// the close does not reset a response the client has not read yet.
    public static let lingerTimeout: Duration = .seconds(1)
    public static let lingerLimit = 64 * 1024

    /// Answers one request on `connection` and closes it. Returns the response sent, or nil when
    /// the client closed or timed out before a complete request head.
    @discardableResult
    public static func serve(_ connection: GatedConnection) -> HTTPResponse? {
        let fd = connection.takeDescriptor()
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        let deadline = Deadline(after: requestTimeout)
        var parser = HTTPRequestHeadParser()
        var buffer = [UInt8](repeating: 0, count: 4096)
        var verdict: HTTPRequestHeadParser.Result?
        while verdict == nil {
            guard wait(fd, for: Int16(POLLIN), until: deadline) else { return nil }
            let count = read(fd, &buffer, buffer.count)
            if count == 0 { return nil }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return nil
            }
            parser.append(buffer[0..<count])
            verdict = parser.next()
        }
        let response = StatusEndpoint.response(to: verdict!, status: connection.status)
        guard writeAll(fd, response.bytes, until: Deadline(after: requestTimeout)) else { return response }
        shutdown(fd, Int32(SHUT_WR))
        drain(fd, until: Deadline(after: lingerTimeout), limit: lingerLimit, buffer: &buffer)
        return response
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], until deadline: Deadline) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if count > 0 {
                offset += count
            } else if count < 0 && (errno == EAGAIN || errno == EINTR) {
                guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return false }
            } else {
                return false
            }
        }
        return true
    }

    private static func drain(_ fd: Int32, until deadline: Deadline, limit: Int, buffer: inout [UInt8]) {
        var total = 0
        while total < limit, wait(fd, for: Int16(POLLIN), until: deadline) {
            let count = read(fd, &buffer, buffer.count)
            if count > 0 {
                total += count
            } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                return
            }
        }
    }

    /// Waits until `fd` is ready for `events` (or has an error or hang-up); false at the deadline.
    private static func wait(_ fd: Int32, for events: Int16, until deadline: Deadline) -> Bool {
        while true {
            let remaining = deadline.remainingMilliseconds
            if remaining <= 0 { return false }
            var entry = pollfd(fd: fd, events: events, revents: 0)
            let rc = poll(&entry, 1, remaining)
            if rc > 0 { return true }
            if rc < 0 && errno != EINTR { return false }
        }
    }
}

/// A point on the monotonic clock.
struct Deadline {
    let nanoseconds: UInt64

    init(after duration: Duration) {
        let (seconds, attoseconds) = duration.components
        nanoseconds = Self.now + UInt64(max(seconds, 0)) * 1_000_000_000 + UInt64(max(attoseconds, 0) / 1_000_000_000)
    }

    var remainingMilliseconds: Int32 {
        let now = Self.now
        guard nanoseconds > now else { return 0 }
        return Int32(min((nanoseconds - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    private static var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
