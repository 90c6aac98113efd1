import Foundation

/// Why `Pairing.enroll` did not pair, each case with text ready for a person (`errorDescription`).
///
/// The cases are the transport record's (specs/000, "Pairing API"). Local trouble that fits none of
/// them (an unreadable pin file, a device key that cannot be loaded) is `.failed(status: nil, …)`.
public enum PairingError: Error, Equatable, Sendable, LocalizedError, CustomStringConvertible {
    /// The code's expiry passed before enroll started (a confirmation screen sat open).
    case linkExpired
    /// A different key is pinned for this name and port; pairing never replaces a pin.
    case conflictingPin(hostname: String, port: Int)
    /// The computer presented a host key that is not one of the code's fingerprints. Nothing was
    /// authenticated.
    case hostKeyMismatch(hostname: String, fingerprint: String)
    /// No name reached SSH; the last reason.
    case unreachable(String)
    /// A name resolved outside the tailnet; that address got no SSH byte.
    case notOnTailnet(hostname: String, address: String)
    /// The computer refused the one-time key: used, expired or removed.
    case pairingKeyRejected
    /// Denied on the computer (`DENIED`, or exit 3 with no token).
    case denied(output: String)
    /// The code or the approval window passed on the computer (`EXPIRED`, or exit 4).
    case expired(output: String)
    /// Another enroll already claimed the code (`USED`, or exit 5).
    case used(output: String)
    /// Anything else: `INVALID`, an unknown answer, `OK` without exit 0, a connection lost while
    /// waiting, the time limit, a local storage problem.
    case failed(status: Int?, output: String)
    case cancelled

    /// One or two sentences for a person.
    public var errorDescription: String? { description }

    public var description: String {
        switch self {
        case .linkExpired:
            return "This pairing code has expired. Show a new one on the computer and scan it again."
        case .conflictingPin(let hostname, let port):
            return "A different host key is already pinned for \(Self.endpoint(hostname, port)), and pairing never "
                + "replaces a pin. Nothing was sent. If you know why the computer's key changed, forget the old key "
                + "and pair again."
        case .hostKeyMismatch(let hostname, let fingerprint):
            return
                "\(hostname) presented the host key \(fingerprint), which is not one of the keys in the pairing code. "
                + "Nothing was sent: something else may be answering for the computer."
        case .unreachable(let reason):
            return "Could not reach the computer: \(reason)"
        case .notOnTailnet(let hostname, let address):
            return "\(hostname) is \(address), which is not on the tailnet (100.64.0.0/10, fd7a:115c:a1e0::/48), so "
                + "nothing was sent to it. Connect this device to the computer's tailnet and try again."
        case .pairingKeyRejected:
            return "The computer refused the pairing code's one-time key: it was already used, has expired, or was "
                + "removed. Show a new code on the computer."
        case .denied:
            return "Pairing was denied on the computer."
        case .expired:
            return "The pairing code or its approval window expired on the computer. Show a new code and approve it "
                + "within two minutes."
        case .used:
            return "This pairing code was already used by another device. Show a new code on the computer."
        case .failed(let status, let output):
            let said = output.isEmpty ? "" : "\n\(output)"
            guard let status else { return "Pairing failed.\(said)" }
            return "Pairing failed: the computer's pairing helper exited with status \(status).\(said)"
        case .cancelled:
            return "Pairing was cancelled."
        }
    }

    private static func endpoint(_ hostname: String, _ port: Int) -> String {
        hostname.contains(":") ? "[\(hostname)]:\(port)" : "\(hostname):\(port)"
    }
}
