import HerdrCrypto
import Testing

@Suite struct MiscTests {
    @Test func secureRandom() {
        let a = SecureRandom.bytes(32)
        let b = SecureRandom.bytes(32)
        #expect(a.count == 32)
        #expect(a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
    }

    @Test func constantTimeEqual() {
        #expect(ConstantTime.equal([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equal([1, 2, 3], [1, 2]))
        #expect(ConstantTime.equal([], []))
    }

    @Test func hex() {
        #expect(Hex.encode([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.decode("000FA0ff") == [0x00, 0x0f, 0xa0, 0xff])
        #expect(Hex.decode("00 0f\n") == [0x00, 0x0f])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}
