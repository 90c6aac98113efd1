import HerdrCrypto

/// A Curve25519 key pair (Noise section 4.1, 12.1): the private key stays inside OpenSSL.
public struct KeyPair: Sendable {
    /// The 32-byte public key.
    public let publicKey: [UInt8]
    let privateKey: X25519PrivateKey

    /// A key pair for a stored 32-byte private key.
    public init(privateKey: [UInt8]) throws(NoiseError) {
        do {
            self.init(try X25519PrivateKey(rawRepresentation: privateKey))
        } catch {
            throw NoiseError(error, "Curve25519 private key")
        }
    }

    public init(_ privateKey: X25519PrivateKey) {
        self.privateKey = privateKey
        self.publicKey = privateKey.publicKey.raw
    }

    /// GENERATE_KEYPAIR(): a fresh random key pair.
    public static func generate() -> KeyPair { KeyPair(X25519PrivateKey()) }

    /// The 32-byte private key, for storing it. Handle with care: it is the secret.
    public var privateKeyBytes: [UInt8] { privateKey.rawRepresentation }
}

/// The 25519 DH functions (Noise section 12.1): X25519 of RFC 7748, DHLEN = 32.
public enum DH25519 {
    public static let name = "25519"
    public static let dhLength = NoiseLimits.dhLength

    /// GENERATE_KEYPAIR().
    public static func generateKeyPair() -> KeyPair { KeyPair.generate() }

    /// DH(key_pair, public_key). Throws `.invalidKey` for a public key of the wrong size or one
    /// that gives an all-zero output (a low-order point), which Noise section 12.1 allows refusing.
    public static func dh(_ keyPair: KeyPair, _ publicKey: [UInt8]) throws(NoiseError) -> [UInt8] {
        do {
            return try keyPair.privateKey.sharedSecret(with: X25519PublicKey(raw: publicKey))
        } catch {
            throw NoiseError(.invalidKey, "DH(25519): \(error.message)")
        }
    }
}
