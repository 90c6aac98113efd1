import Glibc

/// Asks a person a question on the terminal: a host key to trust, a password, a yes/no.
///
/// Like `ssh` asking for a password, the question goes to the controlling terminal (`/dev/tty`)
/// when there is one, so it works while stdin and stdout are redirected; without one (a script, a
/// test) it reads stdin and writes the question to stderr.
///
/// Reading blocks the calling thread: from async code, call it from a thread of its own rather than
/// from Swift's cooperative pool.
public enum TerminalPrompt {
    /// The longest answer accepted, in bytes without the newline. A longer line is an error rather
    /// than an ever-growing buffer (a pipe can deliver without end).
    public static let maximumLineLength = 4096

    /// Asks on `/dev/tty`, or on stdin/stderr when there is no controlling terminal.
    ///
    /// - Returns: the line without its line ending, or `nil` at end of input before any byte.
    public static func readLine(prompt: String, echo: Bool = true) throws(PromptError) -> String? {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard tty >= 0 else {
            return try readLine(prompt: prompt, echo: echo, input: STDIN_FILENO, output: STDERR_FILENO)
        }
        defer { close(tty) }
        return try readLine(prompt: prompt, echo: echo, input: tty, output: tty)
    }

    /// Writes `prompt` to `output` and reads one line from `input`.
    ///
    /// With `echo` false and `input` a terminal, echo is off while reading (the person's Enter is
    /// then not echoed either, so a newline is written after the answer) and typed-ahead input is
    /// discarded first, as `readpassphrase(3)` does. The terminal state is registered with the
    /// same process-wide handler as ``RawTerminalMode``, so echo comes back on every exit path:
    /// normal return, thrown error, `exit`, and a terminating signal such as Ctrl+C.
    ///
    /// The line is read one byte at a time, so nothing after the newline is consumed from `input`.
    /// A trailing `\r` (CRLF input) is dropped.
    ///
    /// - Returns: the line, or `nil` at end of input before any byte.
    /// - Throws: ``PromptError`` for a line over ``maximumLineLength`` bytes, invalid UTF-8, or I/O errors.
    public static func readLine(prompt: String, echo: Bool, input: Int32, output: Int32) throws(PromptError)
        -> String?
    {
        do {
            try FileDescriptorWriter.writeAll(fd: output, string: prompt)
        } catch {
            throw PromptError(error)
        }
        guard !echo, RawTerminalMode.isTerminal(fd: input) else { return try readBoundedLine(input) }

        let original: termios
        do {
            original = try TerminalAttributes.get(input)
        } catch {
            throw PromptError(error)
        }
        guard let slot = ProcessSignalRegistry.registerTerminal(fd: input, saved: original) else {
            throw PromptError(.inputOutput, "too many terminal states registered")
        }
        defer {
            try? TerminalAttributes.set(input, original)
            ProcessSignalRegistry.unregisterTerminal(slot: slot)
            // The Enter that ended the answer was not echoed; end the prompt's line for it.
            try? FileDescriptorWriter.writeAll(fd: output, string: "\n")
        }
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        do {
            try TerminalAttributes.set(input, silent, when: TCSAFLUSH)
        } catch {
            throw PromptError(error)
        }
        return try readBoundedLine(input)
    }

    /// Asks a yes/no question; only `y` or `yes` (any case, surrounding spaces ignored) is yes.
    /// End of input, any other answer, and any error are no.
    public static func confirm(prompt: String) -> Bool {
        isYes((try? readLine(prompt: prompt)) ?? nil)
    }

    /// ``confirm(prompt:)`` on the given descriptors.
    public static func confirm(prompt: String, input: Int32, output: Int32) -> Bool {
        isYes((try? readLine(prompt: prompt, echo: true, input: input, output: output)) ?? nil)
    }

    static func isYes(_ answer: String?) -> Bool {
        guard let answer else { return false }
        let word = answer.trimmingWhitespace().lowercased()
        return word == "y" || word == "yes"
    }

    /// Reads up to a newline or end of input, never holding more than ``maximumLineLength`` bytes.
    private static func readBoundedLine(_ fd: Int32) throws(PromptError) -> String? {
        var line: [UInt8] = []
        var sawEnd = false
        while true {
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0 {
                if errno == EINTR { continue }
                throw PromptError(SystemError.fromErrno("read"))
            }
            if count == 0 {
                sawEnd = true
                break
            }
            if byte == UInt8(ascii: "\n") { break }
            guard line.count < maximumLineLength else {
                throw PromptError(.lineTooLong, "the answer is longer than \(maximumLineLength) bytes")
            }
            line.append(byte)
        }
        if sawEnd && line.isEmpty { return nil }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        guard let text = String(validating: line, as: UTF8.self) else {
            throw PromptError(.invalidEncoding, "the answer is not valid UTF-8")
        }
        return text
    }
}

extension String {
    /// The string without leading and trailing whitespace and newlines.
    func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }
}
