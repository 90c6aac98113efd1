import Noise

/// Why a SecureChannel failed. `kind` is stable; the description carries diagnostics. Two errors
/// are equal when their kinds are.
public struct SecureChannelError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// A handshake message was refused (wrong key or prologue, tampered, out of turn, malformed).
        case handshakeFailed
        /// A transport frame failed AEAD authentication: tampered, reordered, replayed, truncated,
        /// or from another session. Fatal by design (specs/002, "AEAD failure is fatal").
        case decryptionFailed
        /// A frame over the 65535-byte Noise limit.
        case frameTooLong
        /// An authenticated chunk with no flag byte or a flag other than 0 or 1.
        case invalidChunk
        /// A chunked message grew past the channel's limit before its last chunk.
        case messageTooLarge
        /// The sending nonce is used up (2^64 − 1 messages); a new handshake is needed.
        case nonceExhausted
        /// `send` before the handshake has finished. The only kind that does not fail the channel.
        case notEstablished
        /// Anything else the Noise layer refused.
        case noise
    }

    public let kind: Kind
    /// The Noise error underneath, when there is one.
    public let underlying: NoiseError?
    private let diagnostics: String

    public init(_ kind: Kind, _ diagnostics: String, underlying: NoiseError? = nil) {
        self.kind = kind
        self.diagnostics = diagnostics
        self.underlying = underlying
    }

    public var description: String {
        "\(kind.rawValue): \(diagnostics)" + (underlying.map { " (\($0))" } ?? "")
    }

    public static func == (lhs: SecureChannelError, rhs: SecureChannelError) -> Bool { lhs.kind == rhs.kind }
}
