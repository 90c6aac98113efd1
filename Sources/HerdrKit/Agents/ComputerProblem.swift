/// Why a computer's agents could not be read: what `agents` shows in the computer's row and its
/// JSON, and whether `watch` tries again.
public struct ComputerProblem: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// No road reached it (no route, refused, the computer not at its relay), or the link dropped.
        case unreachable
        /// It did not answer within the time limit.
        case timedOut = "timed-out"
        /// It answered but sends no agents board: its herdr-host is older than the agents family.
        case olderHerdrHost = "older-herdr-host"
        /// SSH: its host key is not the pinned one.
        case hostKeyChanged = "host-key-changed"
        /// SSH: no host key is pinned for it yet (`connect` once asks to trust it).
        case notPinned = "not-pinned"
        /// SSH: no key or password was accepted.
        case authentication
        /// Relay road: the pairing is gone; pair again.
        case pairingGone = "pairing-gone"
        /// Relay road: the relay refused for good (its quota, or another connection of this
        /// device took the room).
        case relayRefused = "relay-refused"
        /// Agents cannot be read this way (over SSH from a Windows host).
        case unsupported
        /// It answered with something that breaks the protocol.
        case protocolViolation = "protocol"
        /// Anything else (a local file unreadable, herdr's output unreadable).
        case failed
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// Whether trying again later cannot help without the person doing something.
    public var isPermanent: Bool {
        switch kind {
        case .unreachable, .timedOut, .protocolViolation, .failed: false
        case .olderHerdrHost, .hostKeyChanged, .notPinned, .authentication, .pairingGone, .relayRefused, .unsupported:
            true
        }
    }
}
