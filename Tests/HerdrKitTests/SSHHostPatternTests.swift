import Testing

@testable import HerdrKit

@Suite struct SSHHostPatternTests {
    @Test(arguments: [
        ("foo", "foo", true), ("foo", "Foo", false), ("foo", "*", true), ("", "*", true), ("", "", true),
        ("foo", "", false), ("foo", "f*", true), ("foo", "*o", true), ("foo", "f?o", true), ("fo", "f?o", false),
        ("foo.example.com", "*.example.com", true), ("example.com", "*.example.com", false), ("abc", "a**c", true),
        ("abc", "*?*?*?", true), ("ab", "*?*?*?", false), ("aXbXc", "a*b*c", true), ("acb", "a*b*c", false),
        ("a*b", "a*b", true), ("web12", "web?", false),
    ])
    func matchesAsMatchPatternDoes(text: String, pattern: String, matches: Bool) {
        #expect(SSHHostPattern.matches(Array(text.utf8), Array(pattern.utf8)) == matches)
    }

    /// match.c's recursion is exponential here; the iterative matcher is not.
    @Test func manyStarsStayCheap() {
        let text = Array(String(repeating: "a", count: 1000).utf8)
        let pattern = Array((String(repeating: "*a", count: 500) + "b").utf8)
        #expect(!SSHHostPattern.matches(text, pattern))
    }

    @Test func aHostLineIsEvaluatedInOrder() {
        func verdict(_ patterns: [String], _ host: String, neverMatch: Bool = false) -> SSHHostPattern.Verdict {
            SSHHostPattern.evaluate(
                patterns: patterns.map { Array($0.utf8) }, host: Array(host.utf8), neverMatch: neverMatch)
        }
        #expect(verdict(["a", "b"], "b") == .matches)
        #expect(verdict(["*", "!bad"], "bad") == .doesNotMatch)
        #expect(verdict(["!bad", "*"], "good") == .matches)
        #expect(verdict(["!bad"], "good") == .doesNotMatch)
        #expect(verdict(["a", ""], "z") == .emptyPattern)
        // A negated match ends the line before ssh looks at the empty pattern.
        #expect(verdict(["!z", ""], "z") == .doesNotMatch)
        #expect(verdict(["*"], "z", neverMatch: true) == .doesNotMatch)
        #expect(verdict(["", "*"], "z", neverMatch: true) == .emptyPattern)
    }

    @Test func concretePatterns() {
        #expect(SSHHostPattern.isConcrete(Array("studio".utf8)))
        for pattern in ["", "*", "web?", "!bad", "*.lan"] { #expect(!SSHHostPattern.isConcrete(Array(pattern.utf8))) }
    }
}
