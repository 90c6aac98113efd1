import HerdrCrypto

/// What the recovery phases' session printed (`L000001\r\n`, `L000002\r\n`, … every tick, and
/// each keystroke echoed among them) checked against what its PTY produced: every line exactly
/// once and in order, every keystroke exactly once.
struct NumberedLines {
    /// The session command: numbered lines every `tick` seconds, keystrokes echoed, all of it
    /// ended after `limit` seconds whatever happens (a session left behind stops by itself).
    static func command(tick: Double, limit: Int) -> String {
        "exec timeout \(limit) sh -c 'stty raw -echo; (i=0; while :; do i=$((i+1)); printf \"L%06d\\r\\n\" $i; sleep \(tick); done) & exec cat'"
    }

    /// The byte typed while a path is dead: never part of a line.
    static let keystroke = UInt8(ascii: "k")

    /// Complete lines seen.
    let lines: Int
    /// Bytes that are neither a line's nor the keystroke's (none expected).
    let stray: Int
    /// Numbers missing before the last line seen, and lines seen again.
    let lost: Int
    let repeated: Int
    /// Keystrokes echoed.
    let keystrokes: Int
    /// The first few numbers missing, and seen again.
    let missing: [Int]
    let again: [Int]
    /// Whether the SHA-256 of what was printed (keystrokes taken out, up to the last complete
    /// line) is that of lines 1 to the last one, as the PTY wrote them.
    let digestsMatch: Bool

    init(_ printed: [UInt8]) {
        var text: [UInt8] = []
        var keystrokes = 0
        var stray = 0
        for byte in printed {
            if byte == Self.keystroke {
                keystrokes += 1
            } else if Self.lineBytes.contains(byte) {
                text.append(byte)
            } else {
                stray += 1
            }
        }
        self.keystrokes = keystrokes
        self.stray = stray
        // Up to the last complete line: the session may be cut anywhere.
        let complete: ArraySlice<UInt8>
        if let last = text.lastIndex(of: 10) { complete = text[...last] } else { complete = [] }
        var numbers: [Int] = []
        for line in complete.split(separator: 10) {
            let digits = line.drop { $0 == UInt8(ascii: "L") }.prefix { (48...57).contains($0) }
            numbers.append(Int(String(decoding: digits, as: UTF8.self)) ?? -1)
        }
        lines = numbers.count
        var seen = Set<Int>()
        var again: [Int] = []
        for number in numbers where !seen.insert(number).inserted { again.append(number) }
        repeated = again.count
        self.again = Array(again.prefix(5))
        let highest = numbers.max() ?? 0
        let missing = highest == 0 ? [] : (1...highest).filter { !seen.contains($0) }
        lost = missing.count
        self.missing = Array(missing.prefix(5))
        var expected: [UInt8] = []
        if highest > 0 {
            for number in 1...highest {
                expected += Array(
                    "L\(String(repeating: "0", count: max(0, 6 - String(number).count)))\(number)\r\n".utf8)
            }
        }
        digestsMatch = SHA256.hash(Array(complete)) == SHA256.hash(expected)
    }

    private static let lineBytes = Set(Array("L0123456789\r\n".utf8))

    var isExact: Bool { lost == 0 && repeated == 0 && stray == 0 && digestsMatch }
}
