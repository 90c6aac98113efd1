import ScreenModel

/// One `screen` message (0x11): a part of numbered screen state `state`, as the change from state
/// `base` (0: from a blank screen, the whole screen). A state too large for one message spans
/// several, in order, each carrying the same header; the last has `isLastPart`. The device
/// applies a part's rows as they come and acknowledges the state after its last part.
public struct ScreenUpdate: Hashable, Sendable {
    /// Cells of a row from column `column`. The cells after them, to the screen's width, are blank
    /// in the plain style, or, when `keepsRest`, stay as they were (a change within a row, as
    /// mosh's client redraws only the cells that changed).
    public struct Row: Hashable, Sendable {
        public var index: Int
        public var column: Int
        public var cells: [ScreenCell]
        public var keepsRest: Bool

        public init(index: Int, column: Int = 0, cells: [ScreenCell], keepsRest: Bool = false) {
            self.index = index
            self.column = column
            self.cells = cells
            self.keepsRest = keepsRest
        }

        /// The column after its last cell.
        public var end: Int { column + cells.count }

        /// The top bit of the column's u16: the cells after stay as they were.
        static let keepsRestBit = 0x8000
    }

    public var stream: UInt32
    /// From 1, one more for every state the session sends.
    public var state: UInt64
    /// The state this one changes: the last the computer sent on this connection, or 0.
    public var base: UInt64
    /// The input bytes the program had been given (at least 50 ms) before the screen was taken:
    /// a device's predicted echo of bytes up to here is confirmed or refuted by this screen.
    public var inputBytes: UInt64
    public var isLastPart: Bool
    public var columns: Int
    public var rows: Int
    public var cursor: TerminalScreen.Cursor
    public var modes: ScreenModes
    /// Bells rung since the session started (wrapping): a device rings once when it grows.
    public var bells: UInt32
    /// Rows the whole screen moved up before `lines` apply (0 in a whole state); the rows that
    /// come in at the bottom are blank until `lines` says otherwise.
    public var scroll: Int
    /// The window title, when it changed (always in a whole state's first part); nil: unchanged.
    public var title: String?
    /// The rows that changed, in increasing order.
    public var lines: [Row]

    public init(
        stream: UInt32, state: UInt64, base: UInt64, inputBytes: UInt64, isLastPart: Bool, columns: Int, rows: Int,
        cursor: TerminalScreen.Cursor, modes: ScreenModes, bells: UInt32, scroll: Int, title: String?, lines: [Row]
    ) {
        self.stream = stream
        self.state = state
        self.base = base
        self.inputBytes = inputBytes
        self.isLastPart = isLastPart
        self.columns = columns
        self.rows = rows
        self.cursor = cursor
        self.modes = modes
        self.bells = bells
        self.scroll = scroll
        self.title = title
        self.lines = lines
    }

    /// The bytes of a message before its rows: type, stream, state, base, input, flags, size,
    /// cursor, modes, mouse, bells, scroll, the title's length and the row count.
    static let headerLength = 1 + 4 + 8 + 8 + 8 + 1 + 4 + 4 + 1 + 1 + 4 + 2 + 2 + 2

    private enum Flag {
        static let lastPart: UInt8 = 1 << 0
        static let title: UInt8 = 1 << 1
    }

    private enum ModeBit {
        static let cursorVisible: UInt8 = 1 << 0
        static let applicationCursorKeys: UInt8 = 1 << 1
        static let bracketedPaste: UInt8 = 1 << 2
        static let alternateScreen: UInt8 = 1 << 3
        static let reverseVideo: UInt8 = 1 << 4
        static let all: UInt8 = 0x1F
    }

    func write(into out: inout SessionMessage.Writer) {
        out.u64(state)
        out.u64(base)
        out.u64(inputBytes)
        out.u8((isLastPart ? Flag.lastPart : 0) | (title != nil ? Flag.title : 0))
        out.u16(columns)
        out.u16(rows)
        out.u16(cursor.row)
        out.u16(cursor.column)
        var modeBits: UInt8 = cursor.visible ? ModeBit.cursorVisible : 0
        if modes.applicationCursorKeys { modeBits |= ModeBit.applicationCursorKeys }
        if modes.bracketedPaste { modeBits |= ModeBit.bracketedPaste }
        if modes.alternateScreen { modeBits |= ModeBit.alternateScreen }
        if modes.reverseVideo { modeBits |= ModeBit.reverseVideo }
        out.u8(modeBits)
        out.u8(modes.mouse.rawValue)
        out.u32(bells)
        out.u16(scroll)
        let title = SessionMessage.utf8(title ?? "", limit: SessionMessage.maximumText)
        out.u16(title.count)
        out.bytes += title
        out.u16(lines.count)
        for line in lines {
            out.u16(line.index)
            out.u16(line.column | (line.keepsRest ? Row.keepsRestBit : 0))
            ScreenCellCoding.write(line.cells, into: &out)
        }
    }

