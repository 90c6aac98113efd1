import HerdrAgents
import HerdrKit
import Testing

@testable import herdr_remote

/// The pure parts of `agents` and `watch`: the table and its order, the JSON, the notification
/// rule, `--exec`'s words and environment, the board's keys, all with the time passed in.
@Suite("agents and watch, the pure parts")
struct WatchPartsTests {
    static func agent(
        _ pane: String, session: String = "default", name: String? = nil, kind: String? = "claude",
        _ status: HerdrAgentStatus, since: Int64? = nil, title: String? = nil
    ) -> HerdrAgent {
        HerdrAgent(
            key: AgentKey(session: session, pane: pane), name: name, kind: kind, status: status, title: title,
            since: since)
    }

    static func computers() -> [ComputerEntry] {
        let studio = AgentBoard(
            sessions: [HerdrSessionInfo(name: "default", isDefault: true, state: .ready)],
            agents: [
                agent("w1:p1", name: "claude-1", .working, since: 1000),
                agent("w1:p2", name: "claude-2", .blocked, since: 1900, title: "Approve?"),
                agent("w1:p3", kind: nil, .idle),
            ])
        let laptop = AgentBoard(
            sessions: [
                HerdrSessionInfo(name: "default", isDefault: true, state: .ready),
                HerdrSessionInfo(name: "work", isDefault: false, state: .unresponsive, detail: "no answer in 2 s"),
            ],
            agents: [agent("w2:p1", kind: "codex", .blocked, since: 1500), agent("w1:p1", session: "x", .done)])
        return [
            ComputerEntry(name: "studio", road: "ssh", state: .live(studio, road: "ssh"), board: studio),
            ComputerEntry(name: "laptop", road: "relay", state: .live(laptop, road: "home"), board: laptop),
            ComputerEntry(
                name: "nas", road: "ssh",
                state: .live(
                    AgentBoard(herdr: HerdrAvailability(.notInstalled, detail: "sh: herdr: not found")), road: "ssh")),
            ComputerEntry(
                name: "gone", road: "relay",
                state: .lost(ComputerProblem(.unreachable, "the computer is not at its relay"), retrying: false)),
        ]
    }

