import Foundation
import TestSupport
import Testing

/// `sessions` and `agents` over the SSH road: the herdr stand-in behind the test sshd, read with
/// herdr's own commands through one SSH connection per computer.
@Suite("herdr-remote sessions and agents over SSH", .serialized)
struct AgentsOverSSHTests {
    @Test("sessions lists herdr's sessions: running or not, with their agents counted")
    func sessions() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        try server.herdr.startSession()
        try server.herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .working)
        try server.herdr.startSession("work")
        try server.herdr.startSession("old")
        try server.herdr.stopSession("old")
        let cli = try CLIHarness()
        try cli.addPinnedHost("box", server: server)
        let result = try cli.run(["sessions", "box"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(
            lines == [
                "SESSION DEFAULT STATE AGENTS", "default yes running 1", "old no not running -", "work no running 0",
            ])
    }

    @Test("agents: three computers asked at once, one silent: its row says so, the table comes within the limit")
    func agentsAcrossComputers() throws {
        let busy = try SSHServer()
        defer { busy.destroy() }
        try busy.herdr.startSession()
        try busy.herdr.addAgent(pane: "w1:p1", name: "claude-1", status: .working)
        try busy.herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .blocked, title: "Approve edit?")
        try busy.herdr.startSession("work")
        try busy.herdr.addAgent(session: "work", pane: "w1:p1", kind: "codex", status: .done)
        let bare = try SSHServer()
        defer { bare.destroy() }
        try FileManager.default.removeItem(at: bare.herdr.executable)
        let silent = try SilentListener()
        let cli = try CLIHarness()
        try cli.addPinnedHost("busy", server: busy)
        try cli.addPinnedHost("bare", server: bare)
        #expect(try cli.run(["add", "silent", "--host", "127.0.0.1", "--port", String(silent.port)]).status == 0)
        try cli.pin(port: silent.port, key: try busy.scannedKey())

        let started = Date()
        let result = try cli.run(["agents", "--timeout", "3"])
        let took = Date().timeIntervalSince(started)
        #expect(result.status == 17, "\(result.stdout)\(result.stderr)")
        #expect(took < 3 + 2, "took \(took) s with a 3 s limit")
        let rows = result.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(
            Array(rows.prefix(6)) == [
                "COMPUTER SESSION PANE AGENT KIND STATUS SINCE",
                "busy default w1:p2 claude-2 claude blocked -",
                "busy work w1:p1 - codex done -",
                "busy default w1:p1 claude-1 claude working -",
                "bare - - - - no herdr -",
                "silent - - - - timed out -",
            ])
        #expect(result.stdout.contains("silent: timed out: no answer within 3 s"))
        #expect(result.stdout.contains("bare: herdr not-installed:"))

        let json = try cli.run(["agents", "busy", "silent", "--timeout", "2", "--json"])
        #expect(json.status == 17)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["version"] as? Int == 1)
        let computers = try #require(object["computers"] as? [[String: Any]])
        #expect(computers.map { $0["name"] as? String } == ["busy", "silent"])
        #expect(computers.map { $0["answered"] as? Bool } == [true, false])
        #expect((computers[1]["problem"] as? [String: Any])?["kind"] as? String == "timed-out")
        let sessions = try #require(computers[0]["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["name"] as? String } == ["default", "work"])
        let agents = try #require(object["agents"] as? [[String: Any]])
        #expect(agents.map { $0["pane"] as? String } == ["w1:p2", "w1:p1", "w1:p1"])
        #expect(agents.first?["title"] as? String == "Approve edit?")
        #expect(agents.first?["computer"] as? String == "busy")

        let answered = try cli.run(["agents", "busy"])
        #expect(answered.status == 0, "\(answered.stdout)\(answered.stderr)")
    }

    @Test("a host never connected to is not asked: it is not pinned, and says how to pin it")
    func notPinned() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server)
        let result = try cli.run(["sessions", "box"])
        #expect(result.status == 10)
        #expect(result.stderr.contains("run herdr-remote connect box once"))
        #expect(!server.log().contains("userauth-request"))
    }
}
