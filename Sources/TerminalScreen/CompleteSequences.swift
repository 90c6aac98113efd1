/// Cuts a program's output where no escape sequence, string (OSC, DCS…) or UTF-8 character is
/// split, holding back an unfinished tail until the bytes that finish it arrive. A PTY's reads
/// cut output anywhere, and libvterm 0.1.4 takes a UTF-8 character or an OSC string split across
/// two writes for garbage (a U+FFFD, a lost title); fed whole sequences, it draws the same
/// screen however the output was cut. A tail longer than `maximumHeld` is not held (an endless
/// sequence is hostile output: libvterm bounds what it keeps of it).
///
/// It also drops a REP (`ESC [ n b`, repeat the last character) that would hang libvterm 0.1.4:
/// REP repeats the last glyph put, stepping by its width, and before any glyph, after a
/// zero-width one that combined with nothing, or after text in a character set it cannot print,
/// that width is 0 and the loop never ends (found by fuzzing). So REP
/// reaches libvterm only right after a glyph with a width in a character set it prints (ASCII,
/// UK, DEC graphics), which is how ncurses sends it (`rep`: the character, then `ESC [ n b`).
/// And it leaves out a control sequence with more than 16 arguments (`maximumSeparators`).
struct CompleteSequences {
    private enum State {
        case ground, escape, escapeIntermediate, controlSequence, string, stringEscape
    }

    static let maximumHeld = 65536
    /// A control sequence with more arguments than libvterm 0.1.4 keeps (16) overflows its
    /// array and crashes it (found by fuzzing): such a sequence is left out whole, as
    /// tmux leaves out one with more than its 24.
    static let maximumSeparators = 16

    private var state = State.ground
    /// UTF-8 continuation bytes still owed to the character in progress.
    private var owed = 0
    /// The unfinished tail held from the last call.
    private var held: [UInt8] = []
    /// The sequence in progress began in bytes already handed on: nothing of it is held.
    private var overflowed = false
    /// The last glyph put has a width (REP is safe); false before any, and after a zero-width
    /// character libvterm put on its own.
    private var repeatable = false
    /// The byte before was a glyph: a zero-width character now combines with it.
    private var afterGlyph = false
    /// The escape sequence in progress came right after a glyph.
    private var escapeAfterGlyph = false
    /// A character set libvterm may not print with was designated (ESC ( X with X not A, B, 0).
    private var strangeCharset = false
    private var intermediate: UInt8 = 0
    /// The UTF-8 character in progress.
    private var scalar: UInt32 = 0
    /// Where the escape sequence in progress began, and whether it is a plain `ESC [ digits ;`.
    private var escapeStart = 0
    private var plainParameters = false
    /// The `;` and `:` of the control sequence in progress.
    private var separators = 0
    /// Byte ranges of `held` to leave out (REPs that would hang).
    private var dropped: [Range<Int>] = []

    /// The bytes to hand on now: what was held, then `bytes`, less a new unfinished tail. A tail
    /// that grows a byte at a time is appended to, never copied again (no quadratic cost).
    mutating func take(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        let offset = held.count
        held.append(contentsOf: bytes)
        // Where the unfinished part begins (what was held is part of it).
        var start: Int? = offset == 0 ? nil : 0
        dropped = []
        for index in offset..<held.count {
            if step(held[index], at: index) {
                // What began before and is cut short by this byte (a lead byte without its
                // continuation, an escape cut by another) is settled by libvterm only when it
                // reads this byte: they go together.
                if start == nil { start = index }
                overflowed = false
            } else if state == .ground && owed == 0 {
                start = nil
                overflowed = false
            }
        }
        guard let start, !overflowed, held.count - start <= Self.maximumHeld else {
            if state != .ground || owed > 0 { overflowed = true }
            defer {
                held = []
                escapeStart = -1
            }
            return without(dropped, held[...])
        }
        if start == 0 { return [] }
        let ready = without(dropped, held[..<start])
        held.removeFirst(start)
        // Indices of `held` now count from the tail kept.
        escapeStart -= start
        return ready
    }

    /// `bytes` less the ranges `drop` (each wholly inside or outside it: a REP ends complete).
    private func without(_ drop: [Range<Int>], _ bytes: ArraySlice<UInt8>) -> [UInt8] {
        guard !drop.isEmpty else { return Array(bytes) }
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var from = bytes.startIndex
        for range in drop where range.upperBound <= bytes.endIndex {
            kept += bytes[from..<range.lowerBound]
            from = range.upperBound
        }
        kept += bytes[from...]
        return kept
    }

