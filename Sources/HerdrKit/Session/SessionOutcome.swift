import SSHClient

/// The end-state rules of a session that reached `.connected`, as a pure function.
enum SessionOutcome: Equatable {
    case closed
    case failed(SessionFailureKind, String)
    /// The connection broke underneath a running command: try to reattach.
    case reconnect(reason: String)

    /// Decides how an established session ended.
    /// - `connectedFor`: time between `.connected` and the end.
    /// - `tail`: the last readable output lines, appended to failure reasons.
    static func decide(
        _ termination: SSHTermination, connectedFor: Duration, quickExitWindow: Duration, tail: [String],
        mayReconnect: Bool
    ) -> SessionOutcome {
        switch termination {
        case .cancelled:
            return .closed
        case .exited(let status?, nil) where status == 0:
            if connectedFor > quickExitWindow { return .closed }
            return .failed(
                .remoteCommand, withTail("The remote command exited with status 0 right after it started", tail))
        case .exited(let status?, nil) where status == 127:
            return .failed(.remoteCommand, withTail("Remote command not found (exit status 127)", tail))
        case .exited(let status?, nil):
            return .failed(.remoteCommand, withTail("The remote command exited with status \(status)", tail))
        case .exited(_, let signal?):
            return .failed(.remoteCommand, withTail("The remote command was killed by signal \(signal)", tail))
        case .exited(nil, nil):
            return .failed(.remoteCommand, withTail("The remote command ended without an exit status", tail))
        case .failed(let failure) where failure.kind == .connectionLost && mayReconnect:
            return .reconnect(reason: failure.message)
        case .failed(let failure):
            return .failed(kind(of: failure), withTail(failure.message, tail))
        case .probed, .hostKeyRejected:
            // Cannot happen after the session started; treat as a lost connection rather than trap.
            return .failed(.connectionLost, "The connection ended unexpectedly")
        }
    }

    /// Whether a failed (re)connection attempt is worth repeating: the host may come back.
    static func isTransient(_ failure: SSHFailure) -> Bool {
        switch failure.kind {
        case .unreachable, .connectionLost, .timeout, .handshake: true
        case .peerRefused, .authentication, .channel, .internalError: false
        }
    }

    static func kind(of failure: SSHFailure) -> SessionFailureKind {
        switch failure.kind {
        case .unreachable, .peerRefused, .timeout: .unreachable
        case .handshake: .handshake
        case .authentication: .authentication
        case .channel: .remoteCommand
        case .connectionLost: .connectionLost
        case .internalError: .local
        }
    }

    /// The reason, then up to three readable lines of the last output.
    static func withTail(_ reason: String, _ tail: [String]) -> String {
        ([reason] + tail.suffix(3)).joined(separator: "\n")
    }
}
