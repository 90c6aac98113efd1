import Foundation
import RelayProtocol

/// herdr's own JSON (specs/herdr-api.md), as its socket and its commands give it: a reply or
/// event line, an agent's fields, the session list, a snapshot. Unknown fields are ignored, as
/// herdr asks of its clients; whatever is read is bounded.
public enum HerdrJSON {
    /// The longest line read from herdr (a list of some thousands of agents fits).
    public static let maximumLineBytes = 8 * 1024 * 1024
    /// At most this many agents are read from one list; the rest are counted, not parsed.
    public static let maximumAgentsRead = 4096
    /// At most this many sessions are read from `session list`.
    public static let maximumSessionsRead = 1024

    /// One line of herdr's socket.
    public enum Line {
        /// A success: `result` with its `type` (`pong`, `agent_list`…).
        case result(id: String?, type: String?, result: [String: Any])
        case error(id: String?, code: String, message: String)
        /// A pushed event (`pane.agent_status_changed`…) and its data.
        case event(name: String, data: [String: Any])
    }

    /// Reads one line (without its newline); throws, saying what came, for anything else.
    public static func line(_ bytes: [UInt8]) throws(HerdrReplyError) -> Line {
        guard bytes.count <= maximumLineBytes else {
            throw HerdrReplyError("a line of more than \(maximumLineBytes >> 20) MiB")
        }
        guard let object = RelayJSON.object(bytes) else { throw HerdrReplyError("a line that is not a JSON object") }
        let id = object["id"] as? String ?? RelayJSON.integer(object["id"]).map(String.init)
        if let event = object["event"] as? String {
            return .event(name: event, data: object["data"] as? [String: Any] ?? [:])
        }
        if let error = object["error"] as? [String: Any] {
            return .error(
                id: id, code: error["code"] as? String ?? "error",
                message: BoundedText.printable(error["message"] as? String ?? "", maxBytes: 256))
        }
        if let result = object["result"] as? [String: Any] {
            return .result(id: id, type: result["type"] as? String, result: result)
        }
        throw HerdrReplyError("a line with neither result, error nor event")
    }

    /// The agents in a list (`agents` of `agent.list`'s result or of a snapshot), at most
    /// `maximumAgentsRead` of them; entries without a pane id or a status are skipped and counted.
    public static func agents(_ list: Any?) -> (agents: [HerdrAgentInfo], skipped: Int) {
        guard let list = list as? [Any] else { return ([], 0) }
        var agents: [HerdrAgentInfo] = []
        var skipped = 0
        for entry in list {
            guard agents.count < maximumAgentsRead, let fields = entry as? [String: Any],
                let agent = HerdrAgentInfo(fields)
            else {
                skipped += 1
                continue
            }
            agents.append(agent)
        }
        return (agents, skipped)
    }

    /// `herdr session list --json`: `{"sessions":[{"name","default","running","socket_path","session_dir"}]}`.
    public static func sessionList(_ bytes: [UInt8]) throws(HerdrReplyError) -> [HerdrSessionListing] {
        guard bytes.count <= maximumLineBytes, let object = RelayJSON.object(bytes),
            let list = object["sessions"] as? [Any]
        else { throw HerdrReplyError("herdr session list --json did not print {\"sessions\": […]}") }
        var sessions: [HerdrSessionListing] = []
        for entry in list.prefix(maximumSessionsRead) {
            guard let fields = entry as? [String: Any], let name = fields["name"] as? String,
                HerdrSessionInfo.isValidName(name), !sessions.contains(where: { $0.name == name })
            else { continue }
            sessions.append(
                HerdrSessionListing(
                    name: name,
                    isDefault: RelayJSON.boolean(fields["default"]) ?? (name == HerdrSessionInfo.defaultName),
                    running: RelayJSON.boolean(fields["running"]) ?? false,
                    socketPath: fields["socket_path"] as? String))
        }
        return sessions
    }

    /// The agents of a session snapshot (`session.snapshot`'s result, or what `herdr api
    /// snapshot` prints: the result itself or a reply holding it).
    public static func snapshotAgents(_ bytes: [UInt8]) throws(HerdrReplyError) -> (
        agents: [HerdrAgentInfo], skipped: Int
    ) {
        guard bytes.count <= maximumLineBytes, let object = RelayJSON.object(bytes) else {
            throw HerdrReplyError("a snapshot that is not a JSON object")
        }
        let result = object["result"] as? [String: Any] ?? object
        guard let list = result["agents"] else { throw HerdrReplyError("a snapshot without agents") }
        return agents(list)
    }
}

/// One session as `herdr session list --json` lists it.
public struct HerdrSessionListing: Sendable, Hashable {
    public var name: String
    public var isDefault: Bool
    /// Whether its server answered when herdr listed it.
    public var running: Bool
    public var socketPath: String?

    public init(name: String, isDefault: Bool, running: Bool, socketPath: String? = nil) {
        self.name = name
        self.isDefault = isDefault
        self.running = running
        self.socketPath = socketPath
    }
}

/// An agent as herdr describes it (AgentInfo), the fields a board needs, bounded.
public struct HerdrAgentInfo: Sendable, Hashable {
    public var pane: String
    public var workspace: String?
    public var status: HerdrAgentStatus
    /// `agent` (else `display_agent`): `claude`, `codex`.
    public var kind: String?
    public var name: String?
    /// `title`, else `terminal_title_stripped`.
    public var title: String?
    public var focused: Bool
    public var revision: UInt64?
    /// Grows with each state change, when herdr says.
    public var stateChangeSequence: UInt64?

    public init(
        pane: String, workspace: String? = nil, status: HerdrAgentStatus, kind: String? = nil, name: String? = nil,
        title: String? = nil, focused: Bool = false, revision: UInt64? = nil, stateChangeSequence: UInt64? = nil
    ) {
        self.pane = pane
        self.workspace = workspace
        self.status = status
        self.kind = BoundedText.optional(kind, maxBytes: HerdrAgent.maximumKindBytes)
        self.name = BoundedText.optional(name, maxBytes: HerdrAgent.maximumNameBytes)
        self.title = BoundedText.optional(title, maxBytes: HerdrAgent.maximumTitleBytes)
        self.focused = focused
        self.revision = revision
        self.stateChangeSequence = stateChangeSequence
    }

    /// nil without a pane id a board can carry or without a status.
    public init?(_ fields: [String: Any]) {
        guard let pane = fields["pane_id"] as? String, HerdrAgent.isValidPane(pane),
            let status = fields["agent_status"] as? String
        else { return nil }
        self.init(
            pane: pane, workspace: fields["workspace_id"] as? String, status: HerdrAgentStatus(herdr: status),
            kind: fields["agent"] as? String ?? fields["display_agent"] as? String, name: fields["name"] as? String,
            title: fields["title"] as? String ?? fields["terminal_title_stripped"] as? String,
            focused: RelayJSON.boolean(fields["focused"]) ?? false,
            revision: RelayJSON.integer(fields["revision"]).flatMap(UInt64.init(exactly:)),
            stateChangeSequence: RelayJSON.integer(fields["state_change_seq"]).flatMap(UInt64.init(exactly:)))
    }

    /// The board's entry for this agent in `session`, its status seen since `since`.
    public func agent(session: String, since: Int64?) -> HerdrAgent {
        HerdrAgent(
            key: AgentKey(session: session, pane: pane), name: name, kind: kind, status: status, title: title,
            since: since)
    }
}

/// herdr answered something that is not its protocol.
public struct HerdrReplyError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
