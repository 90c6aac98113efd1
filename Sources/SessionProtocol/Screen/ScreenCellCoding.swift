import ScreenModel

/// How cells cross the channel, in `screen` and `scrollback` messages (docs/companion.md, "Screen
/// sessions"): runs of cells of one style. A run whose cells are each one character or empty, of
/// width 1 (most text), is its text (an empty cell a NUL); any other run is each cell as a byte
/// holding its width and the length of its text, then the text.
enum ScreenCellCoding {
    /// The longest text of one cell: libvterm keeps at most 6 code points a cell (24 bytes).
    static let maximumCellText = 32
    /// The most cells of one row (the session protocol's bound on columns).
    static let maximumCells = SessionMessage.maximumCells

    /// The bytes of `cells` as runs, at most the bytes `bytes(of:)` counts.
    static func write(_ cells: [ScreenCell], into out: inout SessionMessage.Writer) {
        var runs: [(style: CellStyle, start: Int)] = []
        for (index, cell) in cells.enumerated() where runs.last?.style != cell.style {
            runs.append((cell.style, index))
        }
        out.u16(runs.count)
        for (number, run) in runs.enumerated() {
            let end = number + 1 < runs.count ? runs[number + 1].start : cells.count
            write(run.style, into: &out)
            let run = cells[run.start..<end]
            if run.allSatisfy(isCharacter) {
                out.u16(run.count | textRunBit)
                var text: [UInt8] = []
                for cell in run { text += cell.text.isEmpty ? [0] : Array(cell.text.utf8) }
                out.u16(text.count)
                out.bytes += text
                continue
            }
            out.u16(run.count)
            for cell in run {
                let text = SessionMessage.utf8(cell.text, limit: maximumCellText)
                out.u8(min(cell.width, 2) << 6 | UInt8(text.count))
                out.bytes += text
            }
        }
    }

    /// The top bit of a run's cell count: the run is its text.
    static let textRunBit = 0x8000

    /// Whether `cell` goes in a text run: width 1, and one character (not NUL) or none.
    static func isCharacter(_ cell: ScreenCell) -> Bool {
        guard cell.width == 1 else { return false }
        var scalars = cell.text.unicodeScalars.makeIterator()
        guard let first = scalars.next() else { return true }
        return first.value != 0 && scalars.next() == nil
    }

    /// The cells `write` wrote, at most `limit` of them; throws for anything out of bounds.
    static func read(from reader: inout SessionMessage.Reader, limit: Int) throws(SessionMessageError) -> [ScreenCell] {
        let runs = Int(try reader.u16())
        var cells: [ScreenCell] = []
        for _ in 0..<runs {
            let style = try readStyle(from: &reader)
            // One encoding for each row: a style changes from one run to the next.
            guard style != cells.last?.style else { throw SessionMessageError("two runs of one style side by side") }
            let word = Int(try reader.u16())
            let count = word & ~textRunBit
            guard count > 0, cells.count + count <= limit else {
                throw SessionMessageError("a row of more than \(limit) cells, or an empty run")
            }
            if word & textRunBit != 0 {
                let length = Int(try reader.u16())
                guard length <= count * 4 else {
                    throw SessionMessageError("\(length) bytes of text for \(count) cells")
                }
                let scalars = try reader.text(length: length).unicodeScalars
                guard scalars.count == count else {
                    throw SessionMessageError("a text run of \(count) cells with \(scalars.count) characters")
                }
                for scalar in scalars {
                    cells.append(ScreenCell(text: scalar.value == 0 ? "" : String(scalar), width: 1, style: style))
                }
                continue
            }
            let first = cells.count
            for _ in 0..<count {
                let head = try reader.u8()
                let width = head >> 6
                let length = Int(head & 0x3F)
                guard width <= 2, length <= maximumCellText else {
                    throw SessionMessageError("a cell of width \(width) with \(length) bytes of text")
                }
                cells.append(ScreenCell(text: try reader.text(length: length), width: width, style: style))
            }
            // One encoding for each row: a run that could be a text run is one.
            guard !cells[first...].allSatisfy(isCharacter) else {
                throw SessionMessageError("a run of characters not sent as its text")
            }
        }
        return cells
    }

    private static func write(_ style: CellStyle, into out: inout SessionMessage.Writer) {
        write(style.foreground, into: &out)
        write(style.background, into: &out)
        out.u8(style.flags.rawValue)
        out.u8(style.underline.rawValue)
    }

    private static func write(_ color: TerminalColor, into out: inout SessionMessage.Writer) {
        switch color {
        case .default: out.u8(0)
        case .indexed(let index):
            out.u8(1)
            out.u8(index)
        case .rgb(let red, let green, let blue):
            out.u8(2)
            out.bytes += [red, green, blue]
        }
    }

    private static func readStyle(from reader: inout SessionMessage.Reader) throws(SessionMessageError) -> CellStyle {
        let foreground = try readColor(from: &reader)
        let background = try readColor(from: &reader)
        let flags = try reader.u8()
        guard flags & ~allFlags == 0 else { throw SessionMessageError("cell attributes \(flags) with unknown bits") }
        let raw = try reader.u8()
        guard let underline = CellStyle.Underline(rawValue: raw) else {
            throw SessionMessageError("an underline of kind \(raw) (0 to 3)")
        }
        return CellStyle(
            foreground: foreground, background: background, flags: CellStyle.Flags(rawValue: flags),
            underline: underline)
    }

    private static let allFlags = CellStyle.Flags([.bold, .italic, .blink, .reverse, .strike]).rawValue

    private static func readColor(from reader: inout SessionMessage.Reader) throws(SessionMessageError) -> TerminalColor
    {
        switch try reader.u8() {
        case 0: return .default
        case 1: return .indexed(try reader.u8())
        case 2: return .rgb(red: try reader.u8(), green: try reader.u8(), blue: try reader.u8())
        case let tag: throw SessionMessageError("a colour of kind \(tag) (0 to 2)")
        }
    }
}
