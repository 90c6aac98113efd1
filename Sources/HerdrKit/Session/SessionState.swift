/// Where a terminal session stands. `failed` carries text ready for a person: the reason, then
/// up to three readable lines of the last output.
public enum SessionState: Equatable, Sendable {
    case idle
    case connecting
    case connected
    /// The connection dropped after it was up; the session is trying to reattach.
    /// `attempt` counts from 1; `reason` says what broke.
    case reconnecting(attempt: Int, reason: String)
    case failed(String)
    case closed

    /// True once the session has ended and will do nothing more on its own.
    public var isFinal: Bool {
        switch self {
        case .failed, .closed: true
        default: false
        }
    }
}

/// Why a session failed, for programs that map failures to exit codes.
public enum SessionFailureKind: String, Sendable, Equatable {
    /// The herdr session name breaks herdr's rule; nothing was sent.
    case invalidSessionName
    /// The host key differs from the pinned one; no authentication was attempted.
    case hostKeyChanged
    /// The person declined the host key on first use.
    case hostKeyNotTrusted
    case authentication
    /// No route, refused, timed out, unresolvable.
    case unreachable
    /// The key exchange failed (no common algorithm, protocol error).
    case handshake
    /// The remote command ended badly (non-zero status, signal, or an instant exit 0).
    case remoteCommand
    /// The connection broke and reattaching gave up (or was not allowed).
    case connectionLost
    /// A local problem: the device key or pin store could not be read or written.
    case local
    /// Relay road: the pairing is gone (the room was deleted or expired, or the relay no longer
    /// takes this device's key); pair again.
    case pairingGone
    /// Relay road: the relay refused for good (its daily quota is used up, or another connection
    /// of this device took the room).
    case relayRefused
    /// `--agent`: no agent on the computer's board matches the target, or several do.
    case agentNotFound
    /// `--agent`: the computer cannot list its agents (herdr missing or failing there, or a
    /// herdr-host older than the agents family).
    case agentsUnavailable
}
