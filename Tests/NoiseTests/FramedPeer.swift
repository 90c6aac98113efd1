import Foundation
import Glibc
import TestSupport

/// A child process spoken to in frames of a 4-byte big-endian length then the bytes, over a Unix
/// socket pair on its stdin and stdout (a socket, so a peer that dies gives EPIPE, not SIGPIPE).
/// Every wait is bounded by `timeout`; stderr is collected for failure messages.
final class FramedPeer {
    let child: ChildProcess
    private let socket: Int32
    private let stderrRead: Int32
    private let timeout: Double
    private var buffered: [UInt8] = []

    init(_ executable: String, _ arguments: [String], timeout: Double = 20) throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw FixtureError("socketpair: \(String(cString: strerror(errno)))")
        }
        let stderrPipe: PipePair
        do {
            stderrPipe = try PipePair()
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        do {
            child = try ChildProcess(executable, arguments, stdin: fds[1], stdout: fds[1], stderr: stderrPipe.write)
        } catch {
            for fd in [fds[0], fds[1], stderrPipe.read, stderrPipe.write] { close(fd) }
            throw error
        }
        close(fds[1])
        close(stderrPipe.write)
        socket = fds[0]
        stderrRead = stderrPipe.read
        self.timeout = timeout
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
    }

    deinit {
        child.signal(SIGKILL)
        child.wait()
        close(socket)
        close(stderrRead)
    }

    func send(_ frame: [UInt8]) throws {
        let length = UInt32(frame.count)
        let bytes =
            [UInt8(length >> 24), UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff)] + frame
        var offset = 0
        let deadline = Date().addingTimeInterval(timeout)
        while offset < bytes.count {
            try wait(for: Int16(POLLOUT), until: deadline)
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && errno != EAGAIN && errno != EINTR {
                throw FixtureError("send to peer: \(String(cString: strerror(errno))); peer stderr: \(stderrText())")
            }
        }
    }

    func receive() throws -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        let header = try readExact(4, until: deadline)
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        return try readExact(length, until: deadline)
    }

    /// Waits for the peer to exit; returns its status and stderr.
    func finish() throws -> (status: Int32, stderr: String) {
        guard let status = child.wait(timeout: timeout) else {
            child.signal(SIGKILL)
            throw FixtureError("peer did not exit within \(timeout) s; stderr: \(stderrText())")
        }
        return (status, stderrText())
    }

    private func readExact(_ count: Int, until deadline: Date) throws -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        while buffered.count < count {
            try wait(for: Int16(POLLIN), until: deadline)
            let n = recv(socket, &chunk, chunk.count, 0)
            if n > 0 {
                buffered += chunk[..<n]
            } else if n == 0 {
                throw FixtureError(
                    "peer closed the pipe; status \(child.wait(timeout: 5).map(String.init) ?? "running"); stderr: \(stderrText())"
                )
            } else if errno != EAGAIN && errno != EINTR {
                throw FixtureError("recv from peer: \(String(cString: strerror(errno)))")
            }
        }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    private func wait(for events: Int16, until deadline: Date) throws {
        var descriptor = pollfd(fd: socket, events: events, revents: 0)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw FixtureError("peer did not answer within \(timeout) s; stderr: \(stderrText())")
            }
            let ready = poll(&descriptor, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready > 0 { return }
        }
    }

    /// What the peer wrote on stderr so far (non-blocking once it has exited).
    private func stderrText() -> String {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        _ = fcntl(stderrRead, F_SETFL, fcntl(stderrRead, F_GETFL) | O_NONBLOCK)
        while true {
            let n = read(stderrRead, &chunk, chunk.count)
            guard n > 0 else { break }
            output += chunk[..<n]
        }
        return String(decoding: output, as: UTF8.self)
    }
}