    @Test(
        "the table: blocked first and the longest waiting first, across computers; a row and a note for each that could not say"
    )
    func table() {
        let text = AgentTable.render(Self.computers(), now: 2000)
        let rows = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.split(separator: " ").joined(separator: " ")
        }
        #expect(
            rows == [
                "COMPUTER SESSION PANE AGENT KIND STATUS SINCE",
                "laptop default w2:p1 - codex blocked 8m",
                "studio default w1:p2 claude-2 claude blocked 1m",
                "laptop x w1:p1 - claude done -",
                "studio default w1:p1 claude-1 claude working 16m",
                "studio default w1:p3 - - idle -",
                "nas - - - - no herdr -",
                "gone - - - - unreachable -",
                "",
                "laptop: herdr session work unresponsive: no answer in 2 s",
                "nas: herdr not-installed: sh: herdr: not found",
                "gone: unreachable: the computer is not at its relay",
                "",
            ])
    }

    @Test("since: seconds, minutes, hours, days, or - when the computer cannot say")
    func since() {
        #expect(SinceText.format(since: nil, now: 100) == "-")
        #expect(SinceText.format(since: 100, now: 159) == "59s")
        #expect(SinceText.format(since: 100, now: 100 + 4 * 60 + 59) == "4m")
        #expect(SinceText.format(since: 0, now: 47 * 3600) == "47h")
        #expect(SinceText.format(since: 0, now: 3 * 86400) == "3d")
        #expect(SinceText.format(since: 500, now: 100) == "0s")
    }

    @Test(
        "agents --json: version, computers in order with answered or problem, agents in the table's order, sorted keys")
    func json() throws {
        let text = AgentsReport.json(Self.computers())
        #expect(
            text.hasPrefix(
                "{\"agents\":[{\"computer\":\"laptop\",\"kind\":\"codex\",\"pane\":\"w2:p1\",\"session\":\"default\",\"since\":1500,\"status\":\"blocked\"},"
            ))
        #expect(
            text.contains(
                "{\"answered\":false,\"name\":\"gone\",\"problem\":{\"kind\":\"unreachable\",\"message\":\"the computer is not at its relay\"},\"road\":\"relay\"}"
            ))
        #expect(
            text.contains(
                "{\"answered\":true,\"herdr\":{\"detail\":\"sh: herdr: not found\",\"state\":\"not-installed\"},\"name\":\"nas\",\"omitted\":0,\"road\":\"ssh\",\"sessions\":[]}"
            ))
        #expect(
            text.contains(
                "{\"default\":false,\"detail\":\"no answer in 2 s\",\"name\":\"work\",\"state\":\"unresponsive\"}"))
        #expect(text.hasSuffix("\"version\":1}"))
    }

    static func notice(_ pane: String = "w1:p2", _ status: HerdrAgentStatus = .blocked, computer: String = "studio")
        -> AgentNotice
    {
        AgentNotice(
            computer: computer, agent: agent(pane, name: "claude-2", status, since: 10), previous: .working, at: 20)
    }

    @Test(
        "the rule: one alert a minute for the same agent and status; three in ten seconds, then one that names the rest"
    )
    func gate() {
        var gate = NotificationGate()
        #expect(gate.admit(Self.notice(), now: 0) == .alert)
        #expect(gate.admit(Self.notice(), now: 30) == .repeated)
        #expect(gate.admit(Self.notice("w1:p2", .done), now: 31) == .alert, "another status of the same agent")
        #expect(gate.admit(Self.notice("w1:p3"), now: 32) == .alert)
        #expect(gate.admit(Self.notice("w1:p4"), now: 33) == .alert)
        #expect(gate.admit(Self.notice("w1:p5"), now: 34) == .held)
        #expect(gate.admit(Self.notice("w1:p6"), now: 35) == .held)
        #expect(gate.admit(Self.notice("w1:p6"), now: 36) == .repeated)
        #expect(gate.summary(now: 40) == nil, "the window is still full")
        let summary = gate.summary(now: 41.5)
        #expect(summary?.title == "2 more agents blocked or done")
        #expect(summary?.body == "studio/claude-2, studio/claude-2")
        #expect(gate.summary(now: 41.6) == nil)
        #expect(gate.admit(Self.notice("w1:p7"), now: 41.8) == .held, "the summary took the window's third alert")
        #expect(gate.admit(Self.notice(), now: 60.5) == .held, "a minute later the same agent is told again, in turn")
        #expect(gate.summary(now: 60.6)?.title == "2 more agents blocked or done")
    }

    @Test("a notice: its title, body, line and --exec environment")
    func notice() {
        let notice = AgentNotice(
            computer: "studio",
            agent: Self.agent("w1:p2", session: "work", name: "claude-2", .blocked, since: 5, title: "Approve edit?"),
            previous: .working, at: 1_796_512_345)
        #expect(notice.title == "studio: claude-2 needs you")
        #expect(notice.body == "work/w1:p2 · claude · was working · Approve edit?")
        #expect(notice.line == "2026-12-05T23:12:25Z studio work/w1:p2 blocked working claude-2")
        #expect(
            notice.environment == [
                "HERDR_COMPUTER": "studio", "HERDR_SESSION": "work", "HERDR_PANE": "w1:p2",
                "HERDR_TARGET": "work/w1:p2",
                "HERDR_AGENT": "claude-2", "HERDR_KIND": "claude", "HERDR_TITLE": "Approve edit?",
                "HERDR_STATUS": "blocked", "HERDR_PREVIOUS_STATUS": "working", "HERDR_SINCE": "5",
                "HERDR_EVENT_TIME": "1796512345",
            ])
        let fresh = AgentNotice(computer: "nas", agent: Self.agent("w1:p1", kind: nil, .done), previous: nil, at: 0)
        #expect(fresh.title == "nas: w1:p1 is done")
        #expect(fresh.environment["HERDR_PREVIOUS_STATUS"] == "")
        #expect(fresh.line.hasSuffix(" nas default/w1:p1 done - -"))
    }

    @Test("only what became blocked or done is news; a computer's changes are compared with its last board")
    func changes() {
        let before = AgentBoard(agents: [
            Self.agent("w1:p1", .working), Self.agent("w1:p2", .blocked), Self.agent("w1:p3", .idle),
        ])
        let after = AgentBoard(agents: [
            Self.agent("w1:p1", .blocked), Self.agent("w1:p2", .blocked), Self.agent("w1:p3", .working),
            Self.agent("w1:p4", .done),
        ])
        let notices = AgentNotice.changes(on: "studio", from: before, to: after, now: 7)
        #expect(notices.map(\.agent.pane) == ["w1:p1", "w1:p4"])
        #expect(notices.map(\.previous) == [.working, nil])
    }

    @Test("terminal escapes: bell, OSC 777 notify, OSC 9; control characters and 777's separator cannot break them")
    func escapes() {
        #expect(
            TerminalNotification.escapes(title: "a;b", body: "c\u{1B}]0;x\u{07}d")
                == "\u{07}\u{1B}]777;notify;a,b;c]0;xd\u{07}\u{1B}]9;herdr: a;b: c]0;xd\u{07}")
    }

    @Test("--exec's words: split as a shell splits them, nothing expanded")
    func words() throws {
        #expect(try CommandWords.split("notify me") == ["notify", "me"])
        #expect(
            try CommandWords.split("sh -c 'echo $HERDR_AGENT | mail x'") == ["sh", "-c", "echo $HERDR_AGENT | mail x"])
        #expect(try CommandWords.split(#"a "b \"c\" \$d \x" e\ f ''"#) == ["a", #"b "c" $d \x"#, "e f", ""])
        #expect(throws: CommandWords.Problem.self) { try CommandWords.split("a 'b") }
        #expect(throws: CommandWords.Problem.self) { try CommandWords.split("   ") }
        #expect(CommandWords.program("sh", path: "/nonexistent:/bin") == "/bin/sh")
        #expect(CommandWords.program("no-such-program-here", path: "/bin:/usr/bin") == nil)
    }

    @Test("keys: arrows whole or split across reads, j k, digits, Enter, q, Ctrl-C")
    func keys() {
        var decoder = BoardKeyDecoder()
        #expect(decoder.feed(Array("\u{1B}[A\u{1B}OBjk".utf8)) == [.up, .down, .down, .up])
        #expect(decoder.feed([0x1B, UInt8(ascii: "[")]) == [])
        #expect(
            decoder.feed([UInt8(ascii: "B"), 0x0D, UInt8(ascii: "4"), 0x03, UInt8(ascii: "q")]) == [
                .down, .enter, .digit(4), .quit, .quit,
            ])
        #expect(decoder.feed(Array("\u{1B}[1;5Cx".utf8)) == [.other, .other])
    }

    static func rows(_ count: Int) -> [AgentRow] {
        (1...count).map { AgentRow(computer: "c", agent: agent("w1:p\($0)", .idle)) }
    }

    @Test("the board: moving, numbers typed within a second make one number, Enter opens, the choice follows its agent")
    func board() {
        var screen = BoardScreen()
        screen.show(Self.rows(12))
        #expect(screen.selected == 0)
        #expect(screen.handle(.up, now: 0) == .none)
        #expect(screen.handle(.down, now: 0) == .redraw)
        #expect(screen.handle(.digit(1), now: 10) == .redraw)
        #expect(screen.handle(.digit(2), now: 10.5) == .redraw)
        #expect(screen.selected == 11)
        #expect(screen.handle(.digit(1), now: 20) == .redraw)
        #expect(screen.handle(.digit(2), now: 21.5) == .redraw, "more than a second later: row 2")
        #expect(screen.selected == 1)
        #expect(screen.handle(.digit(0), now: 30) == .none)
        #expect(screen.handle(.enter, now: 31) == .open(Self.rows(12)[1]))
        // The rows sorted again: the chosen agent stays chosen.
        screen.show(Array(Self.rows(12).reversed()))
        #expect(screen.selected == 10)
        screen.show(Array(Self.rows(3)))
        #expect(screen.selected == 1)
        screen.show([])
        #expect(screen.selected == nil)
        #expect(screen.handle(.enter, now: 40) == .none)
        #expect(screen.handle(.quit, now: 40) == .quit)
    }

    @Test("the board's view fits the terminal and keeps the chosen row in sight")
    func view() {
        var screen = BoardScreen()
        screen.show(Self.rows(30))
        _ = screen.handle(.digit(2), now: 0)
        _ = screen.handle(.digit(5), now: 0.1)
        let entries = [ComputerEntry(name: "c", road: "ssh", state: .live(AgentBoard(), road: "ssh"))]
        let lines = BoardView.render(screen, computers: entries, message: "hello", now: 0, width: 40, height: 10)
        #expect(lines.count == 10)
        #expect(lines.allSatisfy { $0.count <= 40 })
        #expect(lines.contains { $0.hasPrefix(">  25") })
        #expect(lines[lines.count - 2] == "hello")
    }
}
