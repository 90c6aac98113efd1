import CLISupport
import Foundation
import Glibc
import Testing

@Suite struct TerminalPromptTests {
    /// A pipe already holding `input` (write end closed when `close` is true), and one to catch output.
    private func pipes(_ input: String) throws -> (input: Int32, output: (Int32, Int32)) {
        try pipes(bytes: Array(input.utf8))
    }

    private func pipes(bytes: [UInt8]) throws -> (input: Int32, output: (Int32, Int32)) {
        let inPipe = try makePipe()
        try FileDescriptorWriter.writeAll(fd: inPipe.write, bytes: bytes)
        close(inPipe.write)
        let outPipe = try makePipe()
        return (inPipe.read, (outPipe.read, outPipe.write))
    }

    private func readAll(_ fd: Int32) -> String {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1024)
        while true {
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else { break }
            bytes += buffer[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func readsLinesFromAPipeWithoutConsumingPastTheNewline() throws {
        let (input, output) = try pipes("first\nsecond\r\nthird")
        defer {
            close(input)
            close(output.0)
        }
        #expect(try TerminalPrompt.readLine(prompt: "A? ", echo: true, input: input, output: output.1) == "first")
        #expect(try TerminalPrompt.readLine(prompt: "B? ", echo: false, input: input, output: output.1) == "second")
        #expect(try TerminalPrompt.readLine(prompt: "C? ", echo: true, input: input, output: output.1) == "third")
        #expect(try TerminalPrompt.readLine(prompt: "D? ", echo: true, input: input, output: output.1) == nil)
        close(output.1)
        // Not a terminal: no echo handling, so no extra newline after the secret.
        #expect(readAll(output.0) == "A? B? C? D? ")
    }

    @Test func emptyLineIsEmptyNotEOF() throws {
        let (input, output) = try pipes("\n")
        defer {
            close(input)
            close(output.0)
            close(output.1)
        }
        #expect(try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1) == "")
        #expect(try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1) == nil)
    }

    @Test func lineLengthLimit() throws {
        let limit = TerminalPrompt.maximumLineLength
        #expect(limit == 4096)
        let exact = String(repeating: "a", count: limit)
        let (input, output) = try pipes(exact + "\n" + exact + "b\n")
        defer {
            close(input)
            close(output.0)
            close(output.1)
        }
        #expect(try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1) == exact)
        #expect(throws: PromptError.self) {
            try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1)
        }
        // Reading stopped at the first byte over the limit; the rest of that line is still there.
        #expect(try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1) == "")
    }

    @Test func overLongInputThrowsLineTooLong() throws {
        // Well over the limit, and still small enough to sit in the pipe before anyone reads.
        let (input, output) = try pipes(String(repeating: "x", count: 10_000))
        defer {
            close(input)
            close(output.0)
            close(output.1)
        }
        do {
            _ = try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1)
            Issue.record("expected lineTooLong")
        } catch {
            #expect(error.kind == .lineTooLong)
        }
    }

    @Test func invalidUTF8IsRejected() throws {
        let (input, output) = try pipes(bytes: [0x66, 0xFF, 0xFE, 0x0A])
        defer {
            close(input)
            close(output.0)
            close(output.1)
        }
        do {
            _ = try TerminalPrompt.readLine(prompt: "", echo: true, input: input, output: output.1)
            Issue.record("expected invalidEncoding")
        } catch {
            #expect(error.kind == .invalidEncoding)
        }
    }

    @Test(
        "confirm: only y/yes (any case, trimmed) is yes; EOF is no",
        arguments: [
            ("y\n", true), ("YES\n", true), (" yes \n", true), ("Yes", true), ("n\n", false), ("\n", false),
            ("", false), ("yes please\n", false), ("ye\n", false), ("no\n", false),
        ])
    func confirm(input: String, expected: Bool) throws {
        let (fd, output) = try pipes(input)
        defer {
            close(fd)
            close(output.0)
        }
        #expect(TerminalPrompt.confirm(prompt: "Trust this host? [y/N] ", input: fd, output: output.1) == expected)
        close(output.1)
        #expect(readAll(output.0) == "Trust this host? [y/N] ")
    }
}

extension InProcessTerminalTests {
    @Suite struct TerminalPromptOnAPseudoTerminalTests {
        /// Runs a prompt on a thread of its own (it blocks in read, which must not happen on the
        /// cooperative pool); the returned function waits for the answer without blocking a thread.
        private func prompt(_ pty: PseudoTerminal, echo: Bool) -> @Sendable () async throws -> String? {
            let result = LockedBox<Result<String?, PromptError>?>(nil)
            let slave = pty.slave
            Thread {
                result.set(
                    Result { () throws(PromptError) in
                        try TerminalPrompt.readLine(prompt: "Password: ", echo: echo, input: slave, output: slave)
                    })
            }.start()
            return {
                for _ in 0..<1000 {
                    if let answer = result.get() { return try answer.get() }
                    try await Task.sleep(for: .milliseconds(10))
                }
                throw PromptTimedOut()
            }
        }

        @Test func secretPromptTurnsEchoOffWhileReadingAndRestoresIt() async throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            let answer = prompt(pty, echo: false)
            #expect(try pty.waitFor { !$0.has(lflag: ECHO) })
            let during = try pty.snapshot()
            #expect(during.has(lflag: ICANON) && during.has(lflag: ISIG))  // line editing and Ctrl+C stay
            try pty.type("s3cret\n")
            #expect(try await answer() == "s3cret")
            #expect(try pty.snapshot() == original)
            let shown = pty.drainOutput()
            #expect(shown == "Password: \r\n")  // the prompt and our newline; the secret never echoed
        }

        @Test func plainPromptEchoes() async throws {
            let pty = try PseudoTerminal()
            let original = try pty.snapshot()
            let answer = prompt(pty, echo: true)
            try pty.type("alice\n")
            #expect(try await answer() == "alice")
            #expect(try pty.snapshot() == original)
            #expect(pty.drainOutput().contains("alice"))
        }
    }
}

/// A value shared between a thread and the test.
final class LockedBox<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func get() -> Value { lock.withLock { value } }
    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}

struct PromptTimedOut: Error {}
