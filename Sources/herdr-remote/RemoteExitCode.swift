import CLISupport
import HerdrKit

/// herdr-remote's own exit codes, listed in `--help`, so scripts can tell failures apart.
enum RemoteExitCode {
    static let hostKeyRefused = ExitCode(10, meaning: "The host key was refused: it changed, or it was not trusted.")
    static let authenticationFailed = ExitCode(11, meaning: "Authentication failed: no key or password was accepted.")
    static let unreachable = ExitCode(12, meaning: "The host was unreachable: unknown name, refused, or timed out.")
    static let connectionLost = ExitCode(13, meaning: "The connection dropped and reattaching gave up.")
    static let remoteCommandFailed = ExitCode(14, meaning: "The remote command (herdr) failed or exited at once.")
    static let pairingGone = ExitCode(
        15, meaning: "Relay road: the pairing is gone (removed on the computer, or expired); pair again.")
    static let relayRefused = ExitCode(
        16, meaning: "Relay road: the relay refused (daily quota used up, or another connection took over).")

    // The agents family (docs/agents.md).
    static let someUnanswered = ExitCode(
        17, meaning: "agents: some computers did not answer (each one's row and note say why); the others are listed.")
    static let agentNotFound = ExitCode(
        18, meaning: "--agent: no agent on the computer matches the target, or several do (the candidates are listed).")
    static let agentsUnavailable = ExitCode(
        19,
        meaning:
            "The computer cannot list its agents: herdr is missing or failing there, or its herdr-host is older than the agents family."
    )

    static let connectCodes: [ExitCode] = [
        .success, .failure, hostKeyRefused, authenticationFailed, unreachable, connectionLost, remoteCommandFailed,
        pairingGone, relayRefused, agentNotFound, agentsUnavailable, .usage, .ioError, .config, .hangup, .terminated,
    ]

    static let agentsCodes: [ExitCode] = [.success, .failure, someUnanswered, .usage, .interrupted, .terminated]

    static let sessionsCodes: [ExitCode] = [
        .success, .failure, hostKeyRefused, authenticationFailed, unreachable, pairingGone, relayRefused,
        agentsUnavailable, .usage, .interrupted, .terminated,
    ]

    static let watchCodes: [ExitCode] = [.success, .failure, .usage, .ioError, .hangup, .interrupted, .terminated]

    /// The code a computer's problem ends `sessions` with.
    static func code(for problem: ComputerProblem) -> ExitCode {
        switch problem.kind {
        case .unreachable, .timedOut: unreachable
        case .hostKeyChanged, .notPinned: hostKeyRefused
        case .authentication: authenticationFailed
        case .pairingGone: pairingGone
        case .relayRefused: relayRefused
        case .olderHerdrHost, .unsupported: agentsUnavailable
        case .protocolViolation, .failed: .failure
        }
    }

    // `pair`: one code per way pairing can fail (PairingError), so scripts can tell them apart.
    static let pairingCodeInvalid = ExitCode(
        20, meaning: "The pairing code is not valid, or the picture holds no single herdr code.")
    static let pairingCodeExpired = ExitCode(
        21, meaning: "The pairing code or its approval window expired; show a new code.")
    static let pairingDenied = ExitCode(22, meaning: "Pairing was denied on the computer.")
    static let pairingCodeUsed = ExitCode(23, meaning: "The pairing code was already used by another device.")
    static let notOnTailnet = ExitCode(24, meaning: "The code's names led outside the tailnet; nothing was sent.")
    static let pairingKeyRejected = ExitCode(
        25, meaning: "The computer refused the code's one-time key (used, expired or removed).")
    static let pinConflict = ExitCode(
        26, meaning: "A different host key is pinned for the computer; pairing never replaces a pin.")
    static let pairingFailed = ExitCode(27, meaning: "The computer's pairing helper failed or gave no valid answer.")

    /// `pair` attaches afterwards, so connect's codes can end it too.
    static let pairCodes: [ExitCode] = [
        .success, .failure, hostKeyRefused, authenticationFailed, unreachable, connectionLost, remoteCommandFailed,
        pairingGone, relayRefused, pairingCodeInvalid, pairingCodeExpired, pairingDenied, pairingCodeUsed, notOnTailnet,
        pairingKeyRejected,
        pinConflict, pairingFailed, .usage, .noInput, .ioError, .config, .hangup, .interrupted, .terminated,
    ]

    /// Every code of the program, for the top-level help.
    static let allCodes: [ExitCode] = {
        var codes = pairCodes
        for code in [someUnanswered, agentNotFound, agentsUnavailable] {
            codes.insert(code, at: codes.firstIndex { $0.rawValue > code.rawValue } ?? codes.endIndex)
        }
        return codes
    }()
}

/// A failure that ends the program with a specific code.
struct RemoteError: Error, ExitCodeConvertible, CustomStringConvertible {
    let exitCode: ExitCode
    let description: String

    init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.description = message
    }
}
