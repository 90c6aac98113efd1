import HerdrCrypto

/// A failure in the Noise layer. `kind` is stable and meant for code; the description carries
/// diagnostics for people and may change. Two errors are equal when their kinds are.
public struct NoiseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// A key of the wrong size, or a remote public key the DH function refuses (low order).
        case invalidKey
        /// A handshake pattern that breaks the rules of Noise section 7.3.
        case invalidPattern
        /// A key the pattern needs (s, rs, or a pre-message key) was not given.
        case missingKey
        /// `writeMessage` when a read is due, or the reverse.
        case wrongTurn
        /// A handshake call after the last handshake message.
        case handshakeFinished
        /// Transport keys asked for before the handshake has finished.
        case handshakeNotFinished
        /// A message or ciphertext over the 65535-byte Noise limit (Noise section 3).
        case messageTooLong
        /// A handshake message shorter than its tokens need.
        case messageTooShort
        /// AEAD authentication failed: tampered, reordered, replayed, truncated, or wrong keys.
        case decryptionFailed
        /// The nonce reached 2^64 − 1, which is reserved (Noise section 5.1): the key is used up.
        case nonceExhausted
        /// The crypto library failed in a way no input explains.
        case cryptoLibrary
    }

    public let kind: Kind
    private let diagnostics: String

    public init(_ kind: Kind, _ diagnostics: String) {
        self.kind = kind
        self.diagnostics = diagnostics
    }

    init(_ error: CryptoError, _ context: String) {
        switch error.kind {
        case .authenticationFailed: self.init(.decryptionFailed, "\(context): \(error.message)")
        case .invalidKey: self.init(.invalidKey, "\(context): \(error.message)")
        case .invalidInput, .library: self.init(.cryptoLibrary, "\(context): \(error.message)")
        }
    }

    public var description: String { "\(kind.rawValue): \(diagnostics)" }

    public static func == (lhs: NoiseError, rhs: NoiseError) -> Bool { lhs.kind == rhs.kind }
}

/// Limits fixed by the Noise specification (revision 34).
public enum NoiseLimits {
    /// Section 3: every Noise message, handshake or transport, is at most 65535 bytes.
    public static let maximumMessageLength = 65535
    /// Section 5.1: the AEAD tag every encryption under a key adds (16 bytes for both ciphers).
    public static let tagLength = 16
    /// The largest plaintext one transport message can carry: 65535 − 16.
    public static let maximumPlaintextLength = maximumMessageLength - tagLength
    /// Section 5.1: nonce 2^64 − 1 is reserved; a CipherState whose nonce reaches it refuses to
    /// encrypt or decrypt.
    public static let reservedNonce = UInt64.max
    /// Section 4: DHLEN for Curve25519, the length of a public key and of a DH output.
    public static let dhLength = 32
    /// Section 4.2: every cipher key is 32 bytes.
    public static let keyLength = 32
}
