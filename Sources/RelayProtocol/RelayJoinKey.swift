import HerdrCrypto

/// The room's join key, derived by both paired devices from the 32-byte `roomSecret` the phone
/// sends inside the Noise channel (interop-facts §5): Ed25519 seed =
/// HKDF-SHA256(IKM = roomSecret, empty salt, info `relay-auth-ed25519`, 32 bytes). The relay
/// stores only the verifier V, the raw 32-byte public key, and checks join and delete signatures
/// against it.
public struct RelayJoinKey: Sendable {
    public static let info = "relay-auth-ed25519"
    public static let roomSecretSize = 32

    public let signingKey: Ed25519PrivateKey

    public init(roomSecret: [UInt8]) throws(CryptoError) {
        guard roomSecret.count == Self.roomSecretSize else {
            throw CryptoError(.invalidKey, "roomSecret must be 32 bytes, got \(roomSecret.count)")
        }
        let seed = try HKDF.sha256(
            inputKeyMaterial: roomSecret, info: Array(Self.info.utf8), outputByteCount: Ed25519PrivateKey.seedSize)
        signingKey = try Ed25519PrivateKey(seed: seed)
    }

    /// V: what `/register` uploads (base64 of these 32 bytes).
    public var verifier: Ed25519PublicKey { signingKey.publicKey }

    /// A fresh random roomSecret.
    public static func makeRoomSecret() -> [UInt8] { SecureRandom.bytes(roomSecretSize) }

    /// The signature for an established-room join.
    public func signJoin(role: RelayRole, nonce: [UInt8], room: String, origin: String) throws(CryptoError) -> [UInt8] {
        try signingKey.signature(for: RelayTranscript.join(role: role, nonce: nonce, room: room, origin: origin))
    }

    /// The signature for deleting the room.
    public func signDelete(challenge: [UInt8], room: String, origin: String) throws(CryptoError) -> [UInt8] {
        try signingKey.signature(for: RelayTranscript.delete(challenge: challenge, room: room, origin: origin))
    }
}
