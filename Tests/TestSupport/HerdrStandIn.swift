import Foundation
import Glibc

/// herdr for tests, on a computer's HOME: herdr cannot be installed here, so a Python program
/// (`Tests/TestSupport/HerdrStandIn/herdr`, standard library only) plays it from the facts in
/// shared/specs/herdr-api.md. It is installed as `HOME/bin/herdr`, first on PATH for login shells
/// (`HOME/.profile`), and gives:
///
/// - herdr's commands: `herdr` and `herdr session attach NAME` (tmux), `herdr session list --json`,
///   `herdr agent list|get|attach TARGET [--session NAME]`, `herdr api snapshot [--session NAME]`;
/// - per session started here, a server on herdr's socket (`HOME/.config/herdr/herdr.sock`, or
///   `HOME/.config/herdr/sessions/NAME/herdr.sock`) answering `ping`, `agent.list`, `agent.get`,
///   `session.snapshot` and `events.subscribe` as herdr does, with agents the test adds and whose
///   statuses it changes on cue, hostile modes, and a log of the methods it was asked;
/// - tmux behind it: one tmux server per herdr session (`tmuxSocket(session:)`), each agent pane
///   a tmux session of its own whose shell prints `pane w1:p2 NAME` and shows the prompt `w1:p2$ `.
///
/// With an `owner`, everything runs as that account (the SSH road's sshd runs sessions as a
/// `TestUser`): HOME and the files are handed to it, the servers drop to it before they listen.
/// The sockets are paths on the file system, so a herdr-host in a network namespace
/// (`ip netns exec`) reaches them. Each server reads its control lines from a pipe of this
/// object's: it ends with the test process, and `stop()` (or deinit) ends every server and
/// kills every tmux server under this HOME's stand-in state. docs/testing.md has the control
/// grammar and what is the stand-in's own reading of herdr.
public final class HerdrStandIn: @unchecked Sendable {
    /// An agent's `agent_status`, as herdr names them.
    public enum Status: String, Sendable, CaseIterable {
        case idle, working, blocked, done, unknown
    }

    /// How a session's server behaves (each mode is observable through its socket).
    public enum Mode: Sendable, Equatable {
        /// Answers as herdr does (and clears slow, huge and old-protocol).
        case normal
        /// Accepts connections and reads requests, never answers nor pushes.
        case frozen
        /// Answers each request with malformed lines (cut JSON, binary, wrong shapes).
        case garbage
        /// Every answer and event leaves `milliseconds` after it was due.
        case slow(milliseconds: Int)
        /// `agent.list` and `session.snapshot` also carry `agents` made-up agents (workspace w999).
        case huge(agents: Int)
        /// `ping` says this older protocol, and `events.subscribe` is an unknown method.
        case oldProtocol(Int)

        var controlLine: String {
            switch self {
            case .normal: "normal"
            case .frozen: "frozen"
            case .garbage: "garbage"
            case .slow(let milliseconds): "slow \(milliseconds)"
            case .huge(let agents): "huge \(agents)"
            case .oldProtocol(let version): "old-protocol \(version)"
            }
        }
    }

    /// herdr's name for the default session.
    public static let defaultSession = "default"
    /// The methods herdr-host may call: none of them changes anything in herdr.
    public static let readOnlyMethods: Set<String> = [
        "ping", "agent.list", "agent.get", "session.snapshot", "events.subscribe",
    ]
    /// The program's source, installed into each HOME.
    public static let program = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("HerdrStandIn/herdr")

    public let home: URL
    public let owner: TestUser?
    public var binDirectory: URL { home.appendingPathComponent("bin") }
    /// `HOME/bin/herdr`.
    public var executable: URL { binDirectory.appendingPathComponent("herdr") }
    public var profile: URL { home.appendingPathComponent(".profile") }

    private let lock = NSLock()
    private var servers: [String: InteractiveProcess] = [:]
    /// One control exchange at a time: an answer is the next line the server writes.
    private let controlLock = NSLock()

