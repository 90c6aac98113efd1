import CLISupport
import Dispatch
import Foundation
import Glibc
import Testing

/// What a child started by ``ChildProcess`` does. In a normal test run (no role in the
/// environment) this test does nothing and passes.
@Suite struct ChildProcessEntryPoint {
    @Test("child-process entry point (no-op unless started by another test)")
    func childProcessEntryPoint() throws {
        guard let role = ProcessInfo.processInfo.environment[ChildProcess.roleVariable] else { return }
        // No core files from the SIGQUIT cases.
        var noCore = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(Int32(RLIMIT_CORE.rawValue), &noCore)
        // The pty becomes the controlling terminal (the child leads its own session), so its
        // foreground process group gets the signals of keys like Ctrl+C.
        guard ioctl(STDIN_FILENO, UInt(TIOCSCTTY), 0) == 0 else { exit(93) }
        switch role {
        case "raw-then-wait":
            let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
            report("ready")
            withExtendedLifetime(raw) { waitToBeKilled() }
        case "ignored-hup-then-raw":
            // As under nohup: an ignored signal must stay ignored.
            signal(SIGHUP, SIG_IGN)
            let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
            report("ready")
            withExtendedLifetime(raw) { waitToBeKilled() }
        case "raw-then-read":
            let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
            report("ready")
            var byte: UInt8 = 0
            let count = read(STDIN_FILENO, &byte, 1)
            raw.restore()
            report("read \(count) byte \(byte)")
            exit(0)
        case "raw-then-exit":
            let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
            report("ready")
            // Leave without restore() and without deinit: only the atexit hook can save the terminal.
            withExtendedLifetime(raw) { exit(0) }
        case "watch-cancel-then-raw":
            let arrived = DispatchSemaphore(value: 0)
            let watcher = try SignalWatcher(signals: [SIGTERM], queue: DispatchQueue(label: "child")) { signal in
                report("got \(signal)")
                arrived.signal()
            }
            report("watching")
            guard arrived.wait(timeout: .now() + 20) == .success else { exit(90) }
            watcher.cancel()
            let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
            report("ready")
            withExtendedLifetime(raw) { waitToBeKilled() }
        case "secret-prompt":
            let answer = try TerminalPrompt.readLine(
                prompt: "Password: ", echo: false, input: STDIN_FILENO, output: STDIN_FILENO)
            report("answered \(answer ?? "<eof>")")
            exit(0)
        default:
            exit(91)
        }
    }

}

/// Tells the parent how far the child got.
private func report(_ line: String) {
    try? FileDescriptorWriter.writeAll(fd: ChildProcess.reportDescriptor, string: line + "\n")
}

/// Sleeps until a signal ends the process; exits with a distinctive code if none comes.
private func waitToBeKilled() -> Never {
    for _ in 0..<600 { usleep(100_000) }
    exit(92)
}
