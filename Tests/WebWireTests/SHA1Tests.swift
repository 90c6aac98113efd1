import HerdrCrypto
import Testing

/// SHA-1 lives in HerdrCrypto only for the WebSocket accept key; its known answers are checked here.
@Suite struct SHA1Tests {
    @Test func fipsAbc() {
        #expect(SHA1.hash(Array("abc".utf8)) == hex("a9993e364706816aba3e25717850c26c9cd0d89d"))
    }

    @Test func emptyAndTwoBlocks() {
        #expect(SHA1.hash([]) == hex("da39a3ee5e6b4b0d3255bfef95601890afd80709"))
        #expect(
            SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == hex("84983e441c3bd26ebaae4aa1f95129e5e54670f1"))
        #expect(SHA1.digestSize == 20)
    }
}