    /// Installs the stand-in under `home` (made if missing): `bin/herdr` and a `.profile` that puts
    /// `bin` first on PATH (appended to one that is there). With an `owner`, HOME, `bin` and the
    /// files are chowned to it.
    public init(home: URL, owner: TestUser? = nil) throws {
        self.home = home
        self.owner = owner
        let fm = FileManager.default
        if !fm.fileExists(atPath: home.path) {
            try fm.createDirectory(at: home, withIntermediateDirectories: true)
            chmod(home.path, 0o755)
        }
        try fm.createDirectory(at: binDirectory, withIntermediateDirectories: true)
        chmod(binDirectory.path, 0o755)
        try? fm.removeItem(at: executable)
        try fm.copyItem(at: Self.program, to: executable)
        guard chmod(executable.path, 0o755) == 0 else { throw FixtureError("chmod \(executable.path) failed") }
        let pathLine = "PATH=\"\(binDirectory.path):$PATH\"\nexport PATH\n"
        let existing = (try? String(contentsOf: profile, encoding: .utf8)) ?? ""
        if !existing.contains(pathLine) {
            try Data((existing + (existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n") + pathLine).utf8)
                .write(to: profile)
        }
        chmod(profile.path, 0o644)
        if let owner {
            for path in [home.path, binDirectory.path, executable.path, profile.path] {
                guard chown(path, owner.uid, owner.gid) == 0 else {
                    throw FixtureError("chown \(path) failed: \(String(cString: strerror(errno)))")
                }
            }
        }
    }

    deinit { stop() }

    /// Adds lines to the login profile (after the PATH line), e.g. a prompt.
    public func appendToProfile(_ text: String) throws {
        let existing = (try? String(contentsOf: profile, encoding: .utf8)) ?? ""
        try Data((existing + text + (text.hasSuffix("\n") ? "" : "\n")).utf8).write(to: profile)
        if let owner { chown(profile.path, owner.uid, owner.gid) }
    }

    // MARK: Paths

    /// The session's directory as `herdr session list` reports it.
    public func sessionDirectory(session: String = defaultSession) -> String {
        let config = home.appendingPathComponent(".config/herdr")
        return session == Self.defaultSession
            ? config.path : config.appendingPathComponent("sessions").appendingPathComponent(session).path
    }

    /// herdr's socket for the session.
    public func socketPath(session: String = defaultSession) -> String {
        sessionDirectory(session: session) + "/herdr.sock"
    }

    /// The tmux server behind the session (its session view is the tmux session named like it;
    /// each agent pane the tmux session `pane-wN-pM`).
    public func tmuxSocket(session: String = defaultSession) -> String {
        home.appendingPathComponent(".local/state/herdr-standin/tmux/\(session).sock").path
    }

    /// The environment the computer's programs see: HOME, and PATH with `bin` first (what a login
    /// shell gets from the profile), no TMUX.
    public var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = home.path
        environment["PATH"] = binDirectory.path + ":" + (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin")
        for name in ["TMUX", "TMUX_PANE", "HERDR_SOCKET_PATH"] { environment[name] = nil }
        return environment
    }

    // MARK: Sessions

    /// Starts the session's server (or, when `stopSession` stopped it, makes it listen again).
    /// Returns once its socket answers.
    public func startSession(_ name: String = defaultSession) throws {
        if lock.withLock({ servers[name] }) != nil {
            try control(session: name, "start")
            return
        }
        var arguments = [executable.path, "standin-serve", "--session", name]
        if let owner { arguments += ["--owner", "\(owner.uid):\(owner.gid)"] }
        let server = try InteractiveProcess("/usr/bin/python3", ["-I", "-S"] + arguments, environment: environment)
        var first: String?
        server.waitFor(timeout: 30) { out, _ in
            guard let end = out.firstIndex(of: "\n") else { return false }
            first = String(out[..<end])
            return true
        }
        guard let first, first.hasPrefix("ok ready") else {
            server.signal(SIGTERM)
            _ = server.wait(timeout: 10)
            throw FixtureError(
                "herdr stand-in session \(name) did not start: \(first ?? "no answer") \(server.stderr)")
        }
        lock.withLock { servers[name] = server }
    }

    /// The session stops answering: every connection closed, the socket gone (`running` false),
    /// its agents and terminals kept for `startSession`.
    public func stopSession(_ name: String = defaultSession) throws {
        try control(session: name, "stop")
    }

    /// herdr restarting: every connection closed and the socket gone, then back after
    /// `downFor` milliseconds (at once by default), with the same agents.
    public func restartSession(_ name: String = defaultSession, downFor milliseconds: Int = 0) throws {
        try control(session: name, milliseconds > 0 ? "restart \(milliseconds)" : "restart")
    }

    /// Ends the session's server: its socket and its tmux server go with it.
    public func endSession(_ name: String = defaultSession) {
        guard let server = lock.withLock({ servers.removeValue(forKey: name) }) else { return }
        Self.end(server)
    }

    /// The sessions whose servers run here (stopped or not).
    public var sessions: [String] { lock.withLock { servers.keys.sorted() } }

    /// The process id of the session's server, while it runs.
    public func serverPID(session: String = defaultSession) -> Int32? {
        lock.withLock { servers[session] }.flatMap { $0.process.isRunning ? $0.process.pid : nil }
    }

    // MARK: Agents

    /// Adds a pane hosting an agent (a tmux session showing `pane PANE NAME`), announced to
    /// lifecycle subscribers as `pane.created` then `pane.agent_detected`.
    public func addAgent(
        session: String = defaultSession, pane: String, name: String? = nil, kind: String? = "claude",
        status: Status = .idle, title: String? = nil, tab: String? = nil, focused: Bool = false
    ) throws {
        var words = ["add", pane, "status=\(status.rawValue)"]
        if let name { words.append("name=\(name)") }
        if let kind { words.append("kind=\(kind)") }
        if let title { words.append("title=\(title)") }
        if let tab { words.append("tab=\(tab)") }
        if focused { words.append("focused=true") }
        try control(session: session, words)
    }

    /// Adds a pane with no agent in it (in the snapshot's panes, not in `agent.list`).
    public func addShellPane(session: String = defaultSession, pane: String, tab: String? = nil) throws {
        try control(session: session, ["add", pane, "shell"] + (tab.map { ["tab=\($0)"] } ?? []))
    }

    /// A shell pane starts hosting an agent (`pane.agent_detected`).
    public func detectAgent(
        session: String = defaultSession, pane: String, name: String? = nil, kind: String? = "claude",
        status: Status = .idle, title: String? = nil
    ) throws {
        var words = ["detect", pane, "status=\(status.rawValue)"]
        if let name { words.append("name=\(name)") }
        if let kind { words.append("kind=\(kind)") }
        if let title { words.append("title=\(title)") }
        try control(session: session, words)
    }

    /// One state change of the pane's agent: `revision` and `state_change_seq` grow, and the
    /// pane's `pane.agent_status_changed` subscribers get the event.
    public func setStatus(session: String = defaultSession, pane: String, _ status: Status, title: String? = nil)
        throws
    {
        try control(session: session, ["status", pane, status.rawValue] + (title.map { ["title=\($0)"] } ?? []))
    }

    /// Changes the agent's name, title or focus (its revision grows; no event).
    public func update(
        session: String = defaultSession, pane: String, name: String? = nil, title: String? = nil,
        focused: Bool? = nil
    ) throws {
        var words = ["set", pane]
        if let name { words.append("name=\(name)") }
        if let title { words.append("title=\(title)") }
        if let focused { words.append("focused=\(focused)") }
        try control(session: session, words)
    }

    /// Closes the pane (`pane.closed`), its terminal killed.
    public func removeAgent(session: String = defaultSession, pane: String) throws {
        try control(session: session, ["remove", pane])
    }

    // MARK: Hostile modes and the request log

    public func setMode(session: String = defaultSession, _ mode: Mode) throws {
        try control(session: session, mode.controlLine)
    }

    /// The methods the session's socket received so far, in order (`(invalid)` for a line that
    /// was no JSON object or had no method).
    public func requests(session: String = defaultSession) throws -> [String] {
        let answer = try control(session: session, "requests")
        return answer.split(separator: " ").dropFirst().map(String.init)
    }

    public func clearRequests(session: String = defaultSession) throws {
        try control(session: session, "requests clear")
    }

    // MARK: Control

    /// Sends one control line (the words quoted as the server's shell-like reader wants) and
    /// returns its `ok …` answer; an `error: …` answer throws.
    @discardableResult
    public func control(session: String = defaultSession, _ words: [String]) throws -> String {
        try control(session: session, words.map(Self.quoted).joined(separator: " "))
    }

    /// Sends one raw control line and returns its `ok …` answer; an `error: …` answer throws.
    @discardableResult
    public func control(session: String = defaultSession, _ line: String) throws -> String {
        guard !line.contains("\n") else { throw FixtureError("a control line is one line: \(line.debugDescription)") }
        guard let server = lock.withLock({ servers[session] }) else {
            throw FixtureError("herdr stand-in: no server for session \(session); startSession first")
        }
        return try controlLock.withLock {
            let before = server.stdout.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
            server.writeLine(line)
            var answer: String?
            server.waitForBytes(timeout: 60) { out, _ in
                var seen = 0
                var start = 0
                for index in out.indices where out[index] == UInt8(ascii: "\n") {
                    if seen == before {
                        answer = String(decoding: out[start..<index], as: UTF8.self)
                        return true
                    }
                    seen += 1
                    start = index + 1
                }
                return false
            }
            guard let answer else {
                throw FixtureError("herdr stand-in session \(session) gave no answer to \(line): \(server.stderr)")
            }
            guard answer.hasPrefix("ok") else {
                throw FixtureError("herdr stand-in session \(session): \(line): \(answer)")
            }
            return answer
        }
    }

    /// A word as the control reader (Python's shlex) reads it back.
    static func quoted(_ word: String) -> String {
        let plain = !word.isEmpty && word.allSatisfy { Self.plainCharacters.contains($0) }
        return plain ? word : "'" + word.replacingOccurrences(of: "'", with: "'\"'\"'") + "'"
    }

    private static let plainCharacters = Set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")

    // MARK: Terminals

    /// What the agent pane's terminal shows (tmux capture-pane, wrapped lines joined).
    public func screen(session: String = defaultSession, pane: String) -> String {
        let target = "=pane-" + pane.replacingOccurrences(of: ":", with: "-") + ":"
        let result = try? ProcessRunner.run(
            "tmux", ["-S", tmuxSocket(session: session), "capture-pane", "-p", "-J", "-t", target], timeout: 10)
        return result?.stdout ?? ""
    }

    /// Where the session's tmux clients are: a pane id (`w1:p2`) for a client in an agent's pane,
    /// the session's name for one in the session view. Empty when nothing is attached.
    public func attachedClients(session: String = defaultSession) -> [String] {
        guard
            let result = try? ProcessRunner.run(
                "tmux", ["-S", tmuxSocket(session: session), "list-clients", "-F", "#{session_name}"], timeout: 10),
            result.status == 0
        else { return [] }
        return result.stdout.split(separator: "\n").map { name in
            guard name.hasPrefix("pane-"), let dash = name.dropFirst(5).firstIndex(of: "-") else { return String(name) }
            return String(name[name.index(name.startIndex, offsetBy: 5)..<dash]) + ":"
                + name[name.index(after: dash)...]
        }
    }

    /// Detaches every tmux client of the session (a person leaving the pane or the session view).
    public func detachClients(session: String = defaultSession) {
        let socket = tmuxSocket(session: session)
        guard
            let result = try? ProcessRunner.run(
                "tmux", ["-S", socket, "list-clients", "-F", "#{client_name}"], timeout: 10), result.status == 0
        else { return }
        for client in result.stdout.split(separator: "\n") {
            _ = try? ProcessRunner.run("tmux", ["-S", socket, "detach-client", "-t", String(client)], timeout: 10)
        }
    }

    /// Waits (bounded) until `matches` holds for the agent pane's screen; the screen, or nil.
    public func waitForScreen(
        session: String = defaultSession, pane: String, timeout: Double = 30, _ matches: (String) -> Bool
    ) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let current = screen(session: session, pane: pane)
            if matches(current) { return current }
            guard Date() < deadline else { return nil }
            usleep(20_000)
        }
    }

    // MARK: Commands

    /// Runs `herdr ARGUMENTS` as the computer's user would (the owner, through setpriv, when
    /// there is one), with `environment`.
    public func run(_ arguments: [String], extraEnvironment: [String: String] = [:], timeout: Double = 30) throws
        -> ProcessResult
    {
        var environment = environment
        environment.merge(extraEnvironment) { $1 }
        guard let owner else {
            return try ProcessRunner.run(executable.path, arguments, environment: environment, timeout: timeout)
        }
        return try ProcessRunner.run(
            "setpriv",
            ["--reuid=\(owner.uid)", "--regid=\(owner.gid)", "--clear-groups", executable.path] + arguments,
            environment: environment, timeout: timeout)
    }

    // MARK: Cleanup

    /// Ends every server this object started (their sockets and tmux servers go with them), then
    /// kills every tmux server left under this HOME's stand-in state (sessions attached with
    /// `herdr session attach` and no server). Safe to call more than once.
    public func stop() {
        let running = lock.withLock { () -> [InteractiveProcess] in
            defer { servers = [:] }
            return Array(servers.values)
        }
        for server in running { Self.end(server) }
        let directory = home.appendingPathComponent(".local/state/herdr-standin/tmux")
        let sockets = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in sockets where name.hasSuffix(".sock") {
            let path = directory.appendingPathComponent(name).path
            _ = try? ProcessRunner.run("tmux", ["-S", path, "kill-server"], timeout: 5)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// End of input first (the server cleans up), then SIGTERM, then SIGKILL: by PID.
    private static func end(_ server: InteractiveProcess) {
        server.closeInput()
        if server.wait(timeout: 15) != nil { return }
        server.signal(SIGTERM)
        if server.wait(timeout: 5) != nil { return }
        server.signal(SIGKILL)
        _ = server.wait(timeout: 5)
    }
}
