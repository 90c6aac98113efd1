/// A key App Attest vouched for: its id and its public key, kept with the pairing ticket and the
/// registration token so `/register` can check the phone's assertion by the same key.
public struct AttestedKey: Sendable, Hashable {
    /// SHA-256 of the public key's uncompressed point, as App Attest names keys.
    public let keyID: [UInt8]
    /// The uncompressed P-256 point.
    public let publicKey: [UInt8]

    public init(keyID: [UInt8], publicKey: [UInt8]) {
        self.keyID = keyID
        self.publicKey = publicKey
    }

    /// The key as the relay's store keeps it: the id, then the point.
    public var attachment: [UInt8] { keyID + publicKey }

    /// The key from a store attachment; nil for anything else (an empty attachment: no attestation).
    public init?(attachment: [UInt8]) {
        guard attachment.count == 32 + 65 else { return nil }
        keyID = Array(attachment[0..<32])
        publicKey = Array(attachment[32...])
    }
}
