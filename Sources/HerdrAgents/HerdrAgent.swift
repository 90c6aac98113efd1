/// Where an agent lives: its herdr session and the pane that hosts it (`w1:p1`). Unique on one
/// computer; what a device names to open an agent's pane.
public struct AgentKey: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The herdr session's name (`default` for the default session).
    public var session: String
    /// herdr's public pane id.
    public var pane: String

    public init(session: String, pane: String) {
        self.session = session
        self.pane = pane
    }

    public var description: String { session == HerdrSessionInfo.defaultName ? pane : "\(session)/\(pane)" }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.session, lhs.pane.count, lhs.pane) < (rhs.session, rhs.pane.count, rhs.pane)
    }
}

/// One agent as a board shows it: where it is, what it is, what it is doing and since when.
/// Every field is bounded (`maximum…Bytes`) and printable.
public struct HerdrAgent: Sendable, Hashable {
    public static let maximumPaneBytes = 32
    public static let maximumNameBytes = 64
    public static let maximumKindBytes = 32
    public static let maximumTitleBytes = 128

    public var key: AgentKey
    /// The agent's name in herdr, when it has one (a target, if unique).
    public var name: String?
    /// What kind of agent it is (`claude`, `codex`), when herdr knows.
    public var kind: String?
    public var status: HerdrAgentStatus
    /// The pane's title, when there is one.
    public var title: String?
    /// When the computer saw this status begin (Unix seconds); nil when it cannot say.
    public var since: Int64?

    public init(
        key: AgentKey, name: String? = nil, kind: String? = nil, status: HerdrAgentStatus, title: String? = nil,
        since: Int64? = nil
    ) {
        self.key = key
        self.name = BoundedText.optional(name, maxBytes: Self.maximumNameBytes)
        self.kind = BoundedText.optional(kind, maxBytes: Self.maximumKindBytes)
        self.status = status
        self.title = BoundedText.optional(title, maxBytes: Self.maximumTitleBytes)
        self.since = since
    }

    public var session: String { key.session }
    public var pane: String { key.pane }

    /// The name a person reads: the agent's name, else its kind and pane, else its pane.
    public var displayName: String { name ?? kind.map { "\($0) (\(key.pane))" } ?? key.pane }

    /// True for a pane id herdr could have made and a shell needs no quoting for: 1–32 bytes of
    /// letters, digits, `:`, `.`, `_` and `-`.
    public static func isValidPane(_ pane: String) -> Bool {
        let bytes = pane.utf8
        guard (1...maximumPaneBytes).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: ":"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }
}
