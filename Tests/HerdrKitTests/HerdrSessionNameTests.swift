import TestSupport
import Testing

@testable import HerdrKit

@Suite struct HerdrSessionNameTests {
    @Test(arguments: [
        "default", "a", "A", "0", "work", "herdr-ios-test", "a.b_c-D9", "...", ".a", "a.", "-x", "_", "..a",
        String(repeating: "x", count: 64),
    ])
    func valid(name: String) {
        #expect(HerdrSessionName.isValid(name))
    }

    @Test(arguments: [
        "", ".", "..", String(repeating: "x", count: 65), "a b", " a", "a/b", "a\\b", "a:b", "a'b", "a\"b",
        "$(x)", "`x`", "a;b", "a\nb", "a\tb", "a\u{0}b", "é", "ä-b", "名前", "a\u{200B}b", "emoji😀", "+",
    ])
    func invalid(name: String) {
        #expect(!HerdrSessionName.isValid(name))
    }

    @Test func limitIsCountedInBytesNotCharacters() {
        #expect(HerdrSessionName.maxBytes == 64)
        // 32 two-byte characters are 64 bytes, but non-ASCII is never allowed anyway.
        #expect(!HerdrSessionName.isValid(String(repeating: "é", count: 32)))
        #expect(HerdrSessionName.isValid(String(repeating: "ab", count: 32)))
        #expect(!HerdrSessionName.isValid(String(repeating: "ab", count: 32) + "c"))
    }
}
