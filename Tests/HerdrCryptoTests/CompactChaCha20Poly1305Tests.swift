import Testing

@testable import HerdrCrypto

/// The compact path (`ChaCha20` and `Poly1305` in Swift) against RFC 8439's edge vectors and
/// against OpenSSL on the same inputs, every length around the block sizes and the limit.
@Suite struct CompactChaCha20Poly1305Tests {
    /// RFC 8439 appendix A.3, vectors 5 to 11: the ones that reach the modular reduction's edges
    /// (sums just below and above 2^130 − 5, carries through every word). All are whole 16-byte
    /// blocks, so the AEAD's zero padding leaves them as they are.
    @Test(arguments: [
        (
            "0200000000000000000000000000000000000000000000000000000000000000", "ffffffffffffffffffffffffffffffff",
            "03000000000000000000000000000000"
        ),
        (
            "02000000000000000000000000000000ffffffffffffffffffffffffffffffff", "02000000000000000000000000000000",
            "03000000000000000000000000000000"
        ),
        (
            "0100000000000000000000000000000000000000000000000000000000000000",
            "fffffffffffffffffffffffffffffffff0ffffffffffffffffffffffffffffff11000000000000000000000000000000",
            "05000000000000000000000000000000"
        ),
        (
            "0100000000000000000000000000000000000000000000000000000000000000",
            "fffffffffffffffffffffffffffffffffbfefefefefefefefefefefefefefefe01010101010101010101010101010101",
            "00000000000000000000000000000000"
        ),
        (
            "0200000000000000000000000000000000000000000000000000000000000000", "fdffffffffffffffffffffffffffffff",
            "faffffffffffffffffffffffffffffff"
        ),
        (
            "0100000000000000040000000000000000000000000000000000000000000000",
            "e33594d7505e43b900000000000000003394d7505e4379cd0100000000000000"
                + "00000000000000000000000000000000" + "01000000000000000000000000000000",
            "14000000000000005500000000000000"
        ),
        (
            "0100000000000000040000000000000000000000000000000000000000000000",
            "e33594d7505e43b900000000000000003394d7505e4379cd010000000000000000000000000000000000000000000000",
            "13000000000000000000000000000000"
        ),
    ])
    func poly1305EdgeVectors(key: String, message: String, tag: String) {
        let key = hex(key)
        let message = hex(message)
        var mac = key.withUnsafeBytes { Poly1305(key: $0.baseAddress!) }
        message.withUnsafeBytes { mac.absorbPadded($0.baseAddress, count: $0.count) }
        var out = [UInt8](repeating: 0, count: 16)
        out.withUnsafeMutableBytes { mac.finish(into: $0.baseAddress!) }
        #expect(Hex.encode(out) == tag)
    }

    static let plaintextLengths = [
        0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 500, 1023, 1024, 1025,
    ]

    /// The same key, nonce, associated data and plaintext seal to the same bytes on both paths,
    /// and each path opens what the other sealed.
    @Test(arguments: plaintextLengths)
    func bothPathsAgree(length: Int) throws {
        var random = TestRandom(seed: UInt64(length) &+ 1)
        let key = random.bytes(32)
        let compact = try ChaCha20Poly1305(key: key, engine: .compact)
        let openSSL = try ChaCha20Poly1305(key: key, engine: .openSSL)
        for adLength in [0, 1, 12, 16, 17, 33] {
            let nonce = random.bytes(12)
            let ad = random.bytes(adLength)
            let plaintext = random.bytes(length)
            let sealed = try compact.seal(nonce: nonce, authenticating: ad, plaintext: plaintext)
            #expect(sealed == (try openSSL.seal(nonce: nonce, authenticating: ad, plaintext: plaintext)))
            #expect(try openSSL.open(nonce: nonce, authenticating: ad, ciphertext: sealed) == plaintext)
            #expect(try compact.open(nonce: nonce, authenticating: ad, ciphertext: sealed) == plaintext)
        }
    }

    /// A flipped bit anywhere (ciphertext, tag, associated data) fails on the compact path and
    /// leaves zeros, not plaintext, in the output.
    @Test(arguments: [0, 1, 16, 64, 129])
    func compactPathRefusesTampering(length: Int) throws {
        var random = TestRandom(seed: 99 &+ UInt64(length))
        let aead = try ChaCha20Poly1305(key: random.bytes(32), engine: .compact)
        let nonce = random.bytes(12)
        let ad = random.bytes(5)
        let sealed = try aead.seal(nonce: nonce, authenticating: ad, plaintext: random.bytes(length))
        for index in sealed.indices {
            var tampered = sealed
            tampered[index] ^= 1 << UInt8(index % 8)
            var output = [UInt8](repeating: 0xee, count: length)
            #expect(throws: CryptoError(.authenticationFailed, "ChaCha20-Poly1305 authentication failed")) {
                try nonce.withUnsafeBytes { n in
                    try ad.withUnsafeBytes { a in
                        try tampered.withUnsafeBytes { c in
                            try output.withUnsafeMutableBytes { o in
                                try aead.open(nonce: n, authenticating: a, ciphertext: c, into: o)
                            }
                        }
                    }
                }
            }
            #expect(output.allSatisfy { $0 == 0 }, "byte \(index)")
        }
        var otherAD = ad
        otherAD[4] ^= 0x80
        #expect(throws: CryptoError.self) { try aead.open(nonce: nonce, authenticating: otherAD, ciphertext: sealed) }
    }

    /// Split and in-place forms on the compact path equal OpenSSL's whole-buffer seal.
    @Test(arguments: [0, 1, 2, 31, 64, 65, 200])
    func compactSplitsEqualOpenSSL(split: Int) throws {
        var random = TestRandom(seed: 7 &+ UInt64(split))
        let key = random.bytes(32)
        let compact = try ChaCha20Poly1305(key: key, engine: .compact)
        let openSSL = try ChaCha20Poly1305(key: key, engine: .openSSL)
        let nonce = random.bytes(12)
        let plaintext = random.bytes(200)
        let whole = try openSSL.seal(nonce: nonce, plaintext: plaintext)
        // Sealed with the plaintext already in place after the header's room.
        var buffer = [UInt8](repeating: 0, count: whole.count)
        for index in plaintext.indices where index >= split { buffer[index] = plaintext[index] }
        try nonce.withUnsafeBytes { n in
            try plaintext.withUnsafeBytes { p in
                try buffer.withUnsafeMutableBytes { b in
                    let inPlace = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(b)[split..<plaintext.count])
                    _ = try compact.seal(
                        nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0),
                        header: UnsafeRawBufferPointer(rebasing: p[..<split]), plaintext: inPlace, into: b)
                }
            }
        }
        #expect(buffer == whole)
        // Opened in place, the header split off into its own buffer.
        var header = [UInt8](repeating: 0, count: split)
        let length = try nonce.withUnsafeBytes { n in
            try header.withUnsafeMutableBytes { h in
                try buffer.withUnsafeMutableBytes { b in
                    try compact.open(
                        nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0),
                        ciphertext: UnsafeRawBufferPointer(b), header: h,
                        into: UnsafeMutableRawBufferPointer(rebasing: b[split...]))
                }
            }
        }
        #expect(length == plaintext.count)
        #expect(header + buffer[split..<plaintext.count] == plaintext)
    }
}

/// A fixed-seed generator (xorshift64*), so a failing case can be replayed.
struct TestRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_f491_4f6c_dd1d
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next() >> 32) }
    }
}
