/// A key on `watch`'s board.
enum BoardKey: Equatable, Sendable {
    case up, down, enter, quit, refresh
    case digit(Int)
    /// Anything else (ignored).
    case other
}

/// Turns typed bytes into board keys: arrows (`ESC [ A`, `ESC O A`…), `j`/`k`, digits, Enter,
/// `q`, Ctrl-C and Ctrl-D (quit), Ctrl-L (redraw). An escape sequence split across reads is put
/// together. Pure.
struct BoardKeyDecoder: Sendable {
    /// Bytes of an escape sequence not finished yet (at most `maximumSequence`).
    private var pending: [UInt8] = []
    static let maximumSequence = 16

    mutating func feed(_ bytes: [UInt8]) -> [BoardKey] {
        var keys: [BoardKey] = []
        for byte in bytes {
            if !pending.isEmpty {
                pending.append(byte)
                if let key = sequence() {
                    keys.append(key)
                    pending.removeAll()
                } else if pending.count >= Self.maximumSequence {
                    keys.append(.other)
                    pending.removeAll()
                }
                continue
            }
            switch byte {
            case 0x1B: pending = [byte]
            case UInt8(ascii: "k"): keys.append(.up)
            case UInt8(ascii: "j"): keys.append(.down)
            case UInt8(ascii: "q"), 0x03, 0x04: keys.append(.quit)
            case 0x0D, 0x0A: keys.append(.enter)
            case 0x0C: keys.append(.refresh)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): keys.append(.digit(Int(byte - UInt8(ascii: "0"))))
            default: keys.append(.other)
            }
        }
        return keys
    }

    /// The key `pending` makes, once it is a whole sequence.
    private func sequence() -> BoardKey? {
        guard pending.count >= 2 else { return nil }
        switch pending[1] {
        case UInt8(ascii: "O"):
            guard pending.count == 3 else { return nil }
            return Self.arrow(pending[2])
        case UInt8(ascii: "["):
            // CSI: parameters, then a final byte 0x40-0x7E.
            guard let last = pending.last, pending.count >= 3, (0x40...0x7E).contains(last) else { return nil }
            return pending.count == 3 ? Self.arrow(last) : .other
        default:
            // ESC and another key (Alt+key): not a board key.
            return .other
        }
    }

    private static func arrow(_ byte: UInt8) -> BoardKey {
        switch byte {
        case UInt8(ascii: "A"): .up
        case UInt8(ascii: "B"): .down
        default: .other
        }
    }
}
