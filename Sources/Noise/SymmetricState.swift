import HerdrCrypto

/// The SymmetricState object of Noise section 5.2: a CipherState, the chaining key `ck` and the
/// handshake hash `h`.
public struct SymmetricState<Cipher: NoiseCipher, Hash: NoiseHash>: Sendable {
    public private(set) var cipherState = CipherState<Cipher>()
    /// ck. Secret; readable inside the module for tests of the spec's steps only.
    private(set) var ck: [UInt8]
    /// h.
    private(set) var h: [UInt8]
    /// A digest context reused by MixHash and HKDF. Copy-on-write like the cipher's context: a
    /// copy of this state that hashes first gets a context of its own.
    private var hasher: Hasher

    private final class Hasher: @unchecked Sendable {
        let digest = Digest(Hash.algorithm)
    }

    private mutating func digest() -> Digest {
        if !isKnownUniquelyReferenced(&hasher) { hasher = Hasher() }
        return hasher.digest
    }

    /// InitializeSymmetric(protocol_name): h = protocol_name zero-padded to HASHLEN when it fits,
    /// else HASH(protocol_name); ck = h; an empty key.
    public init(protocolName: String) {
        let name = Array(protocolName.utf8)
        if name.count <= Hash.hashLength {
            h = name + [UInt8](repeating: 0, count: Hash.hashLength - name.count)
        } else {
            h = Hash.hash(name)
        }
        ck = h
        hasher = Hasher()
    }

    /// MixKey(input_key_material): ck, temp_k = HKDF(ck, ikm, 2); InitializeKey(temp_k truncated
    /// to 32 bytes).
    public mutating func mixKey(_ inputKeyMaterial: [UInt8]) throws(NoiseError) {
        let outputs = Hash.hkdf(chainingKey: ck, inputKeyMaterial: inputKeyMaterial, outputs: 2, using: digest())
        ck = outputs[0]
        try cipherState.initializeKey(Array(outputs[1].prefix(NoiseLimits.keyLength)))
    }

    /// MixHash(data): h = HASH(h ‖ data).
    public mutating func mixHash(_ data: [UInt8]) {
        data.withUnsafeBytes { mixHash($0) }
    }

    /// MixHash over bytes in place: h is overwritten, not reallocated.
    mutating func mixHash(_ data: UnsafeRawBufferPointer) {
        let digest = digest()
        digest.update(h)
        digest.update(data)
        h.withUnsafeMutableBytes { digest.finalize(into: $0) }
    }

    /// MixKeyAndHash(input_key_material): ck, temp_h, temp_k = HKDF(ck, ikm, 3); MixHash(temp_h);
    /// InitializeKey(temp_k truncated to 32 bytes). (For PSK modifiers.)
    public mutating func mixKeyAndHash(_ inputKeyMaterial: [UInt8]) throws(NoiseError) {
        let outputs = Hash.hkdf(chainingKey: ck, inputKeyMaterial: inputKeyMaterial, outputs: 3, using: digest())
        ck = outputs[0]
        mixHash(outputs[1])
        try cipherState.initializeKey(Array(outputs[2].prefix(NoiseLimits.keyLength)))
    }

    /// GetHandshakeHash(): h.
    public func getHandshakeHash() -> [UInt8] { h }

    /// EncryptAndHash(plaintext): ciphertext = EncryptWithAd(h, plaintext); MixHash(ciphertext).
    public mutating func encryptAndHash(_ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let ciphertext = try cipherState.encryptWithAd(h, plaintext)
        mixHash(ciphertext)
        return ciphertext
    }

    /// DecryptAndHash(ciphertext): plaintext = DecryptWithAd(h, ciphertext); MixHash(ciphertext).
    public mutating func decryptAndHash(_ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let plaintext = try cipherState.decryptWithAd(h, ciphertext)
        mixHash(ciphertext)
        return plaintext
    }

    /// Split(): temp_k1, temp_k2 = HKDF(ck, zerolen, 2); two CipherStates keyed with them
    /// (truncated to 32 bytes): c1 for initiator → responder, c2 for responder → initiator.
    public func split() throws(NoiseError) -> (CipherState<Cipher>, CipherState<Cipher>) {
        let outputs = Hash.hkdf(chainingKey: ck, inputKeyMaterial: [], outputs: 2)
        let c1 = try CipherState<Cipher>(key: Array(outputs[0].prefix(NoiseLimits.keyLength)))
        let c2 = try CipherState<Cipher>(key: Array(outputs[1].prefix(NoiseLimits.keyLength)))
        return (c1, c2)
    }
}
