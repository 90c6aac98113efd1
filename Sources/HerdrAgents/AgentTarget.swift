/// What a person types to name one agent (`connect --agent TARGET`): a pane id (`w1:p2`), a pane
/// id in a named session (`work/w1:p2`), or an agent's name (`claude-2`, or `work/claude-2`).
/// Resolved against a computer's board, the same way on every road, so the device only ever names
/// an agent the computer listed.
public struct AgentTarget: Sendable, Hashable, CustomStringConvertible {
    /// The herdr session the person named (`SESSION/…`), if any.
    public let session: String?
    /// The pane id or agent name after it.
    public let name: String

    /// The target as typed; nil when it cannot name an agent at all (empty, a session that breaks
    /// herdr's rule, a name longer than an agent's or with control characters).
    public init?(_ text: String) {
        var session: String?
        var name = text
        if let slash = text.lastIndex(of: "/") {
            session = String(text[..<slash])
            name = String(text[text.index(after: slash)...])
            guard let session, HerdrSessionInfo.isValidName(session) else { return nil }
        }
        guard !name.isEmpty, name.utf8.count <= HerdrAgent.maximumNameBytes,
            BoundedText.printable(name, maxBytes: HerdrAgent.maximumNameBytes) == name
        else { return nil }
        self.session = session
        self.name = name
    }

    public var description: String { session.map { "\($0)/\(name)" } ?? name }

    /// Whether it is written as a pane id in a named session (`SESSION/w1:p2`): enough to attach
    /// with herdr checking the pane itself, without reading the board first.
    public var isExplicitPane: Bool { session != nil && HerdrAgent.isValidPane(name) }

    /// The one agent this target names on `board`. A pane id is looked for in `session` (the
    /// one typed, else `preferredSession` when it has that pane, else every session); a name must
    /// be unique among the agents of the sessions searched. Absent or ambiguous: an error listing
    /// the candidates.
    public func resolve(on board: AgentBoard, preferredSession: String? = nil) -> Result<
        HerdrAgent, AgentTargetError
    > {
        var matches = board.agents(matching: name, session: session)
        if matches.count > 1, session == nil, let preferredSession, matches.allSatisfy({ $0.pane == name }) {
            let preferred = matches.filter { $0.session == preferredSession }
            if preferred.count == 1 { matches = preferred }
        }
        switch matches.count {
        case 1: return .success(matches[0])
        case 0: return .failure(AgentTargetError(target: self, kind: .absent, candidates: board.sorted))
        default: return .failure(AgentTargetError(target: self, kind: .ambiguous, candidates: matches))
        }
    }
}

/// No single agent for a target: none matches (`candidates` then lists the board's agents), or
/// several do (`candidates` lists them). `description` says which, with the candidates.
public struct AgentTargetError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case absent
        case ambiguous
    }

    /// At most this many candidates are listed in the message.
    public static let listedCandidates = 20

    public let target: AgentTarget
    public let kind: Kind
    public let candidates: [HerdrAgent]

    public var description: String {
        let listed = candidates.prefix(Self.listedCandidates).map { agent in
            "\(agent.key.session)/\(agent.key.pane) (\(agent.name ?? agent.kind ?? "unnamed"), \(agent.status.rawValue))"
        }
        let more = candidates.count > listed.count ? " and \(candidates.count - listed.count) more" : ""
        switch kind {
        case .absent:
            guard !listed.isEmpty else { return "no agent \(target); the computer lists no agents" }
            return "no agent \(target); the computer's agents: \(listed.joined(separator: ", "))\(more)"
        case .ambiguous:
            return
                "\(target) names \(candidates.count) agents: \(listed.joined(separator: ", "))\(more); name one as SESSION/PANE"
        }
    }
}
