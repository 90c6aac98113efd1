/// Host patterns as OpenSSH's match.c `match_pattern` reads them: `*` is any run of bytes, `?`
/// one byte, anything else itself, compared byte for byte and case-sensitively (ssh matches
/// `Host` lines against the alias as typed; it lowercases only the hostname it connects to).
enum SSHHostPattern {
    /// Whether `pattern` matches all of `text`. Iterative with one backtrack point rather than
    /// match.c's recursion, which takes exponential time on patterns like `*a*a*a*a*b`; the
    /// language is the same, so the answers are.
    static func matches(_ text: [UInt8], _ pattern: [UInt8]) -> Bool {
        let star = UInt8(ascii: "*")
        let any = UInt8(ascii: "?")
        var textIndex = 0
        var patternIndex = 0
        var starIndex: Int?
        var resume = 0
        while textIndex < text.count {
            if patternIndex < pattern.count, pattern[patternIndex] == star {
                starIndex = patternIndex
                resume = textIndex
                patternIndex += 1
            } else if patternIndex < pattern.count,
                pattern[patternIndex] == any || pattern[patternIndex] == text[textIndex]
            {
                textIndex += 1
                patternIndex += 1
            } else if let star = starIndex {
                patternIndex = star + 1
                resume += 1
                textIndex = resume
            } else {
                return false
            }
        }
        while patternIndex < pattern.count, pattern[patternIndex] == star { patternIndex += 1 }
        return patternIndex == pattern.count
    }

    /// What one `Host` line says for `host`, evaluated in order as readconf.c does.
    enum Verdict: Equatable {
        /// The block applies.
        case matches
        /// The block does not apply (no pattern matched, or a negated one did).
        case doesNotMatch
        /// A pattern is empty; ssh refuses the line once it gets that far.
        case emptyPattern
    }

    /// The verdict of a Host line with `patterns` for `host`. A negated pattern (`!p`) that
    /// matches rejects the block at once, whatever else matched; later patterns are then not
    /// even looked at, so an empty one after it goes unnoticed, as in ssh. With `neverMatch`
    /// (a file included from a block that does not apply) ssh looks only at the first pattern.
    static func evaluate(patterns: [[UInt8]], host: [UInt8], neverMatch: Bool = false) -> Verdict {
        var matched = false
        for pattern in patterns {
            if pattern.isEmpty { return .emptyPattern }
            if neverMatch { return .doesNotMatch }
            let negated = pattern.first == UInt8(ascii: "!")
            if matches(host, negated ? Array(pattern.dropFirst()) : pattern) {
                if negated { return .doesNotMatch }
                matched = true
            }
        }
        return matched ? .matches : .doesNotMatch
    }

    /// A pattern that names one host: no wildcard, no negation.
    static func isConcrete(_ pattern: [UInt8]) -> Bool {
        !pattern.isEmpty && pattern.first != UInt8(ascii: "!")
            && !pattern.contains(UInt8(ascii: "*")) && !pattern.contains(UInt8(ascii: "?"))
    }
}
