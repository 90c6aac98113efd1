/// App Attest's authenticator data (WebAuthn's layout): the RP ID hash, flags, the sign counter
/// and, in an attestation, the attested credential's AAGUID and id.
public struct AuthenticatorData: Sendable, Equatable {
    /// The fixed part: RP ID hash (32), flags (1), counter (4).
    public static let fixedSize = 37
    /// Authenticator data longer than this is refused (Apple's attestation carries about 160 bytes).
    public static let maximumSize = 4096

    /// SHA-256 of the app id (`TEAMID.bundle.id`).
    public let rpIDHash: [UInt8]
    public let flags: UInt8
    /// The key's signature counter, big-endian in the data.
    public let signCount: UInt32
    /// The bytes after the fixed part (the attested credential data in an attestation).
    public let rest: [UInt8]

    /// Splits authenticator data; throws when it is shorter than the fixed part or too long.
    public init(_ bytes: [UInt8]) throws(AppAttestFailure) {
        guard bytes.count >= Self.fixedSize else {
            throw AppAttestFailure("authenticator data is \(bytes.count) bytes, shorter than \(Self.fixedSize)")
        }
        guard bytes.count <= Self.maximumSize else {
            throw AppAttestFailure("authenticator data is \(bytes.count) bytes, more than \(Self.maximumSize)")
        }
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        signCount = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        rest = Array(bytes[Self.fixedSize...])
    }

    /// The attested credential data an attestation carries: the AAGUID (16 bytes) and the
    /// credential id (a 16-bit length, then that many bytes); the public key after it is not read,
    /// as the credential certificate carries the key.
    public func attestedCredential() throws(AppAttestFailure) -> (aaguid: [UInt8], credentialID: [UInt8]) {
        guard rest.count >= 18 else {
            throw AppAttestFailure(
                "authenticator data holds no attested credential (\(rest.count) bytes after the counter)")
        }
        let length = Int(rest[16]) << 8 | Int(rest[17])
        guard rest.count >= 18 + length else {
            throw AppAttestFailure("the credential id claims \(length) bytes, \(rest.count - 18) are left")
        }
        return (Array(rest[0..<16]), Array(rest[18..<(18 + length)]))
    }
}
