import COpenSSL

/// An Ed25519 signing key (RFC 8032) held in an OpenSSL `EVP_PKEY`.
public final class Ed25519PrivateKey: @unchecked Sendable {
    public static let seedSize = 32
    public static let signatureSize = 64

    // Immutable after init; OpenSSL keys are safe to use from several threads for signing.
    private let key: OpaquePointer

    /// Creates a new random key.
    public convenience init() {
        // SecureRandom never returns a wrong-sized seed, so this cannot fail.
        try! self.init(seed: SecureRandom.bytes(Self.seedSize))
    }

    /// Creates the key for a 32-byte seed (the RFC 8032 private key).
    public init(seed: [UInt8]) throws(CryptoError) {
        OpenSSLRuntime.prepare()
        guard seed.count == Self.seedSize else {
            throw CryptoError(.invalidKey, "Ed25519 seed must be 32 bytes, got \(seed.count)")
        }
        guard
            let key = seed.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
            })
        else {
            throw CryptoError.openSSL("EVP_PKEY_new_raw_private_key(Ed25519)")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The 32-byte seed. Handle with care: it is the secret.
    public var seed: [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var size = 32
        let status = EVP_PKEY_get_raw_private_key(key, &out, &size)
        precondition(status == 1 && size == 32, "EVP_PKEY_get_raw_private_key failed")
        return out
    }

    /// The 32-byte public key.
    public var publicKey: Ed25519PublicKey {
        var out = [UInt8](repeating: 0, count: 32)
        var size = 32
        let status = EVP_PKEY_get_raw_public_key(key, &out, &size)
        precondition(status == 1 && size == 32, "EVP_PKEY_get_raw_public_key failed")
        return Ed25519PublicKey(uncheckedRaw: out)
    }

    /// Signs `message` (pure Ed25519, no prehash).
    public func signature(for message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let ctx = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestSignInit(ctx, nil, nil, nil, key) == 1 else {
            throw CryptoError.openSSL("EVP_DigestSignInit(Ed25519)")
        }
        var signature = [UInt8](repeating: 0, count: Self.signatureSize)
        var size = Self.signatureSize
        // OpenSSL wants a non-null pointer even for an empty message.
        let input = message.isEmpty ? [0] : message
        let status = EVP_DigestSign(ctx, &signature, &size, input, message.count)
        guard status == 1, size == Self.signatureSize else { throw CryptoError.openSSL("EVP_DigestSign(Ed25519)") }
        return signature
    }
}

/// An Ed25519 public key: 32 raw bytes.
public struct Ed25519PublicKey: Hashable, Sendable {
    public static let size = 32
    public let raw: [UInt8]

    public init(raw: [UInt8]) throws(CryptoError) {
        guard raw.count == Self.size else {
            throw CryptoError(.invalidKey, "Ed25519 public key must be 32 bytes, got \(raw.count)")
        }
        self.raw = raw
    }

    init(uncheckedRaw: [UInt8]) { self.raw = uncheckedRaw }

    /// True when `signature` is a valid Ed25519 signature of `message` under this key.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard signature.count == Ed25519PrivateKey.signatureSize else { return false }
        guard
            let key = raw.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, 32)
            })
        else {
            ERR_clear_error()
            return false
        }
        defer { EVP_PKEY_free(key) }
        guard let ctx = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(ctx) }
        guard EVP_DigestVerifyInit(ctx, nil, nil, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let input = message.isEmpty ? [0] : message
        let status = EVP_DigestVerify(ctx, signature, signature.count, input, message.count)
        ERR_clear_error()
        return status == 1
    }
}
