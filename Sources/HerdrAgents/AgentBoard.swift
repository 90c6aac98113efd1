/// One computer's agents as a device sees them: whether herdr could be read, its sessions, and
/// at most `maximumAgents` agents (the rest counted in `omitted`).
public struct AgentBoard: Sendable, Hashable {
    /// At most this many agents per computer; past it the computer keeps the ones that need a
    /// person most (by status), and counts the rest.
    public static let maximumAgents = 256

    public var herdr: HerdrAvailability
    public var sessions: [HerdrSessionInfo]
    public var agents: [AgentKey: HerdrAgent]
    /// Agents the computer has and did not list (past `maximumAgents`).
    public var omitted: Int

    public init(
        herdr: HerdrAvailability = .ready, sessions: [HerdrSessionInfo] = [], agents: [HerdrAgent] = [],
        omitted: Int = 0
    ) {
        self.herdr = herdr
        self.sessions = sessions
        self.agents = Dictionary(agents.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
        self.omitted = omitted
    }

    /// The agents in the order a person wants them: by status (`blocked` first), the longest
    /// waiting first within a status, then by session and pane.
    public var sorted: [HerdrAgent] { agents.values.sorted(by: Self.listOrder) }

    public static func listOrder(_ lhs: HerdrAgent, _ rhs: HerdrAgent) -> Bool {
        if lhs.status != rhs.status { return lhs.status < rhs.status }
        let (left, right) = (lhs.since ?? .max, rhs.since ?? .max)
        if left != right { return left < right }
        return lhs.key < rhs.key
    }

    /// Keeps at most `limit` agents, those a person needs first (by status, then the longest
    /// waiting), and counts the others in `omitted`.
    public mutating func bound(to limit: Int = maximumAgents) {
        guard agents.count > limit else { return }
        let kept = sorted.prefix(limit)
        omitted += agents.count - kept.count
        agents = Dictionary(kept.map { ($0.key, $0) }, uniquingKeysWith: { _, last in last })
    }

    /// Agents whose status is new in this board against `earlier`: each with the status it had
    /// (nil: it was not there). What `watch` tells a person about.
    public func changes(since earlier: AgentBoard) -> [(agent: HerdrAgent, was: HerdrAgentStatus?)] {
        sorted.compactMap { agent in
            let was = earlier.agents[agent.key]?.status
            return was == agent.status ? nil : (agent, was)
        }
    }

    /// The agents a person's `target` names on this board: a pane id (`w1:p2`, or
    /// `SESSION/w1:p2`), or an agent's name; in `session` only when given.
    public func agents(matching target: String, session: String? = nil) -> [HerdrAgent] {
        var session = session
        var target = target
        if let slash = target.lastIndex(of: "/") {
            session = String(target[..<slash])
            target = String(target[target.index(after: slash)...])
        }
        let candidates = agents.values.filter { session == nil || $0.session == session }
        let byPane = candidates.filter { $0.pane == target }
        if !byPane.isEmpty { return byPane.sorted(by: Self.listOrder) }
        return candidates.filter { $0.name == target }.sorted(by: Self.listOrder)
    }
}
