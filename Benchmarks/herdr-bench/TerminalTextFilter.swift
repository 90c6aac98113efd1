/// Tells the text a terminal program printed from its escape sequences, a byte at a time: what a
/// screen-state program such as mosh-client writes is mostly cursor moves and modes (`ESC [ ?
/// 25 l`), whose letters must not count as the echo of a keystroke.
struct TerminalTextFilter {
    private enum State {
        case text
        /// After ESC: one more byte decides the kind (CSI, OSC, or a two-byte sequence).
        case escape
        /// CSI: parameters and intermediates until a final byte in 0x40...0x7E.
        case controlSequence
        /// OSC (or DCS): a string until BEL or ESC \.
        case string
        case stringEscape
    }

    private var state = State.text

    /// Whether `byte` is text shown on the screen (printable, outside any escape sequence).
    mutating func isText(_ byte: UInt8) -> Bool {
        switch state {
        case .text:
            if byte == 0x1B {
                state = .escape
                return false
            }
            return byte >= 0x20 && byte != 0x7F
        case .escape:
            switch byte {
            case UInt8(ascii: "["): state = .controlSequence
            case UInt8(ascii: "]"), UInt8(ascii: "P"): state = .string
            // Character set designations take one more byte (ESC ( B).
            case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "#"): state = .controlSequence
            default: state = .text
            }
            return false
        case .controlSequence:
            if (0x40...0x7E).contains(byte) { state = .text }
            return false
        case .string:
            if byte == 0x07 { state = .text } else if byte == 0x1B { state = .stringEscape }
            return false
        case .stringEscape:
            state = byte == UInt8(ascii: "\\") ? .text : .string
            return false
        }
    }

    /// The text of `bytes`, the filter's state carried over from earlier calls.
    mutating func text(of bytes: some Sequence<UInt8>) -> [UInt8] {
        bytes.filter { isText($0) }
    }
}
