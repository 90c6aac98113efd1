import Foundation
import Glibc
import TestSupport
import Testing

/// The herdr stand-in itself (TestSupport's `HerdrStandIn`), as the tests of issue 37 use it:
/// its socket as a client of herdr's sees it, its commands, its tmux panes, its hostile modes,
/// as another user and from a network namespace, and that nothing of it outlives a test.
@Suite(.serialized) struct HerdrStandInTests {
    /// A stand-in on a HOME of its own (in the directory returned, which the test keeps and
    /// removes), the default session started with three panes: two agents and a plain shell.
    func standIn() throws -> (HerdrStandIn, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "herdr-standin-")
        let standIn = try HerdrStandIn(home: directory.appending("home"))
        try standIn.startSession()
        try standIn.addAgent(pane: "w1:p1", name: "claude-1", kind: "claude", status: .working, title: "Fix the login")
        try standIn.addAgent(pane: "w1:p2", name: "codex-1", kind: "codex", status: .blocked, focused: true)
        try standIn.addShellPane(pane: "w2:p1")
        return (standIn, directory)
    }

    @Test func theSocketAnswersEachMethodShapedAsHerdrSaysOnOneConnection() throws {
        let (standIn, directory) = try standIn()
        defer {
            standIn.stop()
            directory.remove()
        }
        let client = try #require(LineClient(path: standIn.socketPath()))

        let pong = try client.call("ping", id: "r1")
        #expect(pong["id"] as? String == "r1")
        let pongResult = try #require(pong["result"] as? [String: Any])
        #expect(pongResult["type"] as? String == "pong")
        #expect(pongResult["protocol"] as? Int == 20)
        #expect(pongResult["version"] is String)

        let list = try #require(try client.call("agent.list")["result"] as? [String: Any])
        #expect(list["type"] as? String == "agent_list")
        let agents = try #require(list["agents"] as? [[String: Any]])
        #expect(agents.map { $0["pane_id"] as? String } == ["w1:p1", "w1:p2"], "a shell pane is no agent")
        for agent in agents {
            for field in ["pane_id", "workspace_id", "tab_id", "terminal_id", "agent_status"] {
                #expect(agent[field] is String, "\(field) in \(agent)")
            }
            #expect(agent["focused"] is Bool)
            #expect(agent["revision"] is Int)
            #expect(agent["state_change_seq"] is Int)
        }
        #expect(agents[0]["workspace_id"] as? String == "w1")
        #expect(agents[0]["tab_id"] as? String == "w1:t1")
        #expect(agents[0]["agent"] as? String == "claude")
        #expect(agents[0]["name"] as? String == "claude-1")
        #expect(agents[0]["title"] as? String == "Fix the login")
        #expect(agents[0]["agent_status"] as? String == "working")
        #expect(agents[0]["focused"] as? Bool == false)
        #expect(agents[1]["agent_status"] as? String == "blocked")
        #expect(agents[1]["focused"] as? Bool == true)
        #expect(agents[1]["title"] == nil, "an optional field with no value is left out")

        for target in ["codex-1", "w1:p2"] {
            let got = try #require(try client.call("agent.get", ["target": target])["result"] as? [String: Any])
            #expect(got["type"] as? String == "agent")
            #expect((got["agent"] as? [String: Any])?["pane_id"] as? String == "w1:p2")
        }

        let snapshot = try #require(try client.call("session.snapshot")["result"] as? [String: Any])
        #expect(snapshot["type"] as? String == "session_snapshot")
        #expect((snapshot["workspaces"] as? [[String: Any]])?.map { $0["workspace_id"] as? String } == ["w1", "w2"])
        #expect((snapshot["tabs"] as? [[String: Any]])?.map { $0["tab_id"] as? String } == ["w1:t1", "w2:t1"])
        #expect(
            (snapshot["panes"] as? [[String: Any]])?.map { $0["pane_id"] as? String } == ["w1:p1", "w1:p2", "w2:p1"])
        #expect((snapshot["layouts"] as? [[String: Any]])?.first?["panes"] as? [String] == ["w1:p1", "w1:p2"])
        #expect((snapshot["agents"] as? [[String: Any]])?.count == 2)

        // Errors: {"error":{"code","message"}}, the connection still serving.
        #expect(try client.errorCode(client.call("agent.get", ["target": "nobody"])) == "not_found")
        #expect(try client.errorCode(client.call("agent.get", [:])) == "invalid_params")
        #expect(try client.errorCode(client.call("pane.send_keys", ["pane_id": "w1:p1"])) == "unknown_method")
        client.send(#"{"id":"r9","method":"ping","params":[]}"#)
        #expect(try client.errorCode(client.readJSON()) == "invalid_params")
        client.send("this is not json")
        let invalid = try client.readJSON()
        #expect(client.errorCode(invalid) == "invalid_request")
        #expect(invalid["id"] is NSNull)
        #expect((try client.call("ping")["result"] as? [String: Any])?["type"] as? String == "pong")

        // Two agents sharing a name: the name is no target.
        try standIn.addAgent(pane: "w3:p1", name: "twin")
        try standIn.addAgent(pane: "w3:p2", name: "twin")
        #expect(try client.errorCode(client.call("agent.get", ["target": "twin"])) == "ambiguous")
        #expect(
            try standIn.requests() == [
                "ping", "agent.list", "agent.get", "agent.get", "session.snapshot", "agent.get", "agent.get",
                "pane.send_keys", "ping", "(invalid)", "ping", "agent.get",
            ])
    }

    @Test func aStatusChangeIsPushedOnlyToThatPanesSubscribers() throws {
        let (standIn, directory) = try standIn()
        defer {
            standIn.stop()
            directory.remove()
        }
        let first = try #require(LineClient(path: standIn.socketPath()))
        let second = try #require(LineClient(path: standIn.socketPath()))
        let blockedOnly = try #require(LineClient(path: standIn.socketPath()))
        let lifecycle = try #require(LineClient(path: standIn.socketPath()))
        func subscribe(_ client: LineClient, _ subscriptions: [[String: Any]]) throws {
            let started = try client.call("events.subscribe", ["subscriptions": subscriptions])
            #expect((started["result"] as? [String: Any])?["type"] as? String == "subscription_started", "\(started)")
        }
        try subscribe(first, [["type": "pane.agent_status_changed", "pane_id": "w1:p1"]])
        try subscribe(second, [["type": "pane.agent_status_changed", "pane_id": "w1:p2"]])
        try subscribe(
            blockedOnly, [["type": "pane.agent_status_changed", "pane_id": "w1:p1", "agent_status": "blocked"]])
        try subscribe(lifecycle, [["type": "pane.created"], ["type": "pane.closed"], ["type": "pane.agent_detected"]])
        let before = try agentInfo(first, "w1:p1")

        try standIn.setStatus(pane: "w1:p1", .done, title: "Login fixed")
        let event = try first.readJSON()
        #expect(event["event"] as? String == "pane.agent_status_changed")
        let data = try #require(event["data"] as? [String: Any])
        #expect(data["pane_id"] as? String == "w1:p1")
        #expect(data["workspace_id"] as? String == "w1")
        #expect(data["agent_status"] as? String == "done")
        #expect(data["agent"] as? String == "claude")
        #expect(data["title"] as? String == "Login fixed")
        // The change was answered before these pings were sent: an event for them would come first.
        try expectNothingPending(second)
        try expectNothingPending(blockedOnly)
        try expectNothingPending(lifecycle)
        let after = try agentInfo(first, "w1:p1")
        for field in ["revision", "state_change_seq"] {
            let old = try #require(before[field] as? Int)
            let new = try #require(after[field] as? Int)
            #expect(new > old, "\(field) grows with a state change")
        }

        try standIn.setStatus(pane: "w1:p1", .blocked)
        #expect((try first.readJSON()["data"] as? [String: Any])?["agent_status"] as? String == "blocked")
        #expect((try blockedOnly.readJSON()["data"] as? [String: Any])?["agent_status"] as? String == "blocked")
        try expectNothingPending(second)

        try standIn.setStatus(pane: "w1:p2", .idle)
        #expect((try second.readJSON()["data"] as? [String: Any])?["pane_id"] as? String == "w1:p2")
        try expectNothingPending(first)

        // Lifecycle: a pane comes with its agent, a shell pane starts one, a pane goes.
        try standIn.addAgent(pane: "w1:p3", name: "claude-3", status: .working)
        #expect(try lifecycle.readJSON()["event"] as? String == "pane.created")
        let detected = try lifecycle.readJSON()
        #expect(detected["event"] as? String == "pane.agent_detected")
        #expect((detected["data"] as? [String: Any])?["pane_id"] as? String == "w1:p3")
        try standIn.detectAgent(pane: "w2:p1", name: "late", kind: "codex")
        #expect(try lifecycle.readJSON()["event"] as? String == "pane.agent_detected")
        try standIn.removeAgent(pane: "w1:p1")
        let closed = try lifecycle.readJSON()
        #expect(closed["event"] as? String == "pane.closed")
        #expect((closed["data"] as? [String: Any])?["pane_id"] as? String == "w1:p1")
        try expectNothingPending(lifecycle)

        // A status subscription needs a pane, one that exists.
        let other = try #require(LineClient(path: standIn.socketPath()))
        let missing = try other.call("events.subscribe", ["subscriptions": [["type": "pane.agent_status_changed"]]])
        #expect(other.errorCode(missing) == "invalid_params")
        let gone = try other.call(
            "events.subscribe", ["subscriptions": [["type": "pane.agent_status_changed", "pane_id": "w1:p1"]]])
        #expect(other.errorCode(gone) == "not_found")
    }

    @Test func sessionListShowsTheDefaultFirstThenNamedSessionsSortedAndWhichRun() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-standin-")
        let standIn = try HerdrStandIn(home: directory.appending("home"))
        defer { standIn.stop() }
        let empty = try sessionList(standIn)
        #expect(empty.map(\.name) == ["default"])
        #expect(empty.first?.running == false, "herdr not running: the default is listed, not running")

        try standIn.startSession()
        try standIn.startSession("zeta")
        try standIn.startSession("alpha")
        try standIn.addAgent(session: "alpha", pane: "w1:p1", name: "in-alpha")
        try standIn.stopSession("alpha")
        let sessions = try sessionList(standIn)
        #expect(sessions.map(\.name) == ["default", "alpha", "zeta"])
        #expect(sessions.map(\.isDefault) == [true, false, false])
        #expect(sessions.map(\.running) == [true, false, true])
        #expect(sessions.map(\.socketPath) == ["default", "alpha", "zeta"].map { standIn.socketPath(session: $0) })
        #expect(sessions[0].sessionDirectory == directory.appending("home/.config/herdr").path)
        #expect(sessions[2].sessionDirectory == directory.appending("home/.config/herdr/sessions/zeta").path)

        let stopped = try standIn.run(["agent", "list", "--session", "alpha"])
        #expect(stopped.status == 1)
        #expect(stopped.stderr.contains("not running"), "\(stopped.stderr)")
        try standIn.startSession("alpha")
        let back = try standIn.run(["agent", "list", "--session", "alpha"])
        #expect(back.status == 0, "\(back.stderr)")
        #expect(back.stdout.contains("\"name\":\"in-alpha\""), "a stopped session keeps its agents")

        let snapshot = try standIn.run(["api", "snapshot", "--session", "alpha"])
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(snapshot.stdout.utf8)) as? [String: Any])
        #expect(document["type"] as? String == "session_snapshot")
        #expect((document["agents"] as? [[String: Any]])?.first?["name"] as? String == "in-alpha")
        #expect(snapshot.stdout.split(separator: "\n").count == 1, "one JSON document, one line")

        standIn.endSession("zeta")
        #expect(try sessionList(standIn).map(\.running) == [true, true, false])
        #expect(!FileManager.default.fileExists(atPath: standIn.socketPath(session: "zeta")))
        #expect(try standIn.run(["--version"]).stdout.hasPrefix("herdr "))
        #expect(try standIn.run(["agent", "dance"]).status == 2)
    }

    @Test func agentAttachLandsInThePaneItNamesAndRefusesWhatIsNotOneAgent() throws {
        let (standIn, directory) = try standIn()
        defer {
            standIn.stop()
            directory.remove()
        }
        try standIn.addAgent(pane: "w3:p1", name: "twin")
        try standIn.addAgent(pane: "w3:p2", name: "twin")
        #expect(standIn.waitForScreen(pane: "w1:p2") { $0.contains("pane w1:p2 codex-1") } != nil)
        let terminal = try TmuxTerminal(directory: directory, width: 100, height: 30)
        try terminal.type("export HOME=\(standIn.home.path) PATH=\(standIn.binDirectory.path):$PATH")

        try terminal.type("herdr agent attach codex-1")
        try terminal.waitFor("pane w1:p2 codex-1")
        try terminal.waitFor("w1:p2$ ")
        #expect(waitUntil { standIn.attachedClients() == ["w1:p2"] }, "\(standIn.attachedClients())")
        try terminal.type("echo typed-in-$((6*7))")
        #expect(standIn.waitForScreen(pane: "w1:p2") { $0.contains("typed-in-42") } != nil)
        #expect(!standIn.screen(pane: "w1:p1").contains("typed-in"))
        standIn.detachClients()
        #expect(waitUntil { standIn.attachedClients().isEmpty })

        try terminal.type("clear; herdr agent attach w3:p1")
        try terminal.waitFor("pane w3:p1 twin")
        #expect(waitUntil { standIn.attachedClients() == ["w3:p1"] })
        standIn.detachClients()
        #expect(waitUntil { standIn.attachedClients().isEmpty })

        for (target, says) in [
            ("twin", "names 2 agents"), ("nobody", "no live agent"), ("w2:p1", "no live agent"),
            ("w9:p9", "no live agent"),
        ] {
            let refused = try standIn.run(["agent", "attach", target])
            #expect(refused.status == 1, "\(target): \(refused.stdout) \(refused.stderr)")
            #expect(refused.stderr.contains(says), "\(target): \(refused.stderr)")
        }
        #expect(standIn.attachedClients().isEmpty, "a refused target attaches nothing")

        // `herdr` attaches the session view, the tmux session named like the herdr session.
        try terminal.type("clear; herdr")
        #expect(waitUntil { standIn.attachedClients() == ["default"] }, "\(standIn.attachedClients())")
        try terminal.waitFor("[default]")
    }

    @Test func hostileModesAreEachObservableOnTheSocket() throws {
        let (standIn, directory) = try standIn()
        defer {
            standIn.stop()
            directory.remove()
        }

        // frozen: requests are read and logged, never answered.
        try standIn.setMode(.frozen)
        let frozen = try #require(LineClient(path: standIn.socketPath()))
        frozen.send(#"{"id":"lost","method":"ping","params":{}}"#)
        #expect(waitUntil { (try? standIn.requests().last) == "ping" })
        try standIn.setMode(.normal)
        let answered = try frozen.call("ping", id: "after")
        #expect(answered["id"] as? String == "after", "the frozen request got no answer: \(answered)")

        // garbage: the first line back is no JSON.
        try standIn.setMode(.garbage)
        let garbage = try #require(LineClient(path: standIn.socketPath()))
        garbage.send(#"{"id":"g1","method":"agent.list","params":{}}"#)
        let line = try #require(garbage.readLine())
        #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) == nil, "\(line)")
        let cli = try standIn.run(["agent", "list"])
        #expect(cli.status == 1 && cli.stderr.contains("unreadable"), "\(cli.stderr)")
        try standIn.setMode(.normal)

        // slow: an answer leaves no sooner than asked.
        try standIn.setMode(.slow(milliseconds: 300))
        let slow = try #require(LineClient(path: standIn.socketPath()))
        let started = Date()
        #expect((try slow.call("ping")["result"] as? [String: Any])?["type"] as? String == "pong")
        #expect(Date().timeIntervalSince(started) >= 0.3)
        try standIn.setMode(.normal)

        // huge: agent.list and the snapshot carry the made-up agents too.
        try standIn.setMode(.huge(agents: 5000))
        let huge = try #require(LineClient(path: standIn.socketPath()))
        let many = try #require(try huge.call("agent.list")["result"] as? [String: Any])
        #expect((many["agents"] as? [Any])?.count == 5002)
        let snapshot = try #require(try huge.call("session.snapshot")["result"] as? [String: Any])
        #expect((snapshot["agents"] as? [Any])?.count == 5002)
        try standIn.setMode(.normal)

        // old protocol: an older pong, and no events.subscribe.
        try standIn.setMode(.oldProtocol(19))
        let old = try #require(LineClient(path: standIn.socketPath()))
        #expect((try old.call("ping")["result"] as? [String: Any])?["protocol"] as? Int == 19)
        let refused = try old.call(
            "events.subscribe", ["subscriptions": [["type": "pane.agent_status_changed", "pane_id": "w1:p1"]]])
        #expect(old.errorCode(refused) == "unknown_method")
        try standIn.setMode(.normal)

        // restart: every connection closed, the socket back with the same agents.
        let subscriber = try #require(LineClient(path: standIn.socketPath()))
        _ = try subscriber.call(
            "events.subscribe", ["subscriptions": [["type": "pane.agent_status_changed", "pane_id": "w1:p1"]]])
        try standIn.restartSession()
        #expect(subscriber.readLine() == nil, "the subscription's connection was closed")
        let fresh = try #require(LineClient(path: standIn.socketPath()))
        let agents = try #require(try fresh.call("agent.list")["result"] as? [String: Any])
        #expect((agents["agents"] as? [Any])?.count == 2)

        // restart with a gap: nothing answers, then it does again.
        try standIn.restartSession(downFor: 200)
        #expect(LineClient(path: standIn.socketPath()) == nil)
        #expect(waitUntil { LineClient(path: standIn.socketPath()) != nil })

        // stop: not running until started again.
        let open = try #require(LineClient(path: standIn.socketPath()))
        try standIn.stopSession()
        #expect(open.readLine() == nil)
        #expect(LineClient(path: standIn.socketPath()) == nil)
        #expect(try sessionList(standIn).first?.running == false)
        try standIn.startSession()
        #expect(try sessionList(standIn).first?.running == true)

        // Nothing above asked for a method that changes herdr.
        let methods = Set(try standIn.requests())
        #expect(methods.subtracting(["(invalid)"]).isSubset(of: HerdrStandIn.readOnlyMethods), "\(methods)")
        try standIn.clearRequests()
        #expect(try standIn.requests().isEmpty)
    }

    @Test func asTheSSHUserThroughALoginShell() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let standIn = server.herdr
        try standIn.startSession()
        try standIn.addAgent(pane: "w1:p1", name: "claude-1", status: .blocked)
        try standIn.startSession("work")
        var socket = stat()
        #expect(stat(standIn.socketPath(), &socket) == 0)
        #expect(socket.st_uid == server.user.uid, "the server dropped to the session's user before listening")

        let client = try TemporaryDirectory(prefix: "herdr-standin-ssh-")
        let key = client.file("id_ed25519").path
        try ProcessRunner.run("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", key], check: true)
        try server.authorize(try String(contentsOfFile: key + ".pub", encoding: .utf8))
        func ssh(_ command: String) throws -> ProcessResult {
            try ProcessRunner.run(
                "ssh",
                [
                    "-i", key, "-p", String(server.port), "-o", "StrictHostKeyChecking=no", "-o",
                    "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                    "\(server.user.name)@\(server.host)", command,
                ], timeout: 30)
        }
        let list = try ssh(#"exec "$SHELL" -lc 'herdr session list --json'"#)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(
            list.stdout.hasPrefix(#"{"sessions":[{"name":"default","default":true,"running":true,"#), "\(list.stdout)")
        #expect(list.stdout.contains(#"{"name":"work","default":false,"running":true,"#), "\(list.stdout)")
        let snapshot = try ssh(#"exec "$SHELL" -lc 'herdr api snapshot --session default'"#)
        #expect(snapshot.status == 0, "\(snapshot.stderr)")
        #expect(snapshot.stdout.contains(#""name":"claude-1""#), "\(snapshot.stdout)")
        #expect(try standIn.run(["agent", "get", "claude-1"]).status == 0, "as the owner through setpriv")
    }

    @Test func aHerdrHostInANetworkNamespaceReachesTheSocket() throws {
        let (standIn, directory) = try standIn()
        defer {
            standIn.stop()
            directory.remove()
        }
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let result = try ProcessRunner.run(
            "ip", ["netns", "exec", namespace.name, standIn.executable.path, "agent", "get", "codex-1"],
            environment: standIn.environment, timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains(#""pane_id":"w1:p2""#), "\(result.stdout)")
    }

    @Test func nothingOutlivesItsEndOrATestProcessThatDied() throws {
        let (standIn, directory) = try standIn()
        defer { directory.remove() }
        let pid = try #require(standIn.serverPID())
        let tmux = standIn.tmuxSocket()
        #expect(FileManager.default.fileExists(atPath: tmux))
        standIn.endSession()
        #expect(kill(pid, 0) != 0, "the server ended at the end of its input")
        #expect(!FileManager.default.fileExists(atPath: standIn.socketPath()))
        #expect(!FileManager.default.fileExists(atPath: tmux), "its tmux server went with it")

        // SIGTERM: the same cleanup.
        let server = try InteractiveProcess(
            standIn.executable.path, ["standin-serve", "--session", "signalled"], environment: standIn.environment)
        #expect(server.waitFor("ok ready"))
        server.writeLine("add w1:p1 name=x")
        #expect(server.waitFor("ok added w1:p1"))
        let signalledTmux = standIn.tmuxSocket(session: "signalled")
        #expect(FileManager.default.fileExists(atPath: signalledTmux))
        server.signal(SIGTERM)
        #expect(server.wait(timeout: 15) == 0)
        #expect(!FileManager.default.fileExists(atPath: standIn.socketPath(session: "signalled")))
        #expect(!FileManager.default.fileExists(atPath: signalledTmux))

        // stop(): servers and every tmux server under the stand-in's state, attached ones too.
        try standIn.startSession()
        try standIn.addAgent(pane: "w1:p1")
        let terminal = try TmuxTerminal(directory: directory)
        try terminal.type("HOME=\(standIn.home.path) \(standIn.executable.path) session attach solo")
        #expect(waitUntil { standIn.attachedClients(session: "solo") == ["solo"] })
        let serverPID = try #require(standIn.serverPID())
        standIn.stop()
        #expect(kill(serverPID, 0) != 0)
        #expect(standIn.sessions.isEmpty)
        let left =
            (try? FileManager.default.contentsOfDirectory(
                atPath: URL(fileURLWithPath: tmux).deletingLastPathComponent().path)) ?? []
        #expect(left.isEmpty, "\(left)")
        #expect(terminal.waitForScreen { !$0.contains("[solo]") } != nil, "the session view's tmux is gone")
    }

    // MARK: Helpers

    struct ListedSession {
        let name: String
        let isDefault: Bool
        let running: Bool
        let socketPath: String
        let sessionDirectory: String
    }

    /// `herdr session list --json`, read field by field as the facts give them.
    func sessionList(_ standIn: HerdrStandIn) throws -> [ListedSession] {
        let result = try standIn.run(["session", "list", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(Array(document.keys) == ["sessions"])
        let sessions = try #require(document["sessions"] as? [[String: Any]])
        return try sessions.map { entry in
            #expect(Set(entry.keys) == ["name", "default", "running", "socket_path", "session_dir"])
            return ListedSession(
                name: try #require(entry["name"] as? String), isDefault: try #require(entry["default"] as? Bool),
                running: try #require(entry["running"] as? Bool),
                socketPath: try #require(entry["socket_path"] as? String),
                sessionDirectory: try #require(entry["session_dir"] as? String))
        }
    }

    func agentInfo(_ client: LineClient, _ pane: String) throws -> [String: Any] {
        let result = try #require(try client.call("agent.get", ["target": pane])["result"] as? [String: Any])
        return try #require(result["agent"] as? [String: Any])
    }

    /// A ping's answer is the next line: no event was waiting before it.
    func expectNothingPending(_ client: LineClient, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let answer = try client.call("ping", id: "probe")
        #expect(
            answer["id"] as? String == "probe", "an unexpected line came first: \(answer)",
            sourceLocation: sourceLocation)
    }

    /// Polls `condition` (bounded) until it holds.
    func waitUntil(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            usleep(20_000)
        }
        return condition()
    }
}

/// A client of herdr's socket as herdr-host is one: newline-delimited JSON over a Unix socket,
/// several requests on one connection, pushed lines read as they come.
final class LineClient {
    private let fd: Int32
    private var buffer: [UInt8] = []
    private var nextID = 0

    /// Nil when nothing listens at `path`.
    init?(path: String) {
        guard let fd = Self.open(path) else { return nil }
        self.fd = fd
    }

    deinit { close(fd) }

    private static func open(_ path: String) -> Int32? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)) + [0])
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            return nil
        }
        return fd
    }

    func send(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if written <= 0 { return }
            offset += written
        }
    }

    /// The next line, or nil at the end of the connection or after `timeout` seconds.
    func readLine(timeout: Double = 20) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while buffer.count < 1 << 28 {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeSubrange(...end)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 60) * 1000) + 1) > 0 else { continue }
            let count = read(fd, &chunk, chunk.count)
            if count <= 0 { return nil }
            buffer += chunk[..<count]
        }
        return nil
    }

    func readJSON(timeout: Double = 20) throws -> [String: Any] {
        guard let line = readLine(timeout: timeout) else { throw FixtureError("no line from herdr's socket") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw FixtureError("not a JSON object: \(line)")
        }
        return object
    }

    /// Sends one request and reads the next line as its answer.
    func call(_ method: String, _ params: [String: Any] = [:], id: String? = nil) throws -> [String: Any] {
        nextID += 1
        let request: [String: Any] = ["id": id ?? "r\(nextID)", "method": method, "params": params]
        let data = try JSONSerialization.data(withJSONObject: request)
        send(String(decoding: data, as: UTF8.self))
        return try readJSON()
    }

    func errorCode(_ answer: [String: Any]) -> String? {
        guard let error = answer["error"] as? [String: Any], error["message"] is String else { return nil }
        return error["code"] as? String
    }
}
