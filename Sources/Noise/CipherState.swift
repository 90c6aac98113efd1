import HerdrCrypto

/// The CipherState object of Noise section 5.1: a key `k` (possibly empty) and a nonce `n`.
///
/// A value: copies are independent (the cipher's OpenSSL context is copy-on-write). Nonce
/// 2^64 − 1 is reserved: once `n` reaches it, every EncryptWithAd and DecryptWithAd throws
/// `.nonceExhausted`. No ciphertext may exceed the 65535-byte Noise message limit.
public struct CipherState<Cipher: NoiseCipher>: Sendable {
    private var k: Cipher?
    /// n: the nonce the next EncryptWithAd or DecryptWithAd under a key uses.
    public private(set) var n: UInt64 = 0

    /// A CipherState with an empty key.
    public init() {}

    /// A CipherState after InitializeKey(key).
    public init(key: [UInt8]) throws(NoiseError) {
        try initializeKey(key)
    }

    /// InitializeKey(key): sets k (nil means empty) and n = 0.
    public mutating func initializeKey(_ key: [UInt8]?) throws(NoiseError) {
        if let key {
            guard key.count == NoiseLimits.keyLength else {
                throw NoiseError(.invalidKey, "a cipher key is 32 bytes, got \(key.count)")
            }
            k = try Cipher(key: key)
        } else {
            k = nil
        }
        n = 0
    }

    /// HasKey().
    public var hasKey: Bool { k != nil }

    /// SetNonce(nonce).
    public mutating func setNonce(_ nonce: UInt64) { n = nonce }

    /// EncryptWithAd(ad, plaintext): ENCRYPT(k, n++, ad, plaintext) with a key, else the
    /// plaintext unchanged.
    public mutating func encryptWithAd(_ ad: [UInt8], _ plaintext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let length = hasKey ? plaintext.count + NoiseLimits.tagLength : plaintext.count
        var output = [UInt8](repeating: 0, count: length)
        try ad.withBytes { a throws(NoiseError) in
            try plaintext.withBytes { p throws(NoiseError) in
                try output.withMutableBytes { o throws(NoiseError) in _ = try encryptWithAd(a, plaintext: p, into: o) }
            }
        }
        return output
    }

    /// DecryptWithAd(ad, ciphertext): DECRYPT(k, n++, ad, ciphertext) with a key, else the
    /// ciphertext unchanged. On an authentication failure n is not incremented.
    public mutating func decryptWithAd(_ ad: [UInt8], _ ciphertext: [UInt8]) throws(NoiseError) -> [UInt8] {
        let length = hasKey ? max(ciphertext.count - NoiseLimits.tagLength, 0) : ciphertext.count
        var output = [UInt8](repeating: 0, count: length)
        try ad.withBytes { a throws(NoiseError) in
            try ciphertext.withBytes { c throws(NoiseError) in
                try output.withMutableBytes { o throws(NoiseError) in _ = try decryptWithAd(a, ciphertext: c, into: o) }
            }
        }
        return output
    }

    /// EncryptWithAd into a caller's buffer (`plaintext.count + 16` bytes with a key), allocating
    /// nothing; `output` may be `plaintext`'s own memory. Returns the bytes written.
    @discardableResult
    public mutating func encryptWithAd(
        _ ad: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) -> Int {
        guard k != nil else {
            guard plaintext.count <= NoiseLimits.maximumMessageLength else { throw tooLong(plaintext.count) }
            guard output.count >= plaintext.count else { throw NoiseError(.cryptoLibrary, "output buffer too small") }
            if let source = plaintext.baseAddress, source != UnsafeRawPointer(output.baseAddress) {
                output.baseAddress!.copyMemory(from: source, byteCount: plaintext.count)
            }
            return plaintext.count
        }
        let length = plaintext.count + NoiseLimits.tagLength
        guard length <= NoiseLimits.maximumMessageLength else { throw tooLong(length) }
        guard n != NoiseLimits.reservedNonce else { throw exhausted() }
        try k!.encrypt(nonce: n, ad: ad, plaintext: plaintext, into: output)
        n += 1
        return length
    }

