/// Checks UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF) a piece at a
/// time, for text that is forwarded as it arrives and never assembled: a character may straddle
/// pieces, frames and fragments.
struct UTF8StreamValidator {
    /// Continuation bytes still expected for the character in progress.
    private var needed = 0
    /// The range the next continuation byte must fall in (narrower right after E0, ED, F0, F4).
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// True between characters: a message may end here.
    var isAtCharacterBoundary: Bool { needed == 0 }

    /// Feeds `bytes`; false at the first byte that cannot continue valid UTF-8 (the state is then
    /// meaningless: the message is refused).
    mutating func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        for byte in bytes {
            if needed == 0 {
                if byte < 0x80 { continue }
                switch byte {
                case 0xC2...0xDF: begin(1, 0x80, 0xBF)
                case 0xE0: begin(2, 0xA0, 0xBF)  // no overlong three-byte forms
                case 0xE1...0xEC, 0xEE...0xEF: begin(2, 0x80, 0xBF)
                case 0xED: begin(2, 0x80, 0x9F)  // no surrogates
                case 0xF0: begin(3, 0x90, 0xBF)  // no overlong four-byte forms
                case 0xF1...0xF3: begin(3, 0x80, 0xBF)
                case 0xF4: begin(3, 0x80, 0x8F)  // nothing above U+10FFFF
                default: return false
                }
            } else {
                guard byte >= lower && byte <= upper else { return false }
                lower = 0x80
                upper = 0xBF
                needed -= 1
            }
        }
        return true
    }

    private mutating func begin(_ continuation: Int, _ low: UInt8, _ high: UInt8) {
        needed = continuation
        lower = low
        upper = high
    }
}
