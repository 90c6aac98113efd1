#if canImport(Glibc)
    import Glibc
#endif

/// The end of what a terminal session printed, kept so that a failure message can quote the host's last
/// words ("herdr: command not found") instead of just "exited with status 127".
///
/// Appending only copies bytes (the session's output path stays fast); the text is worked out when
/// ``readableLines(limit:)`` asks, approximately as a terminal would show it, without emulating a screen:
/// - Escape sequences are dropped: CSI (`ESC [` … final byte 0x40–0x7E), OSC (`ESC ]` … BEL or `ESC \`),
///   DCS/SOS/PM/APC strings (`ESC P`/`X`/`^`/`_` … `ESC \`), and other `ESC` sequences (with intermediates).
/// - CSI moves that leave the line (cursor position, up, down, next/previous line, erase display) end the
///   current line, and cursor-forward becomes spaces, because ConPTY paints screens with those instead
///   of newlines and spaces.
/// - LF ends a line and so does CRLF. A CR followed by more text on the same line is an overwrite: the
///   line restarts and keeps what was written last (`10%\r20%` reads `20%`). TAB becomes a space; other
///   C0 controls, DEL and C1 controls are dropped; invalid UTF-8 becomes U+FFFD.
/// - Lines are trimmed of trailing whitespace, and empty lines are skipped.
///
/// Output older than the kept window is still run through the escape-sequence state machine (cheaply:
/// `memchr` to the next ESC), so a window that starts inside a long sequence, such as an inline image in an
/// OSC, never shows the sequence's bytes as text. The first kept line may be the end of a longer line.
struct OutputTail: Sendable {
    /// How much output is kept, at least: the window holds between one and two times this many bytes.
    static let capacity = 8 * 1024

    private var buffer: [UInt8] = []
    /// The parser state at `buffer[0]`, from all output already forgotten.
    private var stateAtStart = Parser()

    init() {}

    /// Adds a chunk of output.
    mutating func append(_ chunk: [UInt8]) {
        buffer += chunk
        // Trimming only past twice the capacity keeps appends amortized O(chunk).
        guard buffer.count > 2 * Self.capacity else { return }
        let drop = buffer.count - Self.capacity
        buffer.withUnsafeBufferPointer { stateAtStart.skip(UnsafeBufferPointer(rebasing: $0[..<drop])) }
        buffer.removeFirst(drop)
    }

    /// Up to `limit` of the last non-empty readable lines, oldest first.
    func readableLines(limit: Int = 3) -> [String] {
        guard limit > 0 else { return [] }
        var parser = stateAtStart
        parser.startRecording()
        for byte in buffer { parser.consume(byte) }
        let lines = parser.finish().compactMap(Self.readable)
        return Array(lines.suffix(limit))
    }

    /// The line as text with control characters gone and trailing whitespace trimmed; nil when empty.
    private static func readable(_ raw: [UInt8]) -> String? {
        // A line cut by the window may start inside a UTF-8 sequence; drop the orphaned continuation bytes.
        let whole = raw.drop { $0 & 0xC0 == 0x80 }
        var scalars = String(decoding: whole, as: UTF8.self).unicodeScalars.filter { scalar in
            // C0 and DEL were dropped by the parser; UTF-8-encoded C1 controls are dropped here.
            !(0x80...0x9F).contains(scalar.value) && scalar.value >= 0x20 && scalar.value != 0x7F
        }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        guard !scalars.isEmpty else { return nil }
        var text = ""
        text.unicodeScalars.append(contentsOf: scalars)
        return text
    }

    /// Splits output into lines, removing escape sequences (ECMA-48 / DEC VT500 parser states, reduced).
    private struct Parser: Sendable {
        private enum State {
            case ground
            case escape
            case escapeIntermediate
            case csi
            case osc
            case oscEscape
            case controlString
            case controlStringEscape
        }

        /// The most spaces one cursor-forward may add.
        private static let maxCursorForward = 256

        private var state = State.ground
        private var pendingCarriageReturn = false
        // The CSI sequence in progress, followed without storing it: whether it is private or carries
        // intermediates, and its first numeric parameter (nil until a digit, capped).
        private var csiIsPlain = true
        private var csiFirstParameter: Int?
        private var csiInFirstParameter = true
        /// Off while skipping forgotten output: only the state is followed, no text is kept.
        private var recording = false
        private var lines: [[UInt8]] = []
        private var current: [UInt8] = []

        mutating func startRecording() {
            recording = true
        }

