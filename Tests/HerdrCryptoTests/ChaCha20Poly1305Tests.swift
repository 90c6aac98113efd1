import HerdrCrypto
import Testing

/// RFC 8439 section 2.8.2 (AEAD encryption) and appendix A.5 (AEAD decryption).
@Suite struct ChaCha20Poly1305Tests {
    static let key = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
    static let nonce = hex("070000004041424344454647")
    static let ad = hex("50515253c0c1c2c3c4c5c6c7")
    static let plaintext = Array(
        "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
            .utf8)
    static let ciphertext = hex(
        """
        d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6
        3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36
        92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc
        3ff4def08e4b7a9de576d26586cec64b6116
        """)
    static let tag = hex("1ae10b594f09e26a7e902ecbd0600691")

    @Test func section2_8_2Seal() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        #expect(
            try aead.seal(nonce: Self.nonce, authenticating: Self.ad, plaintext: Self.plaintext) == Self.ciphertext
                + Self.tag)
        // The context is reused: a second seal with the same inputs gives the same bytes.
        #expect(
            try aead.seal(nonce: Self.nonce, authenticating: Self.ad, plaintext: Self.plaintext) == Self.ciphertext
                + Self.tag)
    }

    @Test func section2_8_2Open() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        #expect(
            try aead.open(nonce: Self.nonce, authenticating: Self.ad, ciphertext: Self.ciphertext + Self.tag)
                == Self.plaintext)
    }

    @Test func appendixA5Open() throws {
        let aead = try ChaCha20Poly1305(key: hex("1c9240a5eb55d38af333888604f6b5f0473917c1402b80099dca5cbc207075c0"))
        let ciphertext = hex(
            """
            64a0861575861af460f062c79be643bd5e805cfd345cf389f108670ac76c8cb2
            4c6cfc18755d43eea09ee94e382d26b0bdb7b73c321b0100d4f03b7f355894cf
            332f830e710b97ce98c8a84abd0b948114ad176e008d33bd60f982b1ff37c855
            9797a06ef4f0ef61c186324e2b3506383606907b6a7c02b0f9f6157b53c867e4
            b9166c767b804d46a59b5216cde7a4e99040c5a40433225ee282a1b0a06c523e
            af4534d7f83fa1155b0047718cbc546a0d072b04b3564eea1b422273f548271a
            0bb2316053fa76991955ebd63159434ecebb4e466dae5a1073a6727627097a10
            49e617d91d361094fa68f0ff77987130305beaba2eda04df997b714d6c6f2c29
            a6ad5cb4022b02709b
            """)
        let tag = hex("eead9d67890cbb22392336fea1851f38")
        let plaintext = try aead.open(
            nonce: hex("000000000102030405060708"), authenticating: hex("f33388860000000000004e91"),
            ciphertext: ciphertext + tag)
        let text = String(decoding: plaintext, as: UTF8.self)
        #expect(text.hasPrefix("Internet-Drafts are draft documents valid for a maximum of six months"))
        #expect(text.hasSuffix("as /\u{201C}work in progress./\u{201D}"))
        #expect(plaintext.count == 265)
    }

    @Test func anyChangedByteFailsAuthentication() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        let sealed = Self.ciphertext + Self.tag
        for index in [0, 57, sealed.count - 17, sealed.count - 16, sealed.count - 1] {
            var tampered = sealed
            tampered[index] ^= 0x80
            #expect(throws: CryptoError(.authenticationFailed, "ChaCha20-Poly1305 authentication failed")) {
                try aead.open(nonce: Self.nonce, authenticating: Self.ad, ciphertext: tampered)
            }
        }
        var otherAD = Self.ad
        otherAD[0] ^= 1
        #expect(throws: CryptoError.self) {
            try aead.open(nonce: Self.nonce, authenticating: otherAD, ciphertext: sealed)
        }
        #expect(throws: CryptoError.self) {
            try aead.open(nonce: hex("000000000000000000000000"), authenticating: Self.ad, ciphertext: sealed)
        }
        #expect(throws: CryptoError.self) {
            try aead.open(nonce: Self.nonce, authenticating: Self.ad, ciphertext: Array(sealed.prefix(15)))
        }
        // After failures the same context still opens the genuine message.
        #expect(try aead.open(nonce: Self.nonce, authenticating: Self.ad, ciphertext: sealed) == Self.plaintext)
    }

    @Test func failedOpenLeavesNoPlaintext() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        var tampered = Self.ciphertext + Self.tag
        tampered[tampered.count - 1] ^= 1
        var output = [UInt8](repeating: 0xee, count: Self.plaintext.count)
        #expect(throws: CryptoError.self) {
            try tampered.withUnsafeBytes { c in
                try Self.nonce.withUnsafeBytes { n in
                    try Self.ad.withUnsafeBytes { a in
                        try output.withUnsafeMutableBytes { o in
                            try aead.open(nonce: n, authenticating: a, ciphertext: c, into: o)
                        }
                    }
                }
            }
        }
        #expect(output.allSatisfy { $0 == 0 })
    }

    @Test func inPlaceAndEmpty() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        var buffer = Self.plaintext + [UInt8](repeating: 0, count: 16)
        let count = Self.plaintext.count
        try Self.nonce.withUnsafeBytes { n in
            try Self.ad.withUnsafeBytes { a in
                try buffer.withUnsafeMutableBytes { b in
                    _ = try aead.seal(
                        nonce: n, authenticating: a, plaintext: UnsafeRawBufferPointer(b).prefix(count).rebased, into: b
                    )
                }
            }
        }
        #expect(buffer == Self.ciphertext + Self.tag)
        try Self.nonce.withUnsafeBytes { n in
            try Self.ad.withUnsafeBytes { a in
                let opened = try buffer.withUnsafeMutableBytes { b in
                    try aead.open(nonce: n, authenticating: a, ciphertext: UnsafeRawBufferPointer(b), into: b)
                }
                #expect(opened == count)
            }
        }
        #expect(Array(buffer.prefix(count)) == Self.plaintext)

        let empty = try aead.seal(nonce: Self.nonce, authenticating: [], plaintext: [])
        #expect(empty.count == 16)
        #expect(try aead.open(nonce: Self.nonce, authenticating: [], ciphertext: empty) == [])
    }

    /// The gather/scatter forms equal the one-buffer forms for every split point, including the
    /// empty plaintext and a header longer than the plaintext.
    @Test func headerSplitsEqualTheWhole() throws {
        let aead = try ChaCha20Poly1305(key: Self.key)
        let whole = Self.ciphertext + Self.tag
        for split in [0, 1, 2, 63, 64, 65, Self.plaintext.count] {
            var sealed = [UInt8](repeating: 0, count: whole.count)
            try Self.nonce.withUnsafeBytes { n in
                try Self.ad.withUnsafeBytes { a in
                    try Self.plaintext.withUnsafeBytes { p in
                        try sealed.withUnsafeMutableBytes { o in
                            _ = try aead.seal(
                                nonce: n, authenticating: a, header: UnsafeRawBufferPointer(rebasing: p[..<split]),
                                plaintext: UnsafeRawBufferPointer(rebasing: p[split...]), into: o)
                        }
                    }
                }
            }
            #expect(sealed == whole, "split at \(split)")
            var header = [UInt8](repeating: 0, count: split)
            var rest = [UInt8](repeating: 0, count: Self.plaintext.count - split)
            let length = try Self.nonce.withUnsafeBytes { n in
                try Self.ad.withUnsafeBytes { a in
                    try whole.withUnsafeBytes { c in
                        try header.withUnsafeMutableBytes { h in
                            try rest.withUnsafeMutableBytes { o in
                                try aead.open(nonce: n, authenticating: a, ciphertext: c, header: h, into: o)
                            }
                        }
                    }
                }
            }
            #expect(length == Self.plaintext.count)
            #expect(header + rest == Self.plaintext, "split at \(split)")
        }
        // A header longer than the whole plaintext gets only what there is.
        let short = try aead.seal(nonce: Self.nonce, plaintext: [7])
        var header = [UInt8](repeating: 0xee, count: 4)
        var rest: [UInt8] = []
        let length = try Self.nonce.withUnsafeBytes { n in
            try short.withUnsafeBytes { c in
                try header.withUnsafeMutableBytes { h in
                    try rest.withUnsafeMutableBytes { o in
                        try aead.open(
                            nonce: n, authenticating: UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: c,
                            header: h, into: o)
                    }
                }
            }
        }
        #expect(length == 1)
        #expect(header == [7, 0xee, 0xee, 0xee])
    }

    @Test func noiseNonceLayout() {
        #expect(ChaCha20Poly1305.noiseNonce(0) == [UInt8](repeating: 0, count: 12))
        #expect(Hex.encode(ChaCha20Poly1305.noiseNonce(0x0102_0304_0506_0708)) == "000000000807060504030201")
        #expect(Hex.encode(ChaCha20Poly1305.noiseNonce(.max)) == "00000000ffffffffffffffff")
    }

    @Test func wrongSizesAreRefused() throws {
        #expect(throws: CryptoError.self) { try ChaCha20Poly1305(key: [UInt8](repeating: 0, count: 16)) }
        let aead = try ChaCha20Poly1305(key: Self.key)
        #expect(throws: CryptoError.self) { try aead.seal(nonce: [0, 0, 0, 0, 0, 0, 0, 0], plaintext: [1]) }
    }
}

extension Slice where Base == UnsafeRawBufferPointer {
    var rebased: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: self) }
}
