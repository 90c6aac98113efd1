import HerdrCrypto

/// A Noise cipher function (Noise section 4.2): ENCRYPT and DECRYPT under a 32-byte key with a
/// 64-bit nonce, and REKEY. Implementations are values; encryption is `mutating` so an
/// implementation may keep reusable scratch state (an OpenSSL context) behind copy-on-write.
public protocol NoiseCipher: Sendable {
    /// The name in protocol names, e.g. `ChaChaPoly`.
    static var name: String { get }

    /// A cipher keyed with `key` (32 bytes; CipherState checks the length).
    init(key: [UInt8]) throws(NoiseError)

    /// ENCRYPT(k, n, ad, plaintext): writes ciphertext ‖ 16-byte tag into `output`
    /// (`plaintext.count + 16` bytes). `output` may start at `plaintext`'s address (in place).
    mutating func encrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer) throws(NoiseError)

    /// DECRYPT(k, n, ad, ciphertext): writes the plaintext (`ciphertext.count - 16` bytes) into
    /// `output`, or throws `.decryptionFailed` and leaves no plaintext behind.
    mutating func decrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer) throws(NoiseError)

    /// ENCRYPT of the plaintext `header ‖ plaintext` without joining them first (gather); output
    /// as for `encrypt`. Has a default that joins them in a temporary buffer.
    mutating func encrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer) throws(NoiseError)

    /// DECRYPT whose plaintext's first `header.count` bytes go to `header`, the rest to `output`
    /// (scatter). Has a default that decrypts into a temporary buffer and splits it.
    mutating func decrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        header: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer) throws(NoiseError)

    /// REKEY(k): a new key as a pseudorandom function of this one.
    mutating func rekey() throws(NoiseError) -> Self
}

extension NoiseCipher {
    public mutating func encrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        var joined = Array(header) + Array(plaintext)
        try joined.withMutableBytes { buffer throws(NoiseError) in
            try encrypt(nonce: nonce, ad: ad, plaintext: UnsafeRawBufferPointer(buffer), into: output)
        }
    }

    public mutating func decrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        header: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        var plaintext = [UInt8](repeating: 0, count: max(ciphertext.count - NoiseLimits.tagLength, 0))
        try plaintext.withMutableBytes { buffer throws(NoiseError) in
            try decrypt(nonce: nonce, ad: ad, ciphertext: ciphertext, into: buffer)
        }
        let headerLength = min(header.count, plaintext.count)
        plaintext.withUnsafeBytes { bytes in
            if headerLength > 0 { header.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<headerLength])) }
            if bytes.count > headerLength {
                output.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[headerLength...]))
            }
        }
    }

    /// The default REKEY of Noise section 4.2: the first 32 bytes of
    /// ENCRYPT(k, maxnonce, zerolen, zeros), zeros being 32 zero bytes.
    public mutating func rekey() throws(NoiseError) -> Self {
        var block = [UInt8](repeating: 0, count: NoiseLimits.keyLength + NoiseLimits.tagLength)
        try block.withMutableBytes { buffer throws(NoiseError) in
            let zeros = UnsafeRawBufferPointer(rebasing: buffer[..<NoiseLimits.keyLength])
            try encrypt(
                nonce: NoiseLimits.reservedNonce, ad: UnsafeRawBufferPointer(start: nil, count: 0), plaintext: zeros,
                into: buffer)
        }
        return try Self(key: Array(block[..<NoiseLimits.keyLength]))
    }
}

/// ChaChaPoly (Noise section 12.3): ChaCha20-Poly1305 of RFC 8439 with the 96-bit nonce made of
/// 32 zero bits followed by the little-endian 64-bit counter.
public struct CipherChaChaPoly: NoiseCipher {
    public static let name = "ChaChaPoly"

    /// The OpenSSL context, keyed once. Shared between copies of this value and cloned before a
    /// copy that is not the only owner uses it, so values stay independent and Sendable.
    private final class Storage: @unchecked Sendable {
        let key: [UInt8]
        let aead: ChaCha20Poly1305

        init(key: [UInt8]) throws(NoiseError) {
            self.key = key
            do {
                aead = try ChaCha20Poly1305(key: key)
            } catch {
                throw NoiseError(error, "ChaChaPoly key")
            }
        }
    }

    private var storage: Storage

    public init(key: [UInt8]) throws(NoiseError) {
        storage = try Storage(key: key)
    }

    private mutating func uniqueAEAD() throws(NoiseError) -> ChaCha20Poly1305 {
        if !isKnownUniquelyReferenced(&storage) { storage = try Storage(key: storage.key) }
        return storage.aead
    }

    public mutating func encrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        let aead = try uniqueAEAD()
        do {
            try ChaCha20Poly1305.withNoiseNonce(nonce) { n throws(CryptoError) in
                _ = try aead.seal(nonce: n, authenticating: ad, plaintext: plaintext, into: output)
            }
        } catch {
            throw NoiseError(error, "ChaChaPoly encrypt")
        }
    }

    public mutating func encrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        let aead = try uniqueAEAD()
        do {
            try ChaCha20Poly1305.withNoiseNonce(nonce) { n throws(CryptoError) in
                _ = try aead.seal(nonce: n, authenticating: ad, header: header, plaintext: plaintext, into: output)
            }
        } catch {
            throw NoiseError(error, "ChaChaPoly encrypt")
        }
    }

    public mutating func decrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        header: UnsafeMutableRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        let aead = try uniqueAEAD()
        do {
            try ChaCha20Poly1305.withNoiseNonce(nonce) { n throws(CryptoError) in
                _ = try aead.open(nonce: n, authenticating: ad, ciphertext: ciphertext, header: header, into: output)
            }
        } catch {
            throw NoiseError(error, "ChaChaPoly decrypt with nonce \(nonce)")
        }
    }

    public mutating func decrypt(
        nonce: UInt64, ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) {
        let aead = try uniqueAEAD()
        do {
            try ChaCha20Poly1305.withNoiseNonce(nonce) { n throws(CryptoError) in
                _ = try aead.open(nonce: n, authenticating: ad, ciphertext: ciphertext, into: output)
            }
        } catch {
            throw NoiseError(error, "ChaChaPoly decrypt with nonce \(nonce)")
        }
    }
}