        mutating func consume(_ byte: UInt8) {
            switch state {
            case .ground:
                ground(byte)
            case .escape:
                switch byte {
                case UInt8(ascii: "["):
                    csiIsPlain = true
                    csiFirstParameter = nil
                    csiInFirstParameter = true
                    state = .csi
                case UInt8(ascii: "]"):
                    state = .osc
                case UInt8(ascii: "P"), UInt8(ascii: "X"), UInt8(ascii: "^"), UInt8(ascii: "_"):
                    state = .controlString
                case 0x20...0x2F:
                    state = .escapeIntermediate
                case 0x1B:
                    break
                case 0x30...0x7E:
                    state = .ground  // a two-byte sequence such as ESC 7, ESC =, ESC M
                default:
                    // A control or non-ASCII byte cancels the sequence and is handled as text.
                    state = .ground
                    ground(byte)
                }
            case .escapeIntermediate:
                switch byte {
                case 0x20...0x2F: break
                case 0x30...0x7E: state = .ground  // such as ESC ( B
                case 0x1B: state = .escape
                default:
                    state = .ground
                    ground(byte)
                }
            case .csi:
                switch byte {
                case 0x30...0x39:
                    if csiInFirstParameter {
                        csiFirstParameter = min((csiFirstParameter ?? 0) * 10 + Int(byte - 0x30), Self.maxCursorForward)
                    }
                case 0x3A, 0x3B:
                    csiInFirstParameter = false
                case 0x20...0x2F, 0x3C...0x3F:
                    csiIsPlain = false
                case 0x40...0x7E:
                    state = .ground
                    control(final: byte)
                case 0x1B:
                    state = .escape
                case 0x18, 0x1A:
                    state = .ground  // CAN and SUB abort a sequence
                case 0x80...0xFF:
                    state = .ground
                    ground(byte)
                default:
                    break  // other C0 controls inside CSI are ignored
                }
            case .osc:
                switch byte {
                case 0x07, 0x18, 0x1A: state = .ground
                case 0x1B: state = .oscEscape
                default: break
                }
            case .controlString:
                switch byte {
                case 0x18, 0x1A: state = .ground
                case 0x1B: state = .controlStringEscape
                default: break
                }
            case .oscEscape, .controlStringEscape:
                if byte == UInt8(ascii: "\\") {
                    state = .ground  // ST
                } else {
                    // An ESC that is not ST ends the string and starts a new sequence.
                    state = .escape
                    consume(byte)
                }
            }
        }

        /// Follows the state over output that is being forgotten, jumping over the bytes that cannot
        /// change it: text up to the next ESC, and string contents up to the next byte that can end them.
        mutating func skip(_ bytes: UnsafeBufferPointer<UInt8>) {
            guard let base = bytes.baseAddress else { return }
            let count = bytes.count
            var index = 0
            while index < count {
                let next: Int
                switch state {
                case .ground:
                    next = Self.first(0x1B, in: base, from: index, before: count)
                    skipText(UnsafeBufferPointer(start: base + index, count: next - index))
                case .osc:
                    next = Self.first(
                        0x07, in: base, from: index, before: Self.firstStringEnd(in: base, from: index, before: count))
                case .controlString:
                    next = Self.firstStringEnd(in: base, from: index, before: count)
                default:
                    next = index
                }
                guard next < count else { return }
                consume(base[next])
                index = next + 1
            }
        }

        /// The kept lines, including a final one without a newline.
        mutating func finish() -> [[UInt8]] {
            if !current.isEmpty { breakLine() }
            return lines
        }

        /// Text without ESC can only change whether a CR is pending: the last LF, CR or text byte decides.
        private mutating func skipText(_ run: UnsafeBufferPointer<UInt8>) {
            for byte in run.reversed() {
                switch byte {
                case 0x0D:
                    pendingCarriageReturn = true
                    return
                case 0x0A, 0x09, 0x20..<0x7F, 0x80...0xFF:
                    pendingCarriageReturn = false
                    return
                default:
                    continue  // other controls change nothing
                }
            }
        }

        /// The index of the first `target` in `base[start..<end]`, or `end`.
        private static func first(_ target: UInt8, in base: UnsafePointer<UInt8>, from start: Int, before end: Int)
            -> Int
        {
            guard start < end, let hit = memchr(base + start, Int32(target), end - start) else { return end }
            return UnsafeRawPointer(hit) - UnsafeRawPointer(base)
        }

        /// The first ESC, CAN or SUB (each can end a control string) in `base[start..<end]`, or `end`.
        private static func firstStringEnd(in base: UnsafePointer<UInt8>, from start: Int, before end: Int) -> Int {
            let escape = first(0x1B, in: base, from: start, before: end)
            let cancel = first(0x18, in: base, from: start, before: escape)
            return first(0x1A, in: base, from: start, before: cancel)
        }

        private mutating func ground(_ byte: UInt8) {
            switch byte {
            case 0x1B: state = .escape
            case 0x0A: breakLine()
            case 0x0D: pendingCarriageReturn = true
            case 0x09: text(UInt8(ascii: " "))
            case 0x00..<0x20, 0x7F: break
            default: text(byte)
            }
        }

        private mutating func text(_ byte: UInt8) {
            if pendingCarriageReturn {
                // CR followed by text on the same line: the new text overwrites, keep only it.
                current = []
                pendingCarriageReturn = false
            }
            if recording { current.append(byte) }
        }

        private mutating func breakLine() {
            if recording, !current.isEmpty { lines.append(current) }
            current = []
            pendingCarriageReturn = false
        }

        /// Acts on the CSI sequences that shape lines; all others are dropped.
        private mutating func control(final: UInt8) {
            // Private (`?25l`) and intermediate-carrying sequences never move the cursor across lines.
            guard csiIsPlain else { return }
            switch final {
            case UInt8(ascii: "H"), UInt8(ascii: "f"), UInt8(ascii: "d"), UInt8(ascii: "A"), UInt8(ascii: "B"),
                UInt8(ascii: "E"), UInt8(ascii: "F"), UInt8(ascii: "J"):
                breakLine()
            case UInt8(ascii: "C"):
                let count = max(csiFirstParameter ?? 1, 1)
                for _ in 0..<count { text(UInt8(ascii: " ")) }
            default:
                break
            }
        }
    }
}
