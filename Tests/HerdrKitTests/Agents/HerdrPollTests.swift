import Foundation
import HerdrAgents
import TestSupport
import Testing

@testable import HerdrKit

/// The SSH road's poll shell and what the device reads from it: the fixed loop in real shells,
/// the reply lines, the board made of herdr's answers, `since` as a poller can tell it.
@Suite("reading herdr over SSH")
struct HerdrPollTests {
    /// A directory with a `herdr` that prints what the test says for each command.
    static func fakeHerdr() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "herdr-poll-")
        let script = """
            #!/bin/sh
            case "$*" in
              "session list --json") printf '{"sessions":[{"name":"default","default":true,"running":true},{"name":"work","default":false,"running":true}]}\\n' ;;
              "api snapshot") printf '{"type":"session_snapshot","agents":[{"pane_id":"w1:p2","agent_status":"blocked","agent":"claude","name":"claude-2"}]}' ;;
              "api snapshot --session work") echo "herdr: session work did not answer" >&2; exit 1 ;;
              *) echo "unexpected: $*" >&2; exit 2 ;;
            esac

            """
        try writeText(script, to: directory.file("herdr"))
        chmod(directory.file("herdr").path, 0o755)
        return directory
    }

    @Test(
        "the poll command runs the loop from bash, zsh, fish and dash login shells: herdr's output, then a reply line",
        arguments: ["/usr/bin/bash", "/usr/bin/zsh", "/usr/bin/fish", "/usr/bin/dash"])
    func pollShell(shell: String) throws {
        let herdr = try Self.fakeHerdr()
        let home = try TemporaryDirectory(prefix: "herdr-poll-home-")
        // A login shell sets PATH from the profiles (Debian's /etc/profile resets it): herdr is
        // found through the user's own, as on a real computer.
        try writeText("PATH=\"\(herdr.path):$PATH\"\nexport PATH\n", to: home.file(".profile"))
        var environment = ProcessInfo.processInfo.environment
        environment["SHELL"] = shell
        environment["HOME"] = home.path
        environment["PATH"] = herdr.path + ":/usr/bin:/bin"
        let requests =
            HerdrPoll.Request.hello.line(id: "a1") + HerdrPoll.Request.list.line(id: "a2")
            + HerdrPoll.Request.snapshot(session: "default").line(id: "a3")
            + HerdrPoll.Request.snapshot(session: "work").line(id: "a4") + "a5 rm -rf /\n"
        // sshd hands the command to the account's shell with -c, as here.
        let result = try ProcessRunner.run(
            shell, ["-c", HerdrPoll.command], environment: environment, input: Array(requests.utf8), timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        var reader = HerdrPollReader()
        try reader.append(result.stdoutBytes)
        var replies: [HerdrPoll.Reply] = []
        while let reply = reader.next() { replies.append(reply) }
        #expect(replies.map(\.id) == ["a1", "a2", "a3", "a4", "a5"])
        #expect(replies.map(\.status) == [0, 0, 0, 1, 2])
        #expect(try HerdrJSON.sessionList(replies[1].output).map(\.name) == ["default", "work"])
        #expect(try HerdrJSON.snapshotAgents(replies[2].output).agents.map(\.pane) == ["w1:p2"])
        #expect(replies[3].errorText == "herdr: session work did not answer")
        #expect(replies[4].errorText == "unknown request")
    }

    @Test(
        "the reader: replies split anywhere, herdr's lines kept whole, a line starting with the marker's text only when whole"
    )
    func reader() throws {
        let stream = Array(
            "motd from a login shell\n\n#herdr-remote-reply a1 0 \n{\"sessions\":[]}\n\n#herdr-remote-reply a2 0 \n{\"x\":\n1}\n\n#herdr-remote-reply a3 7 herdr: no  way\n"
                .utf8)
        var reader = HerdrPollReader()
        var replies: [HerdrPoll.Reply] = []
        for byte in stream {
            try reader.append([byte])
            while let reply = reader.next() { replies.append(reply) }
        }
        #expect(replies.map(\.id) == ["a1", "a2", "a3"])
        #expect(String(decoding: replies[1].output, as: UTF8.self) == "{\"sessions\":[]}")
        #expect(String(decoding: replies[2].output, as: UTF8.self) == "{\"x\":\n1}")
        #expect(replies[2].status == 7)
        #expect(replies[2].problem == "herdr: no  way")
        var flooded = HerdrPollReader()
        #expect(throws: HerdrReplyError.self) {
            try flooded.append([UInt8](repeating: UInt8(ascii: "x"), count: HerdrPollReader.maximumReplyBytes + 1))
        }
    }

    static func reply(_ id: String, _ status: Int = 0, _ output: String = "", error: String = "") -> HerdrPoll.Reply {
        HerdrPoll.Reply(id: id, status: status, output: Array(output.utf8), errorText: error)
    }

    @Test("the board of herdr's answers: sessions not running, failing or read; herdr missing or failing")
    func board() {
        let list = Self.reply(
            "1", 0,
            #"{"sessions":[{"name":"default","default":true,"running":true},{"name":"old","running":false},{"name":"work","running":true},{"name":"bad","running":true}]}"#
        )
        let board = SSHBoard.board(
            SSHBoard.Replies(
                list: list,
                snapshots: [
                    "default": Self.reply(
                        "2", 0, #"{"agents":[{"pane_id":"w1:p1","agent_status":"working","name":"a"}]}"#),
                    "work": Self.reply("3", 1, error: "herdr: timed out"),
                    "bad": Self.reply("4", 0, "not json"),
                ]))
        #expect(board.herdr == .ready)
        #expect(board.sessions.map(\.name) == ["default", "old", "work", "bad"])
        #expect(board.sessions.map(\.state) == [.ready, .notRunning, .failing, .failing])
        #expect(board.sessions[2].detail == "herdr: timed out")
        #expect(board.agents.keys.map(\.description) == ["w1:p1"])

        let missing = SSHBoard.board(
            .init(list: Self.reply("1", 127, error: "sh: 1: herdr: not found"), snapshots: [:]))
        #expect(missing.herdr == HerdrAvailability(.notInstalled, detail: "sh: 1: herdr: not found"))
        let failing = SSHBoard.board(.init(list: Self.reply("1", 0, "[]"), snapshots: [:]))
        #expect(failing.herdr.state == .failing)
    }

    @Test("since over SSH: unknown for what the first poll found, the poll's time for what changed or appeared after")
    func since() {
        var tracker = AgentSinceTracker()
        func agent(_ pane: String, _ status: HerdrAgentStatus) -> HerdrAgent {
            HerdrAgent(key: AgentKey(session: "default", pane: pane), status: status)
        }
        let first = tracker.stamp(AgentBoard(agents: [agent("w1:p1", .working)]), now: 100)
        #expect(first.agents.values.map(\.since) == [nil])
        let second = tracker.stamp(AgentBoard(agents: [agent("w1:p1", .working), agent("w1:p2", .idle)]), now: 110)
        #expect(second.sorted.map(\.since) == [nil, 110])
        let third = tracker.stamp(AgentBoard(agents: [agent("w1:p1", .blocked), agent("w1:p2", .idle)]), now: 120)
        #expect(third.sorted.map(\.since) == [120, 110])
    }

    @Test("herdr agent attach: the pane, with --session for a named session, quoted when it breaks the rule")
    func agentAttach() {
        #expect(
            HerdrCommand.agentAttach(platform: .unix, session: "default", pane: "w1:p2")
                == #"exec "$SHELL" -lc 'herdr agent attach w1:p2'"#)
        #expect(
            HerdrCommand.agentAttach(platform: .unix, session: "work", pane: "w1:p2")
                == #"exec "$SHELL" -lc 'herdr agent attach w1:p2 --session work'"#)
        #expect(
            HerdrCommand.agentAttach(platform: .unix, session: "work", pane: "w1;rm")
                == #"exec "$SHELL" -lc 'herdr agent attach '\''w1;rm'\'' --session work'"#)
        #expect(
            HerdrCommand.agentAttach(platform: .windows, session: "work", pane: "w1:p2")
                == "herdr agent attach w1:p2 --session work")
    }
}
