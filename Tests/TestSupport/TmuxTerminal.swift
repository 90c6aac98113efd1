import Foundation
import Glibc

/// A real terminal for a test: a headless tmux on a socket of its own plays the terminal
/// emulator (a bash with no rc files in it), keys are typed with `send-keys`, and the screen is
/// read with `capture-pane`. Waits are on what the screen shows, bounded by a timeout.
public final class TmuxTerminal {
    public let socket: String

    /// A tmux of `width` × `height` running `command` (a shell command line) in its one pane.
    public init(
        directory: TemporaryDirectory, width: Int = 160, height: Int = 70, command: String = "bash --norc --noprofile"
    ) throws {
        socket = directory.file("local-tmux.sock").path
        try tmux([
            "-f", "/dev/null", "new-session", "-d", "-x", String(width), "-y", String(height), "-s", "local", "-e",
            "PS1=$ ", command,
        ])
    }

    deinit { _ = try? tmux(["kill-server"]) }

    @discardableResult
    public func tmux(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run("tmux", ["-S", socket] + arguments, timeout: 10, check: true)
    }

    /// Types `keys` literally, then Enter.
    public func type(_ keys: String, enter: Bool = true) throws {
        try tmux(["send-keys", "-t", "local", "-l", keys])
        if enter { try tmux(["send-keys", "-t", "local", "Enter"]) }
    }

    /// The screen with wrapped lines joined.
    public var screen: String { (try? tmux(["capture-pane", "-p", "-J", "-t", "local"]).stdout) ?? "" }

    /// Waits until the screen shows `text`.
    public func waitFor(_ text: String, timeout: Double = 30) throws {
        guard waitForScreen(timeout: timeout, { $0.contains(text) }) != nil else {
            throw FixtureError("timed out waiting for \(text.debugDescription); screen:\n\(screen)")
        }
    }

    /// The screen once `matches` holds for it, or nil after `timeout` seconds.
    public func waitForScreen(timeout: Double = 30, _ matches: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let current = screen
            if matches(current) { return current }
            guard Date() < deadline else { return nil }
            usleep(50_000)
        }
    }
}
