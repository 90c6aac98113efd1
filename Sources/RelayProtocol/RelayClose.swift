/// Why the relay closes a WebSocket: the code and reason text of interop-facts §5, exactly as the
/// iTerm2 companion relay sends them. Clients branch on these strings.
public struct RelayClose: Hashable, Sendable, CustomStringConvertible {
    public let code: UInt16
    public let reason: String

    public init(code: UInt16, reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "\(code) \(reason)" }

    // 1009
    public static let frameTooLarge = RelayClose(code: 1009, reason: "frame too large")
    // 1008
    public static let frameRateExceeded = RelayClose(code: 1008, reason: "frame rate exceeded")
    public static let dailyQuotaExceeded = RelayClose(code: 1008, reason: "daily quota exceeded")
    public static let tooManyPending = RelayClose(code: 1008, reason: "too many pending")
    public static let admissionTimeout = RelayClose(code: 1008, reason: "admission timeout")
    /// An admission refusal: the `error` of the `{"ok":false}` Result, closed with 1008.
    public static func refused(_ error: AdmissionError) -> RelayClose { RelayClose(code: 1008, reason: error.rawValue) }
    // 1000
    public static let displaced = RelayClose(code: 1000, reason: "displaced")
    public static let roomDeleted = RelayClose(code: 1000, reason: "room deleted")
    public static let pairingCycleCap = RelayClose(code: 1000, reason: "pairing cycle cap")
    public static let roomExpired = RelayClose(code: 1000, reason: "room expired")
    // 1001
    public static let peerGone = RelayClose(code: 1001, reason: "peer gone")
    public static let serverShuttingDown = RelayClose(code: 1001, reason: "server shutting down")
    // 1011
    public static let badState = RelayClose(code: 1011, reason: "bad state")
    public static let internalError = RelayClose(code: 1011, reason: "internal error")
    /// Ours: another relay node holds this room; the client comes back once the balancer's routing
    /// has settled (HTTP requests get 421).
    public static let reshard = RelayClose(code: 4421, reason: "reshard")
    /// Ours: the relay's shared store (Redis) cannot be reached; clients retry with backoff.
    public static let storeUnavailable = RelayClose(code: 1011, reason: "store unavailable")
}

/// The `error` of a refused admission (`{"ok":false,"error":X}`), which is also the close reason.
public enum AdmissionError: String, Hashable, Sendable, CaseIterable {
    case badHello = "bad hello"
    case rateLimited = "rate limited"
    case badProof = "bad proof"
    case signatureRequired = "signature required"
    case badSignature = "bad signature"
    case ticketRequired = "ticket required"
    case badTicket = "bad ticket"
    case macOffline = "mac offline"
    case slotOccupied = "slot occupied"
}
