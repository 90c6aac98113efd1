import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

/// herdr's agents end to end on the Noise roads, every program the real one: herdr-relay,
/// herdr-host run reading the herdr stand-in, and herdr-remote `sessions`, `agents`, `watch` and
/// `connect --agent` on a device paired as a person pairs it. Outcomes only: what the programs
/// print, their exit codes, where a terminal lands, what a recording `notify-send` was given.
@Suite(.serialized) struct AgentsEndToEndTests {
    /// `herdr-remote ARGUMENTS` on the device `phone`, to its end.
    static func remote(_ road: RelayRoadFixture, _ arguments: [String], timeout: Double = 60) throws
        -> ProcessResult
    {
        try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), arguments, environment: road.deviceEnvironment("phone"),
            timeout: timeout)
    }

    /// A table's lines with each run of spaces made one.
    static func rows(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
    }

    /// A table's lines without their last column (SINCE: how long ago, by the clock).
    static func rowsWithoutSince(_ text: String) -> [String] {
        text.split(separator: "\n").map { $0.split(separator: " ").dropLast().joined(separator: " ") }
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func sessionsAndAgentsAcrossThreeComputersOneAwayOneWithoutHerdr() throws {
        let road = try RelayRoadFixture()
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .working)
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .blocked, title: "Approve edit?")
        try herdr.startSession("work")
        try herdr.addAgent(session: "work", pane: "w1:p1", kind: "codex", status: .done)
        try herdr.startSession("old")
        try herdr.stopSession("old")
        try road.pair()
        // laptop: its herdr-host runs, no herdr there. nas: paired, its herdr-host not running.
        let laptop = try road.pairComputer("laptop", home: road.directory.appending("laptop-home"))
        _ = try road.pairComputer("nas", home: road.directory.appending("nas-home"))
        let studioAgent = try road.startAgent()
        defer { studioAgent.signal(SIGTERM) }
        let laptopAgent = try road.startAgent(home: laptop.home, environment: laptop.environment)
        defer { laptopAgent.signal(SIGTERM) }

        let sessions = try Self.remote(road, ["sessions", "studio"])
        #expect(sessions.status == 0, "\(sessions.stdout)\(sessions.stderr)")
        #expect(
            Self.rows(sessions.stdout) == [
                "SESSION DEFAULT STATE AGENTS", "default yes running 2", "old no not running -", "work no running 1",
            ], "\(sessions.stdout)")
        let noHerdr = try Self.remote(road, ["sessions", "laptop"])
        #expect(noHerdr.status == 19, "\(noHerdr.stdout)\(noHerdr.stderr)")
        #expect(noHerdr.stderr.contains("herdr is not installed on laptop"), "\(noHerdr.stderr)")
        let away = try Self.remote(road, ["sessions", "nas"])
        #expect(away.status == 12, "\(away.stdout)\(away.stderr)")

        let table = try Self.remote(road, ["agents", "--timeout", "3"])
        #expect(table.status == 17, "\(table.stdout)\(table.stderr)")
        #expect(
            Array(Self.rowsWithoutSince(table.stdout).prefix(6)) == [
                "COMPUTER SESSION PANE AGENT KIND STATUS",
                "studio default w1:p2 claude-2 claude blocked",
                "studio work w1:p1 - codex done",
                "studio default w1:p1 claude-1 claude working",
                "laptop - - - - no herdr",
                "nas - - - - unreachable",
            ], "\(table.stdout)")
        #expect(table.stdout.contains("laptop: herdr not-installed:"), "\(table.stdout)")
        #expect(table.stdout.contains("nas: unreachable:"), "\(table.stdout)")

        let report = try Self.remote(road, ["agents", "--json", "--timeout", "3"])
        #expect(report.status == 17, "\(report.stderr)")
        let object = try Self.json(report.stdout)
        #expect(object["version"] as? Int == 1)
        let computers = try #require(object["computers"] as? [[String: Any]])
        #expect(computers.map { $0["name"] as? String } == ["laptop", "nas", "studio"])
        #expect(computers.map { $0["road"] as? String } == ["relay", "relay", "relay"])
        #expect(computers.map { $0["answered"] as? Bool } == [true, false, true])
        #expect((computers[0]["herdr"] as? [String: Any])?["state"] as? String == "not-installed")
        #expect((computers[1]["problem"] as? [String: Any])?["kind"] as? String == "unreachable")
        let studioSessions = try #require(computers[2]["sessions"] as? [[String: Any]])
        #expect(studioSessions.map { $0["name"] as? String } == ["default", "old", "work"])
        #expect(studioSessions.map { $0["state"] as? String } == ["ready", "not-running", "ready"])
        let agents = try #require(object["agents"] as? [[String: Any]])
        #expect(agents.map { $0["pane"] as? String } == ["w1:p2", "w1:p1", "w1:p1"])
        #expect(agents.map { $0["status"] as? String } == ["blocked", "done", "working"])
        #expect(agents.first?["title"] as? String == "Approve edit?")
        #expect(agents.allSatisfy { $0["since"] is Int }, "herdr-host says since when: \(agents)")

        let answered = try Self.remote(road, ["agents", "studio", "laptop"])
        #expect(answered.status == 0, "\(answered.stdout)\(answered.stderr)")

        // What the computer does not list opens nothing, and the error names what it lists.
        let absent = try Self.remote(road, ["connect", "studio", "--agent", "nobody"])
        #expect(absent.status == 18, "\(absent.stdout)\(absent.stderr)")
        #expect(
            absent.stderr.contains(
                "studio: no agent nobody; the computer's agents: default/w1:p2 (claude-2, blocked), work/w1:p1 (codex, done), default/w1:p1 (claude-1, working)"
            ), "\(absent.stderr)")
        let nowhere = try Self.remote(road, ["connect", "laptop", "--agent", "w1:p1"])
        #expect(nowhere.status == 19, "\(nowhere.stdout)\(nowhere.stderr)")
        #expect(herdr.attachedClients().isEmpty && herdr.attachedClients(session: "work").isEmpty)
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))
    }

    /// A road whose computer runs the herdr stand-in with two agents of the default session,
    /// claude-1 idle and claude-2 working, paired with the device `phone`, its herdr-host running.
    static func watchedRoad() throws -> (RelayRoadFixture, HerdrStandIn, InteractiveProcess) {
        let road = try RelayRoadFixture()
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .idle)
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working, title: "Refactor")
        try road.pair()
        return (road, herdr, try road.startAgent())
    }

    @Test func watchTellsAStatusChangeAndItsBoardOpensTheAgentThroughTheRoomAndComesBack() throws {
        let (road, herdr, agent) = try Self.watchedRoad()
        defer { agent.signal(SIGTERM) }
        let recorders = try WatchRecorders()

        // Without a terminal: a line, notify-send and --exec.
        let lines = try InteractiveProcess(
            BuiltProgram.path("herdr-remote"), ["watch", "studio", "--exec", recorders.exec],
            environment: road.deviceEnvironment("phone").merging(recorders.environment) { $1 })
        defer { lines.signal(SIGKILL) }
        #expect(lines.waitFor("studio: watching (2 agents)"), "\(lines.stderr)")
        try herdr.setStatus(pane: "w1:p2", .blocked, title: "Approve edit?")
        #expect(lines.waitFor(" studio default/w1:p2 blocked working claude-2\n"), "\(lines.stdout)\(lines.stderr)")
        #expect(
            recorders.wait(for: "\n", in: recorders.notifications)
                == "-a|herdr-remote|-u|critical|studio: claude-2 needs you|default/w1:p2 · claude · was working · Approve edit?|\n"
        )
        let executed = recorders.wait(for: "---", in: recorders.executions)
        for line in [
            "HERDR_COMPUTER=studio", "HERDR_SESSION=default", "HERDR_PANE=w1:p2", "HERDR_TARGET=default/w1:p2",
            "HERDR_AGENT=claude-2", "HERDR_KIND=claude", "HERDR_STATUS=blocked", "HERDR_PREVIOUS_STATUS=working",
            "HERDR_TITLE=Approve edit?",
        ] {
            #expect(executed?.contains(line + "\n") == true, "\(line) in \(executed ?? "nothing")")
        }
        // The computer away and back: said on stderr, and a change made meanwhile is told.
        agent.signal(SIGTERM)
        #expect(agent.wait() != nil)
        #expect(lines.waitFor("studio: unreachable: "), "\(lines.stderr)")
        try herdr.setStatus(pane: "w1:p1", .done)
        let restarted = try road.startAgent()
        defer { restarted.signal(SIGTERM) }
        #expect(lines.waitFor("studio: back (2 agents)", timeout: 60), "\(lines.stderr)")
        #expect(lines.waitFor(" studio default/w1:p1 done idle claude-1\n"), "\(lines.stdout)\(lines.stderr)")
        lines.signal(SIGINT)
        #expect(lines.wait() == 130)

        // On a terminal: the board; Enter opens the chosen agent, the room handed over to it.
        let terminal = try TmuxTerminal(directory: road.directory, width: 120, height: 30)
        let environment = road.deviceEnvironment("phone").merging(recorders.environment) { $1 }
        let words = ["XDG_CONFIG_HOME", "PATH", "DBUS_SESSION_BUS_ADDRESS"].map {
            "\($0)=" + HerdrCommand.posixQuoted(environment[$0] ?? "")
        }
        try terminal.type(
            "env \(words.joined(separator: " ")) \(BuiltProgram.path("herdr-remote")) watch studio; echo EXIT=$?")
        try terminal.waitFor("herdr-remote watch ·")
        try terminal.waitFor(">  1  studio    default  w1:p2  claude-2")
        try terminal.type("", enter: true)
        try terminal.waitFor("w1:p2$")
        #expect(herdr.attachedClients() == ["w1:p2"])
        // The board's connection gave the room to the agent's, which feeds the board meanwhile:
        // a change is still told on the desktop (the terminal gets no escapes while in the pane).
        try herdr.setStatus(pane: "w1:p1", .done)
        #expect(
            recorders.wait(for: "studio: claude-1 is done", in: recorders.notifications) != nil,
            "\(terminal.screen)")
        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("back from claude-2 on studio")
        #expect(herdr.attachedClients().isEmpty)
        // Back on the board, its own connection again: still told, on the board and the desktop.
        try herdr.setStatus(pane: "w1:p1", .blocked, title: "Run tests?")
        try terminal.waitFor("studio: claude-1 needs you")
        #expect(recorders.wait(for: "studio: claude-1 needs you", in: recorders.notifications) != nil)
        #expect(
            !terminal.screen.contains("relay refused") && !terminal.screen.contains("not live"), "\(terminal.screen)")
        // The agent's terminal ending on its own (its client detached on the computer) comes back too.
        // Chosen by its number (which row it is depends on since when each has been blocked).
        let row = try #require(Self.boardRow(of: "w1:p1  claude-1", on: terminal.screen), "\(terminal.screen)")
        try terminal.type(String(row), enter: false)
        try terminal.waitFor(">  \(row)  studio    default  w1:p1")
        try terminal.type("", enter: true)
        try terminal.waitFor("w1:p1$")
        #expect(herdr.attachedClients() == ["w1:p1"])
        herdr.detachClients()
        try terminal.waitFor("claude-1 on studio")
        try terminal.waitFor("herdr-remote watch ·")
        try herdr.setStatus(pane: "w1:p2", .done)
        try terminal.waitFor("studio: claude-2 is done")
        try terminal.type("q", enter: false)
        try terminal.waitFor("EXIT=0")
    }

    /// The number of the board's row that shows `text`.
    static func boardRow(of text: String, on screen: String) -> Int? {
        guard let line = screen.split(separator: "\n").first(where: { $0.contains(text) }) else { return nil }
        return line.split(separator: " ").lazy.compactMap { Int($0) }.first
    }

    /// A login shell (`SHELL` for herdr-host's sessions) whose terminal output is also written to
    /// `$AGENT_TERMINAL_LOG` by script(1): the bytes a device must get, byte for byte. script runs
    /// its command with `$SHELL`: /bin/sh, not this one again.
    static let recordingShell = """
        #!/bin/sh
        SHELL=/bin/sh exec script -q -f -e -O "$AGENT_TERMINAL_LOG" -c "exec /bin/sh $1 '$2'"

        """

    /// What script(1) wrote to its terminal: its log without the header line and the footer.
    static func scriptOutput(_ log: [UInt8]) throws -> [UInt8] {
        let text = log[...]
        let footer = Array("\nScript done on ".utf8)
        guard let start = text.firstIndex(of: UInt8(ascii: "\n")),
            let end = (0...(text.count - footer.count)).last(where: { Array(text[$0..<$0 + footer.count]) == footer })
        else { throw FixtureError("not a script log: \(String(decoding: log.prefix(200), as: UTF8.self))") }
        return Array(text[(start + 1)..<end])
    }

    @Test func connectAgentLandsInItsPaneAndResumesAcrossAKilledSocketByteForByte() throws {
        let proxy = try CuttingProxy()
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        let herdr = try road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working)
        try herdr.addAgent(pane: "w1:p3", name: "claude-3", status: .idle)
        try herdr.startSession("work")
        try herdr.addAgent(session: "work", pane: "w1:p2", name: "work-agent", kind: "codex", status: .blocked)
        try road.pair()
        let shell = road.directory.appending("recording-shell")
        try writeText(Self.recordingShell, to: shell)
        chmod(shell.path, 0o755)
        let log = road.directory.appending("agent-terminal.log")
        var environment = road.hostEnvironment
        environment["SHELL"] = shell.path
        environment["AGENT_TERMINAL_LOG"] = log.path
        let agent = try road.startAgent(environment: environment)
        defer { agent.signal(SIGTERM) }

        // By name, in a named session.
        let named = try road.startConnect(extra: ["--agent", "work-agent"])
        #expect(named.waitFor("w1:p2$"), "\(named.stdout)\(named.stderr)")
        #expect(named.stderr.contains("In the pane of agent work-agent (work/w1:p2)."), "\(named.stderr)")
        #expect(herdr.attachedClients(session: "work") == ["w1:p2"])
        #expect(herdr.attachedClients().isEmpty)
        named.signal(SIGTERM)
        #expect(named.wait() == 143)

        // By pane id; output flowing when the socket is killed comes on, not a byte lost or twice.
        let device = try road.startConnect(extra: ["--agent", "w1:p3"])
        #expect(device.waitFor("w1:p3$"), "\(device.stdout)\(device.stderr)")
        #expect(herdr.attachedClients() == ["w1:p3"])
        device.writeLine(
            "i=0; while [ $i -lt 400 ]; do i=$((i+1)); echo resume-line-$i; sleep 0.01; done; echo RESUME-$((6*7))-END")
        #expect(device.waitFor("resume-line-40"), "\(device.stdout)\(device.stderr)")
        #expect(proxy.cut() >= 1)
        #expect(device.waitFor("the session resumed where it was", timeout: 60), "\(device.stderr)")
        #expect(device.waitFor("RESUME-42-END", timeout: 60), "\(device.stderr)")
        #expect(herdr.attachedClients() == ["w1:p3"], "the same pane, not opened afresh")
        herdr.detachClients()
        #expect(device.wait(timeout: 60) == 0, "\(device.stderr)")
        #expect(device.stdout.contains("resume-line-400"))
        let expected = try Self.scriptOutput(Array(try Data(contentsOf: log)))
        let printed = device.stdoutBytes
        #expect(printed.count == expected.count, "\(printed.count) bytes printed, \(expected.count) written")
        #expect(SHA256.hash(printed) == SHA256.hash(expected), "not a byte lost or repeated")
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))
    }

    // MARK: - The home road

    /// `herdr-remote ARGUMENTS` on the device `phone` inside the home network's namespace.
    static func remote(at home: HomeRoadTests.HomeNetwork, _ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(
            try ProcessRunner.which("ip"),
            ["netns", "exec", home.namespace.name, BuiltProgram.path("herdr-remote")] + arguments,
            environment: home.road.deviceEnvironment("phone"), timeout: 60)
    }

    static func interactive(at home: HomeRoadTests.HomeNetwork, _ arguments: [String]) throws -> InteractiveProcess {
        try InteractiveProcess(
            try ProcessRunner.which("ip"),
            ["netns", "exec", home.namespace.name, BuiltProgram.path("herdr-remote")] + arguments,
            environment: home.road.deviceEnvironment("phone"))
    }

    /// `agents --json` on the home road, read again until `studio`'s first session is in `state`
    /// (bounded); that session's fields.
    static func waitForSession(
        at home: HomeRoadTests.HomeNetwork, state: String, timeout: Double = 40
    ) throws -> [String: Any]? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let result = try remote(at: home, ["agents", "studio", "--json"])
            let computer = (try? json(result.stdout))?["computers"] as? [[String: Any]]
            if let session = (computer?.first?["sessions"] as? [[String: Any]])?.first,
                session["state"] as? String == state
            {
                return session
            }
            usleep(200_000)
        }
        return nil
    }

    @Test func onTheHomeRoadAgentsWatchAndConnectAgentWorkAndAHostileHerdrNeverStallsATerminal() throws {
        let home = try HomeRoadTests.HomeNetwork()
        let herdr = try home.road.useHerdrStandIn()
        try herdr.startSession()
        try herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .working)
        try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .idle)
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }

        let report = try Self.remote(at: home, ["agents", "--json"])
        #expect(report.status == 0, "\(report.stdout)\(report.stderr)")
        let computers = try #require(try Self.json(report.stdout)["computers"] as? [[String: Any]])
        #expect(computers.first?["road"] as? String == "home", "\(report.stdout)")
        let agents = try #require(try Self.json(report.stdout)["agents"] as? [[String: Any]])
        #expect(agents.map { $0["name"] as? String } == ["claude-1", "claude-2"])

        // A terminal on herdr's session, and watch, at once: the home road has no room to share.
        let terminal = try home.road.startConnect(in: home.namespace)
        defer { terminal.signal(SIGKILL) }
        #expect(terminal.waitFor("Connected via home network"), "\(terminal.stderr)")
        #expect(terminal.waitFor("remote$"), "\(terminal.stdout)\(terminal.stderr)")
        /// A line typed in the terminal comes back computed: the session is alive and not held up.
        func echoes(_ mark: String) {
            terminal.writeLine("echo \(mark)-$((40+2))")
            #expect(terminal.waitFor("\(mark)-42"), "\(mark): \(terminal.stdout)\(terminal.stderr)")
        }
        echoes("home")
        let watch = try Self.interactive(at: home, ["watch", "studio"])
        defer { watch.signal(SIGKILL) }
        #expect(watch.waitFor("studio: watching (2 agents)"), "\(watch.stderr)")
        try herdr.setStatus(pane: "w1:p2", .blocked)
        #expect(watch.waitFor(" studio default/w1:p2 blocked idle claude-2\n"), "\(watch.stdout)\(watch.stderr)")

        // A herdr that never answers, then one that answers garbage: agents says so, the terminal echoes.
        try herdr.setMode(.frozen)
        echoes("frozen")
        let frozen = try Self.waitForSession(at: home, state: "unresponsive")
        #expect(frozen != nil, "agents never showed herdr unresponsive")
        echoes("still-frozen")
        try herdr.setMode(.garbage)
        let garbage = try Self.waitForSession(at: home, state: "failing")
        #expect((garbage?["detail"] as? String)?.contains("not a JSON object") == true, "\(garbage ?? [:])")
        echoes("garbage")
        try herdr.setMode(.normal)
        #expect(try Self.waitForSession(at: home, state: "ready") != nil)
        echoes("normal")

        // connect --agent over the home road, beside the session's terminal.
        let pane = try Self.interactive(at: home, ["connect", "studio", "--agent", "claude-1"])
        defer { pane.signal(SIGKILL) }
        #expect(pane.waitFor("w1:p1$"), "\(pane.stdout)\(pane.stderr)")
        #expect(pane.stderr.contains("Connected via home network"), "\(pane.stderr)")
        #expect(herdr.attachedClients().sorted() == ["default", "w1:p1"])
        pane.signal(SIGTERM)
        #expect(pane.wait() == 143)
        watch.signal(SIGINT)
        #expect(watch.wait() == 130)
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))
    }
}
