import Foundation
import Glibc
import TestSupport
import Testing

/// `herdr-remote connect --screen` with real processes: herdr-relay, herdr-host run, the herdr
/// stand-in's tmux on the computer (fed to libvterm), and a local tmux as the person's terminal.
/// The local terminal shows, cell by cell and attribute by attribute (`capture-pane -e`), what
/// the computer's tmux pane holds; a resize reaches the computer; `~.` gives the person's own
/// screen back.
@Suite(.serialized) struct ScreenConnectTests {
    /// The rows of a tmux pane, with their attributes as tmux writes them.
    static func rows(_ arguments: [String]) throws -> [String] {
        try ProcessRunner.run("tmux", arguments + ["capture-pane", "-p", "-e"]).stdout
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// Waits until the local terminal's top rows are the computer's pane (whose status line is
    /// the local terminal's last row); the last difference when they never are.
    static func waitUntilSame(
        local: TmuxTerminal, remoteSocket: String, target: String = "default", rows: Int
    ) throws -> String? {
        let deadline = Date().addingTimeInterval(30)
        var difference = ""
        while Date() < deadline {
            let remote = Array(try Self.rows(["-S", remoteSocket, "-t", target]).prefix(rows))
            let shown = Array(try Self.rows(["-S", local.socket, "-t", "local"]).prefix(rows))
            if remote == shown { return nil }
            let row =
                (0..<min(remote.count, shown.count)).first { remote[$0] != shown[$0] } ?? min(remote.count, shown.count)
            difference =
                "row \(row): computer \(remote.dropFirst(row).first.debugDescription), here \(shown.dropFirst(row).first.debugDescription)"
            usleep(100_000)
        }
        return difference
    }

    @Test func theComputersPaneIsDrawnHereCellByCellAndTheScreenIsGivenBack() throws {
        let road = try RelayRoadFixture()
        try road.useHerdrStandIn()
        try road.pair()
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let directory = try TemporaryDirectory(prefix: "screen-connect-")
        let terminal = try TmuxTerminal(directory: directory, width: 100, height: 30)
        try terminal.type("echo before-the-session")
        try terminal.type(
            "XDG_CONFIG_HOME=\(road.deviceHome("phone").path) \(BuiltProgram.path("herdr-remote")) connect studio --screen --predict always; echo rc=$?"
        )
        try terminal.waitFor("remote$ ")
        let socket = try #require(road.standInTmuxSocket)
        #expect(agent.waitFor("phone: started a screen session"), "\(agent.stderr)")

        // Colours, attributes, wide characters and combining marks, as the computer's tmux has them.
        try terminal.type(
            #"printf '\e[1;31mred\e[0m \e[4;38;5;208mamber\e[0m \e[7;48;2;10;20;30mrgb\e[0m 界 e\xcc\x81 %s\n' $((6*7))-screen"#
        )
        try terminal.waitFor("42-screen")
        let same = try Self.waitUntilSame(local: terminal, remoteSocket: socket, rows: 29)
        #expect(same == nil, "the local terminal is not the computer's pane: \(same ?? "")")

        // A resize travels; the computer's pane and the local terminal agree again at the new size.
        try terminal.tmux(["resize-window", "-t", "local", "-x", "80", "-y", "20"])
        let deadline = Date().addingTimeInterval(30)
        var size = ""
        while Date() < deadline, !size.hasPrefix("80x20") {
            usleep(50_000)
            size = try ProcessRunner.run(
                "tmux", ["-S", socket, "display", "-p", "-t", "default", "#{client_width}x#{client_height}"]
            ).stdout
        }
        #expect(size.hasPrefix("80x20"), "the computer's terminal took the new size: \(size)")
        try terminal.type("clear; stty size")
        try terminal.waitFor("19 80")
        let resized = try Self.waitUntilSame(local: terminal, remoteSocket: socket, rows: 19)
        #expect(resized == nil, "after the resize: \(resized ?? "")")

        // ~. leaves with status 0, and the person's own screen is back as it was.
        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("rc=0")
        #expect(terminal.screen.contains("before-the-session"), "the main screen came back:\n\(terminal.screen)")
        #expect(!terminal.screen.contains("remote$ "), "nothing of the session is left on it:\n\(terminal.screen)")
    }

    /// Full-screen programs and what a shell prints, drawn here as the computer's pane holds
    /// them: 256 colours and RGB, emoji and flags, vim with syntax colours (and back to the main
    /// screen), less, and top. Each is compared once it has drawn, cell by cell and attribute by
    /// attribute, then left as a person leaves it.
    @Test func fullScreenProgramsAreDrawnHereAsOnTheComputer() throws {
        let road = try RelayRoadFixture()
        try road.useHerdrStandIn()
        try road.pair()
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let directory = try TemporaryDirectory(prefix: "screen-programs-")
        let source = directory.file("sample.c")
        try (1...60).map { "int value\($0) = \($0 * 7); /* line \($0) of the sample */" }.joined(separator: "\n")
            .write(to: source, atomically: true, encoding: .utf8)
        let terminal = try TmuxTerminal(directory: directory, width: 100, height: 30)
        try terminal.type(
            "XDG_CONFIG_HOME=\(road.deviceHome("phone").path) \(BuiltProgram.path("herdr-remote")) connect studio --screen --predict never; echo rc=$?"
        )
        try terminal.waitFor("remote$ ")
        let socket = try #require(road.standInTmuxSocket)
        let rows = 29

        func expectSame(_ what: String) throws {
            let difference = try Self.waitUntilSame(local: terminal, remoteSocket: socket, rows: rows)
            #expect(difference == nil, "\(what): the local terminal is not the computer's pane: \(difference ?? "")")
        }

        try terminal.type(
            #"clear; for i in $(seq 0 255); do printf '\e[38;5;%dm#' $i; done; printf '\e[0m\n'; "#
                + #"for i in $(seq 0 63); do printf '\e[48;2;%d;%d;128m \e[38;2;%d;99;200mx' $((i*4)) $((255-i*4)) $((i*3)); done; "#
                + #"printf '\e[0m\n\xf0\x9f\x98\x80\xf0\x9f\x8e\x89 \xf0\x9f\x87\xab\xf0\x9f\x87\xb7 日本語 a\xcc\x88 %s\n' colours-$((2*3))"#
        )
        try terminal.waitFor("colours-6")
        try expectSame("256 colours, RGB, emoji")

        try terminal.type("vim -N -u NONE -i NONE -c 'syntax on' -c 'set number' \(source.path); echo vim=$?")
        try terminal.waitFor("line 20 of the sample")
        try expectSame("vim")
        try terminal.type("30G", enter: false)
        try expectSame("vim, moved to line 30")
        try terminal.type(":q!")
        try terminal.waitFor("vim=0")
        try expectSame("the main screen after vim")

        try terminal.type("less -N \(source.path); echo less=$?")
        try terminal.waitFor("line 20 of the sample")
        try expectSame("less")
        try terminal.type("G", enter: false)
        try terminal.waitFor("line 60 of the sample")
        try expectSame("less, at the end")
        try terminal.type("q", enter: false)
        try terminal.waitFor("less=0")

        try terminal.type("top -d 30; echo top=$?")
        try terminal.waitFor("load average")
        try expectSame("top")
        try terminal.type("q", enter: false)
        try terminal.waitFor("top=0")
        try expectSame("the main screen after top")

        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("rc=0")
    }

    /// `connect --agent NAME --screen`: the agent's pane, and only it, is opened as a screen
    /// session and drawn here as herdr's tmux holds it.
    @Test func anAgentsPaneIsDrawnAsAScreenSession() throws {
        let road = try RelayRoadFixture()
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .blocked)
        try road.pair()
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let directory = try TemporaryDirectory(prefix: "screen-agent-")
        let terminal = try TmuxTerminal(directory: directory, width: 90, height: 25)
        try terminal.type(
            "XDG_CONFIG_HOME=\(road.deviceHome("phone").path) \(BuiltProgram.path("herdr-remote")) connect studio --agent claude-2 --screen --predict never; echo rc=$?"
        )
        #expect(agent.waitFor("phone: started a screen session"), "\(agent.stderr)")
        try terminal.type(#"printf '\e[1;32m%s\e[0m\n' agent-pane-$((6*7))"#)
        try terminal.waitFor("agent-pane-42")
        #expect(herdr.attachedClients() == ["w1:p2"], "the agent's pane alone is attached")
        let socket = try #require(road.standInTmuxSocket)
        let same = try Self.waitUntilSame(local: terminal, remoteSocket: socket, target: "=pane-w1-p2", rows: 24)
        #expect(same == nil, "the local terminal is not the agent's pane: \(same ?? "")")
        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("rc=0")
    }
}
