import Foundation
import Glibc

/// What a finished child process left behind.
public struct ProcessResult: Sendable {
    public let status: Int32
    public let stdoutBytes: [UInt8]
    public let stderrBytes: [UInt8]
    public var stdout: String { String(decoding: stdoutBytes, as: UTF8.self) }
    public var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }
}

/// Runs real programs for tests, with a bounded wait. It blocks the calling thread (on poll,
/// not on anything Swift concurrency must schedule), so it cannot deadlock the cooperative pool.
public enum ProcessRunner {
    /// Runs `executable` with `arguments`, feeding `input`, and waits at most `timeout` seconds
    /// (then kills it by PID and throws).
    @discardableResult
    public static func run(
        _ executable: String, _ arguments: [String] = [], environment: [String: String]? = nil,
        input: [UInt8] = [], currentDirectory: URL? = nil, timeout: Double = 30, check: Bool = false
    ) throws -> ProcessResult {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair()
        let child: ChildProcess
        do {
            child = try ChildProcess(
                executable, arguments, environment: environment, stdin: stdin.read, stdout: stdout.write,
                stderr: stderr.write,
                currentDirectory: currentDirectory)
        } catch {
            for fd in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] { close(fd) }
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        _ = fcntl(stdin.write, F_SETFL, fcntl(stdin.write, F_GETFL) | O_NONBLOCK)

        var pending = input[...]
        var writeFD: Int32 = stdin.write
        if pending.isEmpty {
            close(writeFD)
            writeFD = -1
        }
        var outputs: [[UInt8]] = [[], []]
        var open = [stdout.read, stderr.read]
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while open.contains(where: { $0 >= 0 }) || writeFD >= 0 {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                child.signal(SIGKILL)
                child.wait()
                for fd in open + [writeFD] where fd >= 0 { close(fd) }
                throw FixtureError(
                    "\(executable) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            fds.append(pollfd(fd: writeFD, events: Int16(POLLOUT), revents: 0))
            _ = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            for index in 0..<2 where open[index] >= 0 && fds[index].revents != 0 {
                let n = read(open[index], &buffer, buffer.count)
                if n > 0 {
                    outputs[index] += buffer[0..<n]
                } else if n == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(open[index])
                    open[index] = -1
                }
            }
            if writeFD >= 0 && fds[2].revents != 0 {
                let n = pending.withUnsafeBytes { write(writeFD, $0.baseAddress, $0.count) }
                if n > 0 { pending = pending.dropFirst(n) }
                if pending.isEmpty || (n < 0 && errno != EAGAIN && errno != EINTR) {
                    close(writeFD)
                    writeFD = -1
                }
            }
        }
        guard let status = child.wait(timeout: max(deadline.timeIntervalSinceNow, 1)) else {
            child.signal(SIGKILL)
            child.wait()
            throw FixtureError("\(executable) closed its output but did not exit within \(timeout) s")
        }
        let result = ProcessResult(status: status, stdoutBytes: outputs[0], stderrBytes: outputs[1])
        if check && result.status != 0 {
            throw FixtureError(
                "\(executable) \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result
    }

    /// The absolute path of a program on PATH (plus the sbin directories tests need).
    public static func which(_ name: String) throws -> String {
        let path =
            (ProcessInfo.processInfo.environment["PATH"] ?? "")
            + ":/usr/local/sbin:/usr/sbin:/sbin:/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        throw FixtureError("\(name) is not installed; run `make deps`")
    }
}