    init(stream: UInt32, reading reader: inout SessionMessage.Reader) throws(SessionMessageError) {
        self.stream = stream
        state = try reader.u64()
        base = try reader.u64()
        guard state > 0, base < state else {
            throw SessionMessageError("screen state \(state) changing state \(base) (states count from 1, up)")
        }
        inputBytes = try reader.u64()
        let flags = try reader.u8()
        guard flags & ~(Flag.lastPart | Flag.title) == 0 else {
            throw SessionMessageError("screen flags \(flags) with unknown bits")
        }
        isLastPart = flags & Flag.lastPart != 0
        columns = Int(try reader.u16())
        rows = Int(try reader.u16())
        guard (1...SessionMessage.maximumCells).contains(columns), (1...SessionMessage.maximumCells).contains(rows)
        else {
            throw SessionMessageError("a screen of \(columns)×\(rows) cells (1 to \(SessionMessage.maximumCells) each)")
        }
        let cursorRow = Int(try reader.u16())
        let cursorColumn = Int(try reader.u16())
        guard cursorRow < rows, cursorColumn < columns else {
            throw SessionMessageError(
                "a cursor at row \(cursorRow), column \(cursorColumn) of a \(columns)×\(rows) screen")
        }
        let modeBits = try reader.u8()
        guard modeBits & ~ModeBit.all == 0 else {
            throw SessionMessageError("screen modes \(modeBits) with unknown bits")
        }
        cursor = TerminalScreen.Cursor(
            row: cursorRow, column: cursorColumn, visible: modeBits & ModeBit.cursorVisible != 0)
        modes = ScreenModes()
        modes.applicationCursorKeys = modeBits & ModeBit.applicationCursorKeys != 0
        modes.bracketedPaste = modeBits & ModeBit.bracketedPaste != 0
        modes.alternateScreen = modeBits & ModeBit.alternateScreen != 0
        modes.reverseVideo = modeBits & ModeBit.reverseVideo != 0
        let mouse = try reader.u8()
        guard let mouseMode = ScreenModes.Mouse(rawValue: mouse) else {
            throw SessionMessageError("a mouse mode of \(mouse) (0 to 3)")
        }
        modes.mouse = mouseMode
        bells = try reader.u32()
        scroll = Int(try reader.u16())
        guard scroll < rows, base > 0 || scroll == 0 else {
            throw SessionMessageError(
                "a scroll of \(scroll) rows on a screen of \(rows) (state \(state), base \(base))")
        }
        let titleLength = Int(try reader.u16())
        guard titleLength <= SessionMessage.maximumText else {
            throw SessionMessageError("a title of \(titleLength) bytes (at most \(SessionMessage.maximumText))")
        }
        let titleText = try reader.text(length: titleLength)
        title = flags & Flag.title != 0 ? titleText : nil
        guard title != nil || titleLength == 0 else { throw SessionMessageError("title bytes without the title flag") }
        let count = Int(try reader.u16())
        // A row may come in parts, each of at least 6 bytes (index, column, run count).
        guard count <= SessionMessage.maximumLength / 6 else {
            throw SessionMessageError("\(count) row entries in one message")
        }
        lines = []
        lines.reserveCapacity(count)
        for _ in 0..<count {
            let index = Int(try reader.u16())
            let word = Int(try reader.u16())
            let column = word & ~Row.keepsRestBit
            guard index < rows, column < columns else {
                throw SessionMessageError("row \(index) from column \(column) of a \(columns)×\(rows) screen")
            }
            // In order: a later part of the same row starts after an earlier one that kept the rest.
            if let last = lines.last,
                index < last.index || (index == last.index && !(last.keepsRest && column >= last.end))
            {
                throw SessionMessageError("row \(index) from column \(column) out of order or overlapping")
            }
            let cells = try ScreenCellCoding.read(from: &reader, limit: columns - column)
            lines.append(Row(index: index, column: column, cells: cells, keepsRest: word & Row.keepsRestBit != 0))
        }
    }
}