    /// DecryptWithAd into a caller's buffer (`ciphertext.count - 16` bytes with a key), allocating
    /// nothing; `output` may be `ciphertext`'s own memory. Returns the bytes written.
    @discardableResult
    public mutating func decryptWithAd(
        _ ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) -> Int {
        guard ciphertext.count <= NoiseLimits.maximumMessageLength else { throw tooLong(ciphertext.count) }
        guard k != nil else {
            guard output.count >= ciphertext.count else { throw NoiseError(.cryptoLibrary, "output buffer too small") }
            if let source = ciphertext.baseAddress, source != UnsafeRawPointer(output.baseAddress) {
                output.baseAddress!.copyMemory(from: source, byteCount: ciphertext.count)
            }
            return ciphertext.count
        }
        guard n != NoiseLimits.reservedNonce else { throw exhausted() }
        guard ciphertext.count >= NoiseLimits.tagLength else {
            throw NoiseError(.decryptionFailed, "ciphertext of \(ciphertext.count) bytes is shorter than the tag")
        }
        try k!.decrypt(nonce: n, ad: ad, ciphertext: ciphertext, into: output)
        n += 1
        return ciphertext.count - NoiseLimits.tagLength
    }

    /// EncryptWithAd(ad, header ‖ plaintext) without joining the two (gather): writes
    /// `header.count + plaintext.count + 16` bytes into `output` (with a key). For framings that
    /// put a few bytes before each payload. `plaintext` may already sit at `output[header.count...]`.
    @discardableResult
    public mutating func encryptWithAd(
        _ ad: UnsafeRawBufferPointer, header: UnsafeRawBufferPointer, plaintext: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) -> Int {
        guard k != nil else {
            let length = header.count + plaintext.count
            guard length <= NoiseLimits.maximumMessageLength else { throw tooLong(length) }
            guard output.count >= length else { throw NoiseError(.cryptoLibrary, "output buffer too small") }
            guard length > 0, let base = output.baseAddress else { return 0 }
            if let source = plaintext.baseAddress, !plaintext.isEmpty, source != UnsafeRawPointer(base + header.count) {
                (base + header.count).copyMemory(from: source, byteCount: plaintext.count)
            }
            if let source = header.baseAddress, !header.isEmpty {
                base.copyMemory(from: source, byteCount: header.count)
            }
            return length
        }
        let length = header.count + plaintext.count + NoiseLimits.tagLength
        guard length <= NoiseLimits.maximumMessageLength else { throw tooLong(length) }
        guard n != NoiseLimits.reservedNonce else { throw exhausted() }
        try k!.encrypt(nonce: n, ad: ad, header: header, plaintext: plaintext, into: output)
        n += 1
        return length
    }

    /// DecryptWithAd whose plaintext's first `header.count` bytes go to `header` and the rest to
    /// `output` (scatter), so a framing prefix is stripped without moving the payload. Returns the
    /// whole plaintext's length, which may be less than `header.count`.
    @discardableResult
    public mutating func decryptWithAd(
        _ ad: UnsafeRawBufferPointer, ciphertext: UnsafeRawBufferPointer, header: UnsafeMutableRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) throws(NoiseError) -> Int {
        guard ciphertext.count <= NoiseLimits.maximumMessageLength else { throw tooLong(ciphertext.count) }
        guard k != nil else {
            let headerLength = min(header.count, ciphertext.count)
            guard output.count >= ciphertext.count - headerLength else {
                throw NoiseError(.cryptoLibrary, "output buffer too small")
            }
            if headerLength > 0 {
                header.copyMemory(from: UnsafeRawBufferPointer(rebasing: ciphertext[..<headerLength]))
            }
            if ciphertext.count > headerLength {
                output.copyMemory(from: UnsafeRawBufferPointer(rebasing: ciphertext[headerLength...]))
            }
            return ciphertext.count
        }
        guard n != NoiseLimits.reservedNonce else { throw exhausted() }
        guard ciphertext.count >= NoiseLimits.tagLength else {
            throw NoiseError(.decryptionFailed, "ciphertext of \(ciphertext.count) bytes is shorter than the tag")
        }
        try k!.decrypt(nonce: n, ad: ad, ciphertext: ciphertext, header: header, into: output)
        n += 1
        return ciphertext.count - NoiseLimits.tagLength
    }

    /// Rekey(): k = REKEY(k); n is unchanged.
    public mutating func rekey() throws(NoiseError) {
        guard k != nil else { throw NoiseError(.invalidKey, "Rekey on a CipherState with an empty key") }
        k = try k!.rekey()
    }

    private func tooLong(_ length: Int) -> NoiseError {
        NoiseError(
            .messageTooLong,
            "a Noise message is at most \(NoiseLimits.maximumMessageLength) bytes, this one would be \(length)")
    }

    private func exhausted() -> NoiseError {
        NoiseError(.nonceExhausted, "nonce 2^64-1 is reserved: this key can encrypt or decrypt no more messages")
    }
}
