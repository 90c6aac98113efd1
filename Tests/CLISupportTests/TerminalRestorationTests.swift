import CLISupport
import Glibc
import Testing

/// The exit paths of a real process holding a real pseudo-terminal in raw mode (or with echo off):
/// the terminal must come back exactly as it was, and the process must still die of the signal.
@Suite struct TerminalRestorationTests {
    @Test(
        "a terminating signal restores the terminal, then kills the process with that signal",
        arguments: [SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1])
    func signalRestoresTerminal(signal: Int32) throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "raw-then-wait", stdin: pty.slave)
        #expect(child.nextReport() == "ready")
        let raw = try pty.snapshot()
        #expect(!raw.has(lflag: ECHO) && !raw.has(lflag: ICANON) && !raw.has(lflag: ISIG))
        child.send(signal)
        #expect(child.wait() == .signaled(signal))
        #expect(try pty.snapshot() == original)
    }

    @Test("in raw mode Ctrl+C is a byte for the program, not a signal")
    func rawModeDeliversControlCAsByte() throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "raw-then-read", stdin: pty.slave)
        #expect(child.nextReport() == "ready")
        try pty.type("\u{03}")
        #expect(child.nextReport() == "read 1 byte 3")
        #expect(child.wait() == .exited(0))
        #expect(try pty.snapshot() == original)
    }

    @Test("a signal the process ignored stays ignored, and does not restore the terminal under it")
    func ignoredSignalStaysIgnored() async throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "ignored-hup-then-raw", stdin: pty.slave)
        #expect(child.nextReport() == "ready")
        child.send(SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        #expect(kill(child.pid, 0) == 0)  // still alive
        #expect(try !pty.snapshot().has(lflag: ICANON))  // still raw
        child.send(SIGTERM)
        #expect(child.wait() == .signaled(SIGTERM))
        #expect(try pty.snapshot() == original)
    }

    @Test("exit() without restore() restores the terminal through the atexit hook")
    func exitRestoresTerminal() throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "raw-then-exit", stdin: pty.slave)
        #expect(child.nextReport() == "ready")
        #expect(child.wait() == .exited(0))
        #expect(try pty.snapshot() == original)
    }

    @Test("a watched SIGTERM does not kill; after cancel, SIGTERM kills again and restores the terminal")
    func watcherSuppressesThenReleasesDefault() throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "watch-cancel-then-raw", stdin: pty.slave)
        #expect(child.nextReport() == "watching")
        child.send(SIGTERM)
        #expect(child.nextReport() == "got \(SIGTERM)")
        #expect(child.nextReport() == "ready")
        #expect(try !pty.snapshot().has(lflag: ICANON))
        child.send(SIGTERM)
        #expect(child.wait() == .signaled(SIGTERM))
        #expect(try pty.snapshot() == original)
    }

    @Test("Ctrl+C during a secret prompt brings echo back")
    func interruptedSecretPromptRestoresEcho() throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        #expect(original.has(lflag: ECHO))
        let child = try ChildProcess.start(role: "secret-prompt", stdin: pty.slave)
        #expect(try pty.waitFor { !$0.has(lflag: ECHO) })
        // ISIG stays on for prompts: the interrupt character is turned into SIGINT by the terminal.
        try pty.type("\u{03}")
        #expect(child.wait() == .signaled(SIGINT))
        let after = try pty.snapshot()
        #expect(after.has(lflag: ECHO))
        #expect(after == original)
    }

    @Test("a secret prompt in a child process answers and leaves the terminal as it was")
    func secretPromptAnswers() throws {
        let pty = try PseudoTerminal()
        let original = try pty.snapshot()
        let child = try ChildProcess.start(role: "secret-prompt", stdin: pty.slave)
        #expect(try pty.waitFor { !$0.has(lflag: ECHO) })
        try pty.type("hunter2\n")
        #expect(child.nextReport() == "answered hunter2")
        #expect(child.wait() == .exited(0))
        #expect(try pty.snapshot() == original)
        let shown = pty.drainOutput()
        #expect(shown.contains("Password: "))
        #expect(!shown.contains("hunter2"))
    }
}
