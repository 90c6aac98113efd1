import HerdrBase

/// One of herdr's sessions on a computer (`herdr session list --json`), and whether the computer
/// could read its agents.
public struct HerdrSessionInfo: Sendable, Hashable {
    /// herdr's name for the default session, always listed first.
    public static let defaultName = "default"
    /// At most this many sessions are listed per computer.
    public static let maximumCount = 64
    public static let maximumDetailBytes = 256

    /// What the computer knows of a session's server.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Its server answers; its agents are listed.
        case ready
        /// No server answers on its socket.
        case notRunning = "not-running"
        /// Its server speaks an older protocol than the computer needs.
        case unsupported
        /// Its server accepted the connection and did not answer in time.
        case unresponsive
        /// Its server answered with something that is not herdr's protocol, or an error.
        case failing
    }

    public var name: String
    public var isDefault: Bool
    public var state: State
    /// Why, in words, when the state is not `ready` (bounded, printable).
    public var detail: String?

    public init(name: String, isDefault: Bool, state: State, detail: String? = nil) {
        self.name = name
        self.isDefault = isDefault
        self.state = state
        self.detail = BoundedText.optional(detail, maxBytes: Self.maximumDetailBytes)
    }

    public var running: Bool { state != .notRunning }

    /// True for a name a board may carry: herdr's session-name rule.
    public static func isValidName(_ name: String) -> Bool { HerdrSessionName.isValid(name) }
}

/// Whether herdr can be read on a computer at all; each session then has its own state.
public struct HerdrAvailability: Sendable, Hashable {
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// herdr is there; its sessions are listed.
        case ready
        /// No herdr on the computer (no `herdr` program, no socket directory).
        case notInstalled = "not-installed"
        /// The computer could not list herdr's sessions.
        case failing
    }

    public var state: State
    /// Why, in words, when not `ready` (bounded, printable).
    public var detail: String?

    public init(_ state: State, detail: String? = nil) {
        self.state = state
        self.detail = BoundedText.optional(detail, maxBytes: HerdrSessionInfo.maximumDetailBytes)
    }

    public static let ready = HerdrAvailability(.ready)
}
