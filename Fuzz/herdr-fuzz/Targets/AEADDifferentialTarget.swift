import HerdrCrypto

extension FuzzTargets {
    /// ChaCha20-Poly1305's two paths on the same inputs: the compact one (this project's own
    /// ChaCha20 and Poly1305, used for short messages) and OpenSSL's. The input is a byte for the
    /// associated data's length (0–63), a byte choosing the header split and the byte to flip,
    /// then the 32-byte key, the 12-byte nonce, the associated data and the plaintext (any
    /// length, so both sides of the size limit). Both paths seal to the same bytes, whole and with
    /// a header split off; each opens what the other sealed; a flipped byte is refused by both
    /// and leaves zeros in the output.
    static let aeadDifferential = FuzzTarget(
        "aead-differential", "ChaCha20-Poly1305: the compact path against OpenSSL"
    ) { data in
        guard data.count >= 2 + 32 + 12 else { return }
        let adLength = min(Int(data[0] % 64), data.count - 46)
        let key = Array(data[2..<34])
        let nonce = Array(data[34..<46])
        let ad = Array(data[46..<(46 + adLength)])
        let plaintext = Array(data[(46 + adLength)...])
        let compact = try! ChaCha20Poly1305(key: key, engine: .compact)
        let openSSL = try! ChaCha20Poly1305(key: key, engine: .openSSL)
        let sealed = try! openSSL.seal(nonce: nonce, authenticating: ad, plaintext: plaintext)
        FuzzCheck.expect(
            (try? compact.seal(nonce: nonce, authenticating: ad, plaintext: plaintext)) == sealed,
            "the compact path seals \(plaintext.count) bytes differently")
        FuzzCheck.expect(
            (try? compact.open(nonce: nonce, authenticating: ad, ciphertext: sealed)) == plaintext,
            "the compact path does not open OpenSSL's message")

        let split = Int(data[1]) % (plaintext.count + 1)
        var gathered = [UInt8](repeating: 0, count: sealed.count)
        let written = try? nonce.withUnsafeBytes { n in
            try ad.withUnsafeBytes { a in
                try plaintext.withUnsafeBytes { p in
                    try gathered.withUnsafeMutableBytes { o in
                        try compact.seal(
                            nonce: n, authenticating: a, header: UnsafeRawBufferPointer(rebasing: p[..<split]),
                            plaintext: UnsafeRawBufferPointer(rebasing: p[split...]), into: o)
                    }
                }
            }
        }
        FuzzCheck.expect(written == sealed.count && gathered == sealed, "the gather seal at \(split) differs")

        var tampered = sealed
        tampered[Int(data[1]) % tampered.count] ^= 0x01 | data[0]
        for aead in [compact, openSSL] {
            var output = [UInt8](repeating: 0xee, count: plaintext.count)
            let opened = try? nonce.withUnsafeBytes { n in
                try ad.withUnsafeBytes { a in
                    try tampered.withUnsafeBytes { c in
                        try output.withUnsafeMutableBytes { o in
                            try aead.open(nonce: n, authenticating: a, ciphertext: c, into: o)
                        }
                    }
                }
            }
            FuzzCheck.expect(opened == nil, "a flipped byte opens on the \(aead.engine) path")
            FuzzCheck.expect(output.allSatisfy { $0 == 0 }, "a refused message left bytes on the \(aead.engine) path")
        }
    }
}
