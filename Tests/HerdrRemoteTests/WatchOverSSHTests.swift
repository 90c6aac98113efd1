import Foundation
import TestSupport
import Testing

/// `watch` and `connect --agent` over the SSH road, the herdr stand-in behind the test sshd: a
/// status change there reaches the device and is told every way it is told.
@Suite("herdr-remote watch and connect --agent over SSH", .serialized)
struct WatchOverSSHTests {
    static func watchedServer() throws -> SSHServer {
        let server = try SSHServer()
        try server.herdr.startSession()
        try server.herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .idle)
        try server.herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working, title: "Refactor")
        return server
    }

    @Test(
        "without a terminal: a line per event, notify-send and --exec with the details, when an agent becomes blocked")
    func linesNotificationAndExec() throws {
        let server = try Self.watchedServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)
        let recorders = try WatchRecorders()
        let watch = try InteractiveProcess(
            CLIHarness.executable, ["watch", "box", "--interval", "1", "--exec", recorders.exec],
            environment: cli.environment.merging(recorders.environment) { $1 })
        defer { watch.signal(SIGKILL) }
        #expect(watch.waitFor("box: watching (2 agents)"), "\(watch.stderr)")

        try server.herdr.setStatus(pane: "w1:p2", .blocked, title: "Approve edit?")
        #expect(watch.waitFor(" box default/w1:p2 blocked working claude-2\n"), "\(watch.stdout)\(watch.stderr)")
        let notified = recorders.wait(for: "\n", in: recorders.notifications)
        #expect(
            notified
                == "-a|herdr-remote|-u|critical|box: claude-2 needs you|default/w1:p2 · claude · was working · Approve edit?|\n"
        )
        let executed = recorders.wait(for: "---", in: recorders.executions)
        for line in [
            "HERDR_COMPUTER=box", "HERDR_SESSION=default", "HERDR_PANE=w1:p2", "HERDR_TARGET=default/w1:p2",
            "HERDR_AGENT=claude-2", "HERDR_KIND=claude", "HERDR_STATUS=blocked", "HERDR_PREVIOUS_STATUS=working",
            "HERDR_TITLE=Approve edit?",
        ] {
            #expect(executed?.contains(line + "\n") == true, "\(line) in \(executed ?? "nothing")")
        }

        // done is told too; idle is not.
        try server.herdr.setStatus(pane: "w1:p1", .done)
        #expect(watch.waitFor(" box default/w1:p1 done idle claude-1\n"))
        try server.herdr.setStatus(pane: "w1:p2", .idle)
        try server.herdr.setStatus(pane: "w1:p1", .blocked)
        #expect(watch.waitFor(" box default/w1:p1 blocked done claude-1\n"))
        #expect(!watch.stdout.contains(" idle blocked "))

        watch.signal(SIGINT)
        #expect(watch.wait() == 130)
    }

    @Test(
        "on a terminal: the board, the bell and the OSC 777 and OSC 9 escapes; q quits and leaves the alternate screen")
    func boardEscapes() throws {
        let server = try Self.watchedServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)
        let recorders = try WatchRecorders()
        // script(1) gives the program a pseudo-terminal and copies everything it writes.
        let command = "\(CLIHarness.executable) watch box --interval 1; echo WATCH-EXIT=$?"
        let watch = try InteractiveProcess(
            "script", ["-q", "-f", "-e", "-c", command, "/dev/null"],
            environment: cli.environment.merging(
                recorders.environment.merging(["COLUMNS": "120", "LINES": "30", "TERM": "xterm"]) { $1 }
            ) { $1 })
        defer { watch.signal(SIGKILL) }
        #expect(watch.waitFor("claude-2"), "\(watch.stdout)")
        #expect(watch.stdout.contains("\u{1B}[?1049h"))

        try server.herdr.setStatus(pane: "w1:p2", .blocked)
        let escapes =
            "\u{07}\u{1B}]777;notify;box: claude-2 needs you;default/w1:p2 · claude · was working · Refactor\u{07}"
            + "\u{1B}]9;herdr: box: claude-2 needs you: default/w1:p2 · claude · was working · Refactor\u{07}"
        #expect(watch.waitFor(escapes), "\(watch.stdout.debugDescription)")
        #expect(recorders.wait(for: "box: claude-2 needs you", in: recorders.notifications) != nil)

        watch.writeLine("q")
        #expect(watch.waitFor("WATCH-EXIT=0"), "\(watch.stdout.debugDescription)")
        let out = watch.stdout
        let left = try #require(out.range(of: "\u{1B}[?1049l", options: .backwards))
        #expect(out[left.upperBound...].contains("WATCH-EXIT=0"))
        #expect(out.contains("\u{1B}[?25h"))
    }

    @Test("connect --agent lands in the agent's pane, by name or by pane id")
    func connectAgent() throws {
        let server = try Self.watchedServer()
        defer { server.destroy() }
        try server.herdr.startSession("work")
        try server.herdr.addAgent(session: "work", pane: "w1:p2", name: "codex-9", kind: "codex", status: .working)
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)

        for (target, session, pane) in [
            ("claude-2", "default", "w1:p2"), ("work/w1:p2", "work", "w1:p2"), ("codex-9", "work", "w1:p2"),
        ] {
            let connect = try InteractiveProcess(
                CLIHarness.executable, ["connect", "box", "--agent", target], environment: cli.environment)
            #expect(
                connect.waitFor("wN:pM$ ".replacingOccurrences(of: "wN:pM", with: pane)),
                "\(target): \(connect.stdout)\(connect.stderr)")
            #expect(server.herdr.attachedClients(session: session) == [pane], "\(target)")
            connect.signal(SIGTERM)
            #expect(connect.wait() == 143)
        }
    }

    @Test(
        "connect --agent with no such agent, or a name two agents share: exit 18 naming the candidates, nothing attached"
    )
    func connectAgentNotFound() throws {
        let server = try Self.watchedServer()
        defer { server.destroy() }
        try server.herdr.startSession("work")
        try server.herdr.addAgent(session: "work", pane: "w1:p7", name: "claude-2", status: .idle)
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)
        let absent = try cli.run(["connect", "box", "--agent", "nobody"])
        #expect(absent.status == 18)
        #expect(
            absent.stderr.contains(
                "box: no agent nobody; the computer's agents: default/w1:p2 (claude-2, working), default/w1:p1 (claude-1, idle), work/w1:p7 (claude-2, idle)"
            ), "\(absent.stderr)")
        let twice = try cli.run(["connect", "box", "--agent", "claude-2"])
        #expect(twice.status == 18)
        #expect(twice.stderr.contains("claude-2 names 2 agents"), "\(twice.stderr)")
        // A bare pane id is looked for in the host's session first (herdr's default here).
        let pane = try InteractiveProcess(
            CLIHarness.executable, ["connect", "box", "--agent", "w1:p1"], environment: cli.environment)
        #expect(pane.waitFor("w1:p1$ "), "\(pane.stdout)\(pane.stderr)")
        pane.signal(SIGTERM)
        #expect(pane.wait() == 143)
        let bad = try cli.run(["connect", "box", "--agent", "no/such/../x"])
        #expect(bad.status == 64)
    }

    @Test(
        "the board in a real terminal: Enter opens the chosen agent's pane, ~. comes back to the board, q restores the terminal"
    )
    func boardOpensAnAgent() throws {
        let server = try Self.watchedServer()
        defer { server.destroy() }
        try server.herdr.setStatus(pane: "w1:p1", .blocked)
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)
        let scratch = try TemporaryDirectory()
        let terminal = try InteractiveTerminalTests.LocalTerminal(cli: cli, directory: scratch)
        try terminal.type(
            "\(CLIHarness.executable) watch box --no-notify; echo EXIT=$?; \(InteractiveTerminalTests.printModes)")
        try terminal.waitFor("herdr-remote watch")
        // Blocked first: row 1 is claude-1; the second row is chosen by its number.
        try terminal.waitFor("1  box       default  w1:p1  claude-1")
        try terminal.type("2", enter: false)
        try terminal.waitFor(">  2  box")
        try terminal.type("", enter: true)
        try terminal.waitFor("w1:p2$")
        #expect(server.herdr.attachedClients() == ["w1:p2"])
        // As with ssh, ~. counts after a newline (tmux's queries and the terminal's answers came before).
        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("back from claude-2 on box")
        #expect(server.herdr.attachedClients().isEmpty)
        // The agent's terminal ending on its own (the client detached there) comes back too.
        try terminal.type("k", enter: false)
        try terminal.waitFor(">  1  box")
        try terminal.type("", enter: true)
        try terminal.waitFor("w1:p1$")
        server.herdr.detachClients()
        try terminal.waitFor("claude-1 on box")
        try terminal.waitFor("herdr-remote watch ·")
        try terminal.type("q", enter: false)
        try terminal.waitFor("EXIT=0")
        try terminal.waitFor("MODES=isig,icanon,echo.")
    }
}
