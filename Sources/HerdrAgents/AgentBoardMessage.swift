import Foundation
import RelayProtocol

/// One message of the agents family inside the companion channel (docs/companion.md, "Agents"),
/// computer → device: a JSON body (the channel adds its type byte and version). A whole board
/// goes as `full` in one or more parts; after it, `changes` carry only what changed. Every field
/// is bounded; a body that breaks a bound or a type does not parse.
public struct AgentBoardMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable {
        /// Part `part` of `parts` of a whole board; part 1 names herdr's state, the sessions and
        /// `omitted`, the others only agents.
        case full(part: Int, parts: Int)
        /// What changed since the last message: agents added or changed, agents removed, and
        /// herdr's state, the sessions or `omitted` when they changed.
        case changes
    }

    /// The longest body: one channel message (65518 bytes) less the type and version bytes, with room to spare.
    public static let maximumBodyBytes = 65_000
    /// A whole board takes at most this many parts (256 agents of the longest kind fit in 4).
    public static let maximumParts = 8

    /// Grows by one with every message of a connection, from 1.
    public var sequence: UInt32
    public var kind: Kind
    public var herdr: HerdrAvailability?
    public var sessions: [HerdrSessionInfo]?
    public var omitted: Int?
    /// Agents, whole (added or changed, in `changes`).
    public var agents: [HerdrAgent]
    /// Agents gone (`changes` only).
    public var removed: [AgentKey]

    public init(
        sequence: UInt32, kind: Kind, herdr: HerdrAvailability? = nil, sessions: [HerdrSessionInfo]? = nil,
        omitted: Int? = nil, agents: [HerdrAgent] = [], removed: [AgentKey] = []
    ) {
        self.sequence = sequence
        self.kind = kind
        self.herdr = herdr
        self.sessions = sessions
        self.omitted = omitted
        self.agents = agents
        self.removed = removed
    }

    // MARK: - Building from boards

    /// The whole `board` as one or more `full` parts, numbered from `sequence` on (which is
    /// left at the next number).
    public static func full(_ board: AgentBoard, sequence: inout UInt32) -> [AgentBoardMessage] {
        let header = fields(herdr: board.herdr, sessions: board.sessions, omitted: board.omitted)
        let groups = pack(board.sorted.map(encode), headerBytes: header.utf8.count)
        return groups.enumerated().map { index, agents in
            defer { sequence &+= 1 }
            return AgentBoardMessage(
                sequence: sequence, kind: .full(part: index + 1, parts: groups.count),
                herdr: index == 0 ? board.herdr : nil, sessions: index == 0 ? board.sessions : nil,
                omitted: index == 0 ? board.omitted : nil, agents: agents.compactMap(\.agent))
        }
    }

    /// What turns `old` into `new` as `changes` messages (none when nothing changed), numbered
    /// from `sequence` on.
    public static func changes(from old: AgentBoard, to new: AgentBoard, sequence: inout UInt32)
        -> [AgentBoardMessage]
    {
        let changed = new.sorted.filter { old.agents[$0.key] != $0 }
        let removed = old.agents.keys.filter { new.agents[$0] == nil }.sorted()
        let herdr = old.herdr == new.herdr ? nil : new.herdr
        let sessions = old.sessions == new.sessions ? nil : new.sessions
        let omitted = old.omitted == new.omitted ? nil : new.omitted
        guard !changed.isEmpty || !removed.isEmpty || herdr != nil || sessions != nil || omitted != nil else {
            return []
        }
        let header = fields(herdr: herdr, sessions: sessions, omitted: omitted)
        var pieces = changed.map { Piece.agent($0) }
        pieces += removed.map { Piece.removed($0) }
        var messages: [AgentBoardMessage] = []
        for (index, group) in pack(pieces.map(encode), headerBytes: header.utf8.count).enumerated() {
            messages.append(
                AgentBoardMessage(
                    sequence: sequence, kind: .changes, herdr: index == 0 ? herdr : nil,
                    sessions: index == 0 ? sessions : nil, omitted: index == 0 ? omitted : nil,
                    agents: group.compactMap(\.agent), removed: group.compactMap(\.removed)))
            sequence &+= 1
        }
        return messages
    }

    private enum Piece {
        case agent(HerdrAgent)
        case removed(AgentKey)
    }

    private struct Encoded {
        let text: String
        let agent: HerdrAgent?
        let removed: AgentKey?
    }

    private static func encode(_ agent: HerdrAgent) -> Encoded {
        Encoded(text: json(agent), agent: agent, removed: nil)
    }

    private static func encode(_ piece: Piece) -> Encoded {
        switch piece {
        case .agent(let agent): encode(agent)
        case .removed(let key): Encoded(text: json(key), agent: nil, removed: key)
        }
    }

    /// Groups pieces so that each group's body stays within `maximumBodyBytes`; at least one
    /// (empty) group.
    private static func pack(_ pieces: [Encoded], headerBytes: Int) -> [[Encoded]] {
        // The sequence, the kind and the brackets: well under this.
        let overhead = 96
        var groups: [[Encoded]] = [[]]
        var used = headerBytes + overhead
        for piece in pieces {
            if used + piece.text.utf8.count + 1 > maximumBodyBytes, !groups[groups.count - 1].isEmpty {
                groups.append([])
                used = overhead
            }
            groups[groups.count - 1].append(piece)
            used += piece.text.utf8.count + 1
        }
        return groups
    }

    // MARK: - JSON

    /// The JSON body.
    public var body: [UInt8] {
        var text = "{\"seq\":\(sequence)"
        switch kind {
        case .full(let part, let parts): text += ",\"full\":{\"part\":\(part),\"parts\":\(parts)}"
        case .changes: text += ",\"changes\":true"
        }
        let header = Self.fields(herdr: herdr, sessions: sessions, omitted: omitted)
        if !header.isEmpty { text += "," + header }
        text += ",\"agents\":[" + agents.map(Self.json).joined(separator: ",") + "]"
        if case .changes = kind { text += ",\"removed\":[" + removed.map(Self.json).joined(separator: ",") + "]" }
        return Array((text + "}").utf8)
    }

    private static func fields(herdr: HerdrAvailability?, sessions: [HerdrSessionInfo]?, omitted: Int?) -> String {
        var parts: [String] = []
        if let herdr {
            var object = "{\"state\":\"\(herdr.state.rawValue)\""
            if let detail = herdr.detail { object += ",\"detail\":\(RelayJSON.quoted(detail))" }
            parts.append("\"herdr\":" + object + "}")
        }
        if let sessions {
            let list = sessions.map { session in
                var object =
                    "{\"name\":\(RelayJSON.quoted(session.name)),\"default\":\(session.isDefault),\"state\":\"\(session.state.rawValue)\""
                if let detail = session.detail { object += ",\"detail\":\(RelayJSON.quoted(detail))" }
                return object + "}"
            }
            parts.append("\"sessions\":[" + list.joined(separator: ",") + "]")
        }
        if let omitted { parts.append("\"omitted\":\(omitted)") }
        return parts.joined(separator: ",")
    }

    private static func json(_ key: AgentKey) -> String {
        "{\"session\":\(RelayJSON.quoted(key.session)),\"pane\":\(RelayJSON.quoted(key.pane))}"
    }

    private static func json(_ agent: HerdrAgent) -> String {
        var text = "{\"session\":\(RelayJSON.quoted(agent.session)),\"pane\":\(RelayJSON.quoted(agent.pane))"
        if let name = agent.name { text += ",\"name\":\(RelayJSON.quoted(name))" }
        if let kind = agent.kind { text += ",\"kind\":\(RelayJSON.quoted(kind))" }
        text += ",\"status\":\"\(agent.status.rawValue)\""
        if let title = agent.title { text += ",\"title\":\(RelayJSON.quoted(title))" }
        if let since = agent.since { text += ",\"since\":\(since)" }
        return text + "}"
    }

    /// Parses a body; throws, naming the problem, for anything out of bounds or of the wrong type.
    public init(parsingBody bytes: [UInt8]) throws(AgentBoardMessageError) {
        guard bytes.count <= Self.maximumBodyBytes else {
            throw AgentBoardMessageError("an agents message of \(bytes.count) bytes (at most \(Self.maximumBodyBytes))")
        }
        guard let object = RelayJSON.object(bytes) else {
            throw AgentBoardMessageError("an agents message is not a JSON object")
        }
        guard let sequence = RelayJSON.integer(object["seq"]).flatMap(UInt32.init(exactly:)), sequence > 0 else {
            throw AgentBoardMessageError("an agents message has no seq of 1 to 4294967295")
        }
        self.sequence = sequence
        if let full = object["full"] {
            guard let fields = full as? [String: Any], let part = RelayJSON.integer(fields["part"]),
                let parts = RelayJSON.integer(fields["parts"]), (1...Self.maximumParts).contains(parts),
                (1...parts).contains(part), object["changes"] == nil
            else {
                throw AgentBoardMessageError(
                    "full is not {part, parts} with 1 ≤ part ≤ parts ≤ \(Self.maximumParts), alone")
            }
            kind = .full(part: part, parts: parts)
        } else if RelayJSON.boolean(object["changes"]) == true {
            kind = .changes
        } else {
            throw AgentBoardMessageError("an agents message is neither full nor changes")
        }
        herdr = try object["herdr"].map(Self.availability)
        sessions = try object["sessions"].map(Self.sessions)
        if let value = object["omitted"] {
            guard let count = RelayJSON.integer(value), (0...Int(UInt32.max)).contains(count) else {
                throw AgentBoardMessageError("omitted is not a count")
            }
            omitted = count
        } else {
            omitted = nil
        }
        if case .full(let part, _) = kind, part == 1, herdr == nil || sessions == nil || omitted == nil {
            throw AgentBoardMessageError("the first part of a board lacks herdr, sessions or omitted")
        }
        if case .full(let part, _) = kind, part > 1, herdr != nil || sessions != nil || omitted != nil {
            throw AgentBoardMessageError("a later part of a board names herdr, sessions or omitted")
        }
        guard let list = object["agents"] as? [Any], list.count <= AgentBoard.maximumAgents else {
            throw AgentBoardMessageError("agents is not a list of at most \(AgentBoard.maximumAgents)")
        }
        agents = try list.map(Self.agent)
        if case .changes = kind {
            guard let gone = object["removed"] as? [Any], gone.count <= AgentBoard.maximumAgents else {
                throw AgentBoardMessageError("removed is not a list of at most \(AgentBoard.maximumAgents)")
            }
            removed = try gone.map { value throws(AgentBoardMessageError) in
                guard let fields = value as? [String: Any] else {
                    throw AgentBoardMessageError("a removed entry is not an object")
                }
                return try Self.key(fields)
            }
        } else {
            guard object["removed"] == nil else { throw AgentBoardMessageError("a board part names removed agents") }
            removed = []
        }
    }

    private static func availability(_ value: Any) throws(AgentBoardMessageError) -> HerdrAvailability {
        guard let fields = value as? [String: Any], let word = fields["state"] as? String,
            let state = HerdrAvailability.State(rawValue: word)
        else {
            throw AgentBoardMessageError(
                "herdr is not {state: \(HerdrAvailability.State.allCases.map(\.rawValue).joined(separator: "|"))}")
        }
        return HerdrAvailability(
            state, detail: try text(fields["detail"], "herdr's detail", HerdrSessionInfo.maximumDetailBytes))
    }

    private static func sessions(_ value: Any) throws(AgentBoardMessageError) -> [HerdrSessionInfo] {
        guard let list = value as? [Any], list.count <= HerdrSessionInfo.maximumCount else {
            throw AgentBoardMessageError("sessions is not a list of at most \(HerdrSessionInfo.maximumCount)")
        }
        var sessions: [HerdrSessionInfo] = []
        for entry in list {
            guard let fields = entry as? [String: Any], let name = fields["name"] as? String,
                HerdrSessionInfo.isValidName(name), let isDefault = RelayJSON.boolean(fields["default"]),
                let word = fields["state"] as? String, let state = HerdrSessionInfo.State(rawValue: word),
                !sessions.contains(where: { $0.name == name })
            else {
                throw AgentBoardMessageError(
                    "a session is not {name: herdr's session name rule, default, state}, or is listed twice")
            }
            let detail = try text(fields["detail"], "a session's detail", HerdrSessionInfo.maximumDetailBytes)
            sessions.append(HerdrSessionInfo(name: name, isDefault: isDefault, state: state, detail: detail))
        }
        return sessions
    }

    private static func key(_ fields: [String: Any]) throws(AgentBoardMessageError) -> AgentKey {
        guard let session = fields["session"] as? String, HerdrSessionInfo.isValidName(session),
            let pane = fields["pane"] as? String, HerdrAgent.isValidPane(pane)
        else {
            throw AgentBoardMessageError(
                "an agent's session or pane breaks its rule (a herdr session name; a pane id of 1-\(HerdrAgent.maximumPaneBytes) letters, digits, : . _ -)"
            )
        }
        return AgentKey(session: session, pane: pane)
    }

    private static func agent(_ value: Any) throws(AgentBoardMessageError) -> HerdrAgent {
        guard let fields = value as? [String: Any] else { throw AgentBoardMessageError("an agent is not an object") }
        let key = try key(fields)
        guard let status = fields["status"] as? String else { throw AgentBoardMessageError("an agent has no status") }
        var since: Int64?
        if let value = fields["since"] {
            guard let seconds = RelayJSON.integer(value), seconds >= 0 else {
                throw AgentBoardMessageError("an agent's since is not Unix seconds")
            }
            since = Int64(seconds)
        }
        return HerdrAgent(
            key: key, name: try text(fields["name"], "an agent's name", HerdrAgent.maximumNameBytes),
            kind: try text(fields["kind"], "an agent's kind", HerdrAgent.maximumKindBytes),
            status: HerdrAgentStatus(herdr: status),
            title: try text(fields["title"], "an agent's title", HerdrAgent.maximumTitleBytes), since: since)
    }

    private static func text(_ value: Any?, _ what: String, _ limit: Int) throws(AgentBoardMessageError) -> String? {
        guard let value else { return nil }
        guard let text = value as? String, text.utf8.count <= limit else {
            throw AgentBoardMessageError("\(what) is not a text of at most \(limit) bytes")
        }
        return text
    }
}

/// An agents message that does not parse or does not follow the last one: the peer is broken or
/// hostile, and the channel ends. `description` names the problem.
public struct AgentBoardMessageError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