    /// Whether libvterm (its wcwidth) gives `value` no width: combining marks, format
    /// characters, Hangul's medial vowels and the zero-width space; a C1 control has none either.
    static func hasNoWidth(_ value: UInt32) -> Bool {
        if (0x80...0x9F).contains(value) || (0x1160...0x11FF).contains(value) || value == 0x200B { return true }
        guard value != 0xAD, let scalar = Unicode.Scalar(value) else { return false }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return true
        default: return false
        }
    }

    /// Advances over one byte; true when it begins an unfinished part (an escape or a UTF-8
    /// lead byte).
    private mutating func step(_ byte: UInt8, at index: Int) -> Bool {
        switch state {
        case .ground:
            if byte == 0x1B {
                owed = 0
                escapeAfterGlyph = afterGlyph
                afterGlyph = false
                state = .escape
                escapeStart = index
                return true
            }
            if (0x80...0xBF).contains(byte), owed > 0 {
                owed -= 1
                scalar = scalar << 6 | UInt32(byte & 0x3F)
                if owed == 0 { put(scalar) }
                return false
            }
            switch byte {
            case 0xC2...0xDF:
                owed = 1
                scalar = UInt32(byte & 0x1F)
            case 0xE0...0xEF:
                owed = 2
                scalar = UInt32(byte & 0x0F)
            case 0xF0...0xF4:
                owed = 3
                scalar = UInt32(byte & 0x07)
            default:
                owed = 0
                if (0x20...0x7E).contains(byte) {
                    repeatable = true
                    afterGlyph = true
                } else {
                    afterGlyph = false
                }
                return false
            }
            return true
        case .escape:
            switch byte {
            case 0x5B:
                state = .controlSequence
                plainParameters = true
                separators = 0
            case 0x5D, 0x50, 0x5F, 0x5E, 0x58: state = .string
            case 0x20...0x2F:
                state = .escapeIntermediate
                intermediate = byte
            case 0x30...0x7E, 0x18, 0x1A: state = .ground
            case 0x1B:
                escapeStart = index
                return true
            default: break
            }
        case .escapeIntermediate:
            switch byte {
            case 0x30...0x7E:
                if (0x28...0x2F).contains(intermediate) { strangeCharset = ![0x41, 0x42, 0x30].contains(byte) }
                state = .ground
            case 0x18, 0x1A: state = .ground
            case 0x1B:
                state = .escape
                escapeStart = index
                return true
            default: break
            }
        case .controlSequence:
            switch byte {
            case 0x40...0x7E where separators >= Self.maximumSeparators,
                0x62 where plainParameters && !(repeatable && escapeAfterGlyph && !strangeCharset):
                // A sequence whose start was handed on already (held no longer) is cancelled
                // by a CAN in place of the rest of it.
                if escapeStart < 0 { held[index] = 0x18 }
                dropped.append(max(0, escapeStart)..<(escapeStart < 0 ? index : index + 1))
                state = .ground
            case 0x40...0x7E, 0x18, 0x1A: state = .ground
            case 0x3A, 0x3B:
                separators += 1
                if byte == 0x3A { plainParameters = false }
            case 0x1B:
                state = .escape
                escapeStart = index
                return true
            // Digits, and the C0 controls a terminal carries out inside a sequence and goes on.
            case 0x30...0x39, 0x00...0x1F: break
            default: plainParameters = false
            }
        case .string:
            switch byte {
            case 0x07, 0x18, 0x1A: state = .ground
            case 0x1B: state = .stringEscape
            default: break
            }
        case .stringEscape:
            // ESC \ ends the string; any other ESC ends it too and begins a new escape, which
            // stays held from the string's start.
            state = .escape
            escapeStart = index - 1
            if byte == 0x5C { state = .ground } else { _ = step(byte, at: index) }
        }
        return false
    }

    /// A whole UTF-8 character in the ground state: a glyph for libvterm.
    private mutating func put(_ value: UInt32) {
        if Self.hasNoWidth(value) {
            // Combined with the glyph before it keeps that glyph's width; alone it has none.
            repeatable = repeatable && afterGlyph && !(0x80...0x9F).contains(value)
        } else {
            repeatable = true
        }
        afterGlyph = !(0x80...0x9F).contains(value)
    }
}
