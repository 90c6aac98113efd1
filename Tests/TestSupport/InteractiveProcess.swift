import Foundation
import Glibc

/// A program run as a person would run it in a terminal without one: its stdin a pipe the test
/// writes lines to, its stdout and stderr collected as they come. Tests wait for what the program
/// says (never for a time): `waitFor` blocks until the text appears, or its timeout passes.
public final class InteractiveProcess: @unchecked Sendable {
    public let process: ChildProcess
    private var input: Int32
    /// What the reader threads fill. They hold only this, not the process object, so a test that
    /// drops an InteractiveProcess (a fixture that threw half-way) still kills its child.
    private final class Collected: @unchecked Sendable {
        let condition = NSCondition()
        var out: [UInt8] = []
        var err: [UInt8] = []
        var readers = 2
    }
    private let collected = Collected()
    private var condition: NSCondition { collected.condition }
    private var out: [UInt8] { collected.out }
    private var err: [UInt8] { collected.err }
    private var readers: Int { collected.readers }

    public init(_ executable: String, _ arguments: [String], environment: [String: String]) throws {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair()
        do {
            process = try ChildProcess(
                executable, arguments, environment: environment, stdin: stdin.read, stdout: stdout.write,
                stderr: stderr.write)
        } catch {
            for fd in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] { close(fd) }
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        input = stdin.write
        collect(stdout.read, isError: false)
        collect(stderr.read, isError: true)
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            _ = process.wait()
        }
        if input >= 0 { close(input) }
    }

    private func collect(_ fd: Int32, isError: Bool) {
        let thread = Thread { [collected] in
            var chunk = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(fd, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                collected.condition.lock()
                if count > 0 {
                    if isError { collected.err += chunk[0..<count] } else { collected.out += chunk[0..<count] }
                } else {
                    collected.readers -= 1
                }
                collected.condition.broadcast()
                collected.condition.unlock()
                if count <= 0 { break }
            }
            close(fd)
        }
        thread.start()
    }

    /// All of stdout so far.
    public var stdout: String { condition.withLock { String(decoding: out, as: UTF8.self) } }
    /// All of stdout so far, as bytes.
    public var stdoutBytes: [UInt8] { condition.withLock { out } }

    /// All of stderr so far.
    public var stderr: String { condition.withLock { String(decoding: err, as: UTF8.self) } }

    /// Waits until `matches` holds for (stdout, stderr), at most `timeout` seconds; whether it did.
    @discardableResult
    public func waitFor(timeout: Double = 30, _ matches: (_ stdout: String, _ stderr: String) -> Bool) -> Bool {
        waitForBytes(timeout: timeout) { out, err in
            matches(String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
        }
    }

    /// `waitFor` on the raw bytes, for output that is large or not text. `matches` runs with the
    /// collector held: it must not call back into this process's accessors.
    @discardableResult
    public func waitForBytes(timeout: Double = 30, _ matches: (_ stdout: [UInt8], _ stderr: [UInt8]) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if matches(out, err) { return true }
            if readers == 0 { return false }  // both streams ended: nothing more will come
            guard condition.wait(until: deadline) else { return matches(out, err) }
        }
    }

    /// Waits until stdout or stderr holds `text`.
    @discardableResult
    public func waitFor(_ text: String, timeout: Double = 30) -> Bool {
        waitFor(timeout: timeout) { $0.contains(text) || $1.contains(text) }
    }

    /// The first match of `pattern` in stdout + stderr once one appears (its first group if it has one).
    public func waitForMatch(_ pattern: String, timeout: Double = 30, after: Int = 0) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return nil }
        var found: String?
        waitFor(timeout: timeout) { out, err in
            let text = out + "\n" + err
            let matches = regex.matches(in: text, range: NSRange(text.startIndex..., in: text))
            guard matches.count > after else { return false }
            let match = matches[after]
            let range = match.numberOfRanges > 1 ? match.range(at: 1) : match.range
            found = Range(range, in: text).map { String(text[$0]) }
            return found != nil
        }
        return found
    }

    /// The `after`-th `herdr://companion?…` code (or web client address with a code after `#`) the
    /// program printed on stdout, once its line is whole: a code read while its line was still
    /// being written would be cut short.
    public func waitForCompanionCode(timeout: Double = 30, after: Int = 0) -> String? {
        guard let regex = try? NSRegularExpression(pattern: #"((?:herdr://companion\?|https?://\S*#v=)\S+)\r?\n"#)
        else { return nil }
        var found: String?
        waitFor(timeout: timeout) { out, _ in
            let matches = regex.matches(in: out, range: NSRange(out.startIndex..., in: out))
            guard matches.count > after else { return false }
            found = Range(matches[after].range(at: 1), in: out).map { String(out[$0]) }
            return found != nil
        }
        return found
    }

    /// Writes a line to the program's stdin.
    public func writeLine(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(input, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// Closes the program's stdin (end of input).
    public func closeInput() {
        guard input >= 0 else { return }
        close(input)
        input = -1
    }

    /// Waits for the exit status (nil if it did not end within `timeout`), then for what it wrote
    /// last to be read from its pipes (their end; at most a second more, for a child it left
    /// behind that holds them open), so `stdout` and `stderr` are whole when this returns.
    public func wait(timeout: Double = 30) -> Int32? {
        guard let status = process.wait(timeout: timeout) else { return nil }
        _ = waitForBytes(timeout: 1) { _, _ in false }
        return status
    }

    public func signal(_ number: Int32) { process.signal(number) }
}

extension NSCondition {
    fileprivate func withLock<T>(_ body: () -> T) -> T {
        lock()
        defer { unlock() }
        return body()
    }
}
