import Foundation
import TestSupport
import Testing

/// `connect` in a real terminal: a headless local tmux plays the person's terminal emulator.
@Suite("herdr-remote connect in a terminal")
struct InteractiveTerminalTests {
    /// A local tmux session running bash, with the harness's config in its environment.
    final class LocalTerminal {
        let socket: String
        init(cli: CLIHarness, directory: TemporaryDirectory) throws {
            socket = directory.file("local-tmux.sock").path
            try tmux([
                "-f", "/dev/null", "new-session", "-d", "-x", "100", "-y", "30", "-s", "local",
                "-e", "XDG_CONFIG_HOME=\(cli.config.path)", "-e", "PS1=$ ", "bash --norc --noprofile",
            ])
        }
        deinit { _ = try? tmux(["kill-server"]) }

        @discardableResult
        func tmux(_ arguments: [String]) throws -> ProcessResult {
            try ProcessRunner.run("tmux", ["-S", socket] + arguments, timeout: 10, check: true)
        }
        func type(_ keys: String, enter: Bool = true) throws {
            try tmux(["send-keys", "-t", "local", "-l", keys])
            if enter { try tmux(["send-keys", "-t", "local", "Enter"]) }
        }
        var screen: String { (try? tmux(["capture-pane", "-p", "-t", "local"]).stdout) ?? "" }
        var paneTTY: String {
            (try? tmux(["display", "-p", "-t", "local", "#{pane_tty}"]).stdout.trimmingCharacters(
                in: .whitespacesAndNewlines)) ?? ""
        }

        func waitFor(_ text: String, timeout: Double = 20) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while !screen.contains(text) {
                guard Date() < deadline else {
                    throw FixtureError("timed out waiting for \(text.debugDescription); screen:\n\(screen)")
                }
                usleep(50_000)
            }
        }
    }

    /// Prints `MODES=isig,icanon,echo.` (stty's order) when the terminal is in its normal cooked mode.
    static let printModes =
        "echo MODES=$(stty -a | tr ' ;' '\\n\\n' | grep -x -e '-\\?icanon' -e '-\\?echo' -e '-\\?isig' | paste -sd, -)."

    static func ttyModes(_ tty: String) throws -> String {
        try ProcessRunner.run("stty", ["-F", tty, "-a"], check: true).stdout
    }

    @Test("raw mode while connected, window-change on resize, ~. disconnects and the terminal is restored")
    func rawModeResizeEscapeRestore() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "PS1='remote> ' exec sh -i"])
        let scratch = try TemporaryDirectory()
        let terminal = try LocalTerminal(cli: cli, directory: scratch)
        let tty = terminal.paneTTY
        // What the terminal is left in is checked by the next command, before bash's readline touches it.
        try terminal.type(
            "\(CLIHarness.executable) connect box --accept-new-host-key; echo EXIT=$?; \(Self.printModes)")
        try terminal.waitFor("remote>")
        let modes = try Self.ttyModes(tty)
        #expect(modes.contains("-icanon") && modes.contains("-echo ") && modes.contains("-isig"))

        try terminal.type("stty size")
        try terminal.waitFor("30 100")
        try terminal.tmux(["resize-window", "-t", "local", "-x", "120", "-y", "40"])
        usleep(300_000)
        try terminal.type("stty size")
        try terminal.waitFor("40 120")

        try terminal.type("~.", enter: false)
        try terminal.waitFor("EXIT=0")
        try terminal.waitFor("MODES=isig,icanon,echo.")
    }

    @Test("SIGTERM while connected exits 143 and restores the terminal")
    func sigtermRestores() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "PS1='remote> ' exec sh -i"])
        let scratch = try TemporaryDirectory()
        let terminal = try LocalTerminal(cli: cli, directory: scratch)
        // Started in the foreground group of bash (so it owns the terminal), its PID written to a file.
        let pidFile = scratch.file("pid").path
        try terminal.type(
            "sh -c 'echo $$ > \(pidFile); exec \(CLIHarness.executable) connect box --accept-new-host-key'; echo EXIT=$?; \(Self.printModes)"
        )
        try terminal.waitFor("remote>")
        let pid = try #require(
            Int32(try readText(URL(fileURLWithPath: pidFile)).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGTERM)
        try terminal.waitFor("EXIT=143")
        try terminal.waitFor("MODES=isig,icanon,echo.")
    }
}
