/// What herdr says an agent is doing (specs/herdr-api.md, `agent_status`), in the order a person
/// wants them listed: the ones waiting for a person first, then the finished ones nobody looked
/// at, then the busy, the ready and the unclassified.
public enum HerdrAgentStatus: String, Sendable, Hashable, CaseIterable, Comparable {
    /// herdr recognised an approval or question prompt: the agent waits for a person.
    case blocked
    /// Idle after background work nobody has looked at yet.
    case done
    case working
    /// Ready, and seen.
    case idle
    /// An agent is there but herdr cannot classify it.
    case unknown

    /// herdr's word for it; a word of a later herdr is `unknown`.
    public init(herdr text: String) { self = Self(rawValue: text) ?? .unknown }

    /// Whether a change to this status is worth telling a person (`watch`'s notification).
    public var needsAttention: Bool { self == .blocked || self == .done }

    private var rank: Int {
        switch self {
        case .blocked: 0
        case .done: 1
        case .working: 2
        case .idle: 3
        case .unknown: 4
        }
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rank < rhs.rank }
}
