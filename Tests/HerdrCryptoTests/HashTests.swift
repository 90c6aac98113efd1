import HerdrCrypto
import Testing

/// RFC 7693 appendix B (BLAKE2s-256 of "abc"), the empty-input digests, FIPS 180 SHA-256,
/// and HMAC per RFC 4231 (SHA-256, SHA-512). HMAC-BLAKE2s/BLAKE2b have no RFC vectors; those
/// expected values were computed with CPython's `hmac` and `hashlib`, an independent implementation.
@Suite struct HashTests {
    @Test func blake2s() {
        #expect(
            Hex.encode(BLAKE2s.hash(Array("abc".utf8)))
                == "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982")
        #expect(Hex.encode(BLAKE2s.hash([])) == "69217a3079908094e11121d042354a7c1f55b6482ca1a51e1b250dfd1ed0eef9")
    }

    @Test func blake2b() {
        #expect(
            Hex.encode(BLAKE2b.hash(Array("abc".utf8)))
                == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                + "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
    }

    @Test func sha2() {
        #expect(
            Hex.encode(SHA256.hash(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            Hex.encode(HashAlgorithm.sha256.hash([]))
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            Hex.encode(SHA512.hash(Array("abc".utf8)))
                == "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
                + "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f")
    }

    @Test func streamingEqualsOneShot() {
        for algorithm in HashAlgorithm.allCases {
            let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let digest = Digest(algorithm)
            digest.update(Array(data[..<3]))
            digest.update([])
            digest.update(Array(data[3...]))
            #expect(digest.finalize() == algorithm.hash(data))
            // finalize resets: the next hash starts from nothing.
            #expect(digest.finalize() == algorithm.hash([]))
            #expect(algorithm.hash(data).count == algorithm.digestSize)
        }
    }

    @Test func hmacRFC4231() {
        let key1 = [UInt8](repeating: 0x0b, count: 20)
        let hiThere = Array("Hi There".utf8)
        #expect(
            Hex.encode(HMAC.authenticationCode(.sha256, key: key1, message: hiThere))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            Hex.encode(
                HMAC.authenticationCode(
                    .sha256, key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block is hashed first.
        #expect(
            Hex.encode(
                HMAC.authenticationCode(
                    .sha256, key: [UInt8](repeating: 0xaa, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(
            Hex.encode(HMAC.authenticationCode(.sha512, key: key1, message: hiThere))
                == "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
                + "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854")
    }

    @Test func hmacBLAKE2() {
        #expect(
            Hex.encode(
                HMAC.authenticationCode(
                    .blake2s256, key: Array("key-for-blake2s".utf8),
                    message: Array("The quick brown fox jumps over the lazy dog".utf8)))
                == "04a47177583507d24bd547d014f114b2f07ead34896932d7260c7c6ee74d4713")
        #expect(
            Hex.encode(
                HMAC.authenticationCode(
                    .blake2s256, key: [UInt8](repeating: UInt8(ascii: "k"), count: 100),
                    message: Array("long key, hashed first".utf8)))
                == "fcec00b643359b74a7e98762ef09c5d73a57be44464e214521eca249c9259dcb")
        #expect(
            Hex.encode(HMAC.authenticationCode(.blake2b512, key: Array("key".utf8), message: []))
                == "019fe04bf010b8d72772e6b46897ecf74b4878c394ff2c4d5cfa0b7cc9bbefcb"
                + "28c36de23cef03089db9c3d900468c89804f135e9fdef7ec9b3c7abe50ed33d3")
    }

    @Test func hmacStreamsAndRekeys() {
        let mac = HMAC(.blake2s256, key: Array("key-for-blake2s".utf8))
        mac.update(Array("The quick brown ".utf8))
        mac.update(Array("fox jumps over the lazy dog".utf8))
        let first = mac.finalize()
        #expect(Hex.encode(first) == "04a47177583507d24bd547d014f114b2f07ead34896932d7260c7c6ee74d4713")
        mac.update(Array("The quick brown fox jumps over the lazy dog".utf8))
        #expect(mac.finalize() == first)
    }
}
