import HerdrAgents

/// Why a request to herdr's socket (or a subscription on it) got no usable answer, in words, and
/// the session state that follows from it on the board.
public struct HerdrRequestFailure: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// Nothing listens on the socket (it does not exist, or the connection was refused).
        case notRunning
        /// The server accepted the connection (or its queue was full) and did not answer in time.
        case timedOut
        /// The server answered with something that is not herdr's protocol, or closed the connection.
        case malformed
        /// herdr answered with an error (`code`, `message`).
        case herdrError(code: String)
        /// The socket could not be used at all (a path too long, no descriptors left).
        case system
    }

    public let kind: Kind
    /// What happened, for the board's detail and the log (bounded, printable).
    public let detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = BoundedText.printable(detail, maxBytes: HerdrSessionInfo.maximumDetailBytes)
    }

    public var description: String { detail }

    /// What the board says of a session whose server failed so.
    public var sessionState: HerdrSessionInfo.State {
        switch kind {
        case .notRunning: .notRunning
        case .timedOut: .unresponsive
        case .malformed, .herdrError, .system: .failing
        }
    }

    /// herdr does not know the method: an older herdr.
    public var isUnknownMethod: Bool {
        if case .herdrError(let code) = kind { return code == "unknown_method" || code == "method_not_found" }
        return false
    }
}
