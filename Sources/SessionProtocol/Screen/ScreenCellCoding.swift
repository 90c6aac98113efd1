import ScreenModel

/// How cells cross the channel, in `screen` and `scrollback` messages (docs/companion.md, "Screen
/// sessions"): runs of cells of one style, each cell a byte holding its width and the length of
/// its text, then the text.
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
            out.u16(end - run.start)
            for cell in cells[run.start..<end] {
                let text = SessionMessage.utf8(cell.text, limit: maximumCellText)
                out.u8(min(cell.width, 2) << 6 | UInt8(text.count))
                out.bytes += text
            }
        }
    }

    /// The cells `write` wrote, at most `limit` of them; throws for anything out of bounds.
    static func read(from reader: inout SessionMessage.Reader, limit: Int) throws(SessionMessageError) -> [ScreenCell] {
        let runs = Int(try reader.u16())
        var cells: [ScreenCell] = []
        for _ in 0..<runs {
            let style = try readStyle(from: &reader)
            // One encoding for each row: a style changes from one run to the next.
            guard style != cells.last?.style else { throw SessionMessageError("two runs of one style side by side") }
            let count = Int(try reader.u16())
            guard count > 0, cells.count + count <= limit else {
                throw SessionMessageError("a row of more than \(limit) cells, or an empty run")
            }
            for _ in 0..<count {
                let head = try reader.u8()
                let width = head >> 6
                let length = Int(head & 0x3F)
                guard width <= 2, length <= maximumCellText else {
                    throw SessionMessageError("a cell of width \(width) with \(length) bytes of text")
                }
                cells.append(ScreenCell(text: try reader.text(length: length), width: width, style: style))
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
