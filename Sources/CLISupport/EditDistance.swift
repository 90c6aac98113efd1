/// Close-match suggestions for mistyped option and subcommand names.
enum EditDistance {
    /// The optimal-string-alignment distance: insertions, deletions, substitutions and swaps of two
    /// adjacent characters each cost 1 (so `prot` is 1 away from `port`, the commonest typo).
    static func distance(_ lhs: String, _ rhs: String) -> Int {
        let a = Array(lhs)
        let b = Array(rhs)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var best = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    best = min(best, table[i - 2][j - 2] + 1)
                }
                table[i][j] = best
            }
        }
        return table[a.count][b.count]
    }

    /// The candidate closest to `word`, if it is close enough to be a plausible typo: at most 2
    /// edits, and fewer edits than the word has characters (so `x` never suggests `port`).
    /// Ties go to the earlier candidate.
    static func closest(to word: String, among candidates: [String]) -> String? {
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let distance = distance(word, candidate)
            guard distance <= 2, distance < word.count, distance < candidate.count else { continue }
            if best == nil || distance < best!.distance { best = (candidate, distance) }
        }
        return best?.candidate
    }
}
