import Foundation
import Glibc

/// A running herdr-link, driven through its control channel: one command line in, one answer
/// line out. It is spawned from a thread of its own that lives until `stop()`, since its
/// parent-death signal comes when the spawning thread ends.
public final class LinkEmulatorProcess: @unchecked Sendable {
    public static var executable: String { BuiltProgram.path("herdr-link") }

    public let process: ChildProcess
    private var control: Int32
    private var answers: Int32
    private var diagnostics: Int32
    private var pending: [UInt8] = []
    private let parent: ParkedThread
    private let lock = NSLock()

    /// Starts `executable` with `arguments` and waits for its `ok ready`.
    public init(_ arguments: [String], executable: String = LinkEmulatorProcess.executable) throws {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair(nonBlockingRead: true)
        let parent = ParkedThread()
        do {
            let (input, output, errors) = (stdin.read, stdout.write, stderr.write)
            process = try parent.spawn {
                try ChildProcess(executable, arguments, stdin: input, stdout: output, stderr: errors)
            }
        } catch {
            for fd in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] { close(fd) }
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        self.parent = parent
        control = stdin.write
        answers = stdout.read
        diagnostics = stderr.read
        do {
            let ready = try readAnswer(timeout: 20)
            guard ready.hasPrefix("ok ready") else {
                throw FixtureError("herdr-link did not start: \(ready) \(RelayProcess.drain(diagnostics))")
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit { stop() }

    /// Sends one command line and returns its answer (`ok …`); throws on `error: …`.
    @discardableResult
    public func command(_ line: String) throws -> String {
        try lock.withLock {
            guard control >= 0 else { throw FixtureError("herdr-link is stopped") }
            let bytes = Array((line + "\n").utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(control, $0.baseAddress, $0.count) }
                guard written > 0 else {
                    throw FixtureError("writing to herdr-link: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
            let answer = try readAnswer(timeout: 10)
            guard answer.hasPrefix("ok") else { throw FixtureError("herdr-link: \(line) → \(answer)") }
            return answer
        }
    }

    private func readAnswer(timeout: Double) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw FixtureError("herdr-link did not answer within \(timeout) s") }
            var ready = pollfd(fd: answers, events: Int16(POLLIN), revents: 0)
            let polled = poll(&ready, 1, Int32(remaining * 1000) + 1)
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { continue }
            let got = read(answers, &chunk, chunk.count)
            guard got > 0 else { throw FixtureError("herdr-link ended: \(RelayProcess.drain(diagnostics))") }
            pending += chunk[0..<got]
        }
    }

    /// Closes its input (it exits by itself then), SIGKILLs it after 5 s if not, and lets its
    /// parent thread end. Idempotent.
    public func stop() {
        let input: Int32 = lock.withLock {
            defer { control = -1 }
            return control
        }
        guard input >= 0 else { return }
        close(input)
        if process.wait(timeout: 5) == nil {
            process.signal(SIGKILL)
            process.wait()
        }
        parent.release()
        close(answers)
        close(diagnostics)
    }
}
