import CVTerm
import ScreenModel

/// One libvterm terminal: what a program's output draws, kept as cells, with the scrollback, the
/// title, the bell and the modes. A screen session's computer feeds it every byte the program
/// writes and reads screens from it.
///
/// Not thread-safe: one owner feeds and reads it (a session's I/O thread). libvterm calls back
/// into it only during `feed`, `resize` and the mode probes.
///
/// libvterm 0.1.4 (Debian 12's) is not safe against hostile output: fuzzing it found a crash (a
/// control sequence with 17 arguments) and hangs (REP in states it mishandles). `feed` leaves out
/// the cases found and understood (`CompleteSequences`), but fuzzing still finds REP hangs, so a
/// terminal fed untrusted output belongs in a process of its own that can be killed.
public final class VirtualTerminal {
    /// The bounds on what a program or a device can make it hold.
    public struct Limits: Sendable {
        /// The largest screen (a device asks for its size; libvterm holds rows × columns cells).
        public var maximumRows = 1000
        public var maximumColumns = 1000
        public var scrollbackLines = 2000
        /// Scrollback cells in all (trailing blanks are not kept): about 40 bytes each.
        public var scrollbackCells = 400_000
        /// A longer title is cut (UTF-8 bytes, at a character's boundary).
        public var titleBytes = 1024

        public init() {}
    }

    public struct SizeError: Error, CustomStringConvertible {
        public let rows: Int
        public let columns: Int
        public let limits: Limits
        public var description: String {
            "a terminal of \(columns)×\(rows) is outside 1×1 to \(limits.maximumColumns)×\(limits.maximumRows)"
        }
    }

    public let limits: Limits
    public private(set) var rows: Int
    public private(set) var columns: Int
    /// The title the program set last (OSC 0 or 2).
    public private(set) var title = ""
    /// Bells rung since the terminal was made.
    public private(set) var bells = 0
    public private(set) var scrollback: Scrollback
    /// Bumped by every change a device could see; each row remembers the version that last
    /// changed it, so a screen state can be compared with an older one row by row without
    /// reading the rows that stayed.
    public private(set) var version: UInt64 = 0
    private var rowVersions: [UInt64]

    private var cursor = TerminalScreen.Cursor(row: 0, column: 0, visible: true)
    private var alternateScreen = false
    private var reverseVideo = false
    private var mouse = ScreenModes.Mouse.none
    /// What the terminal answers the program (a cursor position report, device attributes):
    /// collected during `feed` and handed back.
    private var replies: [UInt8] = []
    /// The output's unfinished tail, held until what finishes it arrives.
    private var sequences = CompleteSequences()
    /// While a mode probe runs, what the terminal would send lands here instead.
    private var probeOutput: [UInt8]?

    private let terminal: OpaquePointer
    private let screen: OpaquePointer
    private let callbacks: UnsafeMutablePointer<VTermScreenCallbacks>

    /// A terminal of `columns` × `rows`, cleared, in UTF-8, with the alternate screen enabled.
    public init(rows: Int, columns: Int, limits: Limits = Limits()) throws {
        try Self.check(rows: rows, columns: columns, limits: limits)
        guard let terminal = vterm_new(Int32(rows), Int32(columns)) else {
            throw SizeError(rows: rows, columns: columns, limits: limits)
        }
        guard let screen = vterm_obtain_screen(terminal) else {
            vterm_free(terminal)
            throw SizeError(rows: rows, columns: columns, limits: limits)
        }
        self.limits = limits
        self.rows = rows
        self.columns = columns
        self.terminal = terminal
        self.screen = screen
        scrollback = Scrollback(maximumLines: limits.scrollbackLines, maximumCells: limits.scrollbackCells)
        rowVersions = Array(repeating: 0, count: rows)
        callbacks = .allocate(capacity: 1)
        callbacks.initialize(to: Self.screenCallbacks)
        let me = Unmanaged.passUnretained(self).toOpaque()
        vterm_set_utf8(terminal, 1)
        vterm_output_set_callback(
            terminal,
            { bytes, count, user in
                guard let bytes, let user else { return }
                VirtualTerminal.from(user).output(UnsafeRawBufferPointer(start: bytes, count: count))
            }, me)
        vterm_screen_set_callbacks(screen, callbacks, me)
        vterm_screen_set_damage_merge(screen, VTERM_DAMAGE_ROW)
        vterm_screen_enable_altscreen(screen, 1)
        vterm_screen_reset(screen, 1)
    }

    deinit {
        vterm_free(terminal)
        callbacks.deinitialize(count: 1)
        callbacks.deallocate()
    }

    /// Runs the program's output through the terminal; returns what the terminal answers the
    /// program (to be written to its PTY), usually nothing.
    @discardableResult
    public func feed(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let ready =
            bytes.withContiguousStorageIfAvailable { sequences.take($0) }
            ?? Array(bytes).withUnsafeBufferPointer { sequences.take($0) }
        ready.withUnsafeBufferPointer { feedContiguous($0) }
        vterm_screen_flush_damage(screen)
        defer { replies = [] }
        return replies
    }

    private func feedContiguous(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        var offset = 0
        // libvterm takes all it is given; the loop guards against a version that would not.
        while offset < buffer.count {
            let taken = base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                vterm_input_write(terminal, $0 + offset, buffer.count - offset)
            }
            guard taken > 0 else { break }
            offset += taken
        }
    }

    /// Resizes the screen (a device's size, or the desk's); the program is told by its PTY.
    public func resize(rows: Int, columns: Int) throws {
        try Self.check(rows: rows, columns: columns, limits: limits)
        guard rows != self.rows || columns != self.columns else { return }
        vterm_set_size(terminal, Int32(rows), Int32(columns))
        vterm_screen_flush_damage(screen)
        self.rows = rows
        self.columns = columns
        version += 1
        rowVersions = Array(repeating: version, count: rows)
    }

    /// The version that last changed row `row`.
    public func rowVersion(_ row: Int) -> UInt64 { rowVersions[row] }

    /// Row `row`'s cells, `columns` of them.
    public func line(_ row: Int) -> [ScreenCell] {
        var cells: [ScreenCell] = []
        cells.reserveCapacity(columns)
        var cell = VTermScreenCell()
        for column in 0..<columns {
            let position = VTermPos(row: Int32(row), col: Int32(column))
            var next = vterm_screen_get_cell(screen, position, &cell) != 0 ? Self.cell(cell) : .blank
            // libvterm leaves a wide character's right half the style of what was there before:
            // it is drawn as the character's, so it is the character's.
            if next.width == 0, let wide = cells.last, wide.width == 2 { next.style = wide.style }
            cells.append(next)
        }
        return cells
    }

    /// The whole screen now.
    public func snapshot() -> TerminalScreen {
        TerminalScreen(lines: (0..<rows).map(line), cursor: cursor, modes: modes, title: title)
    }

    /// The screen now, from `previous` (taken at version `version`): only the rows changed
    /// since are read again, the whole screen when the size differs.
    public func snapshot(updating previous: TerminalScreen, takenAt version: UInt64) -> TerminalScreen {
        guard previous.rows == rows, previous.columns == columns else { return snapshot() }
        var screen = previous
        for row in 0..<rows where rowVersions[row] > version { screen.lines[row] = line(row) }
        screen.cursor = cursor
        screen.modes = modes
        screen.title = title
        return screen
    }

    /// The modes now. Those libvterm keeps to itself (the cursor keys, bracketed paste) are read
    /// by asking it what it would send: an Up key and the start of a paste.
    public var modes: ScreenModes {
        var modes = ScreenModes()
        modes.applicationCursorKeys =
            probe { vterm_keyboard_key(terminal, VTERM_KEY_UP, VTERM_MOD_NONE) } == [0x1B, 0x4F, 0x41]
        modes.bracketedPaste = !probe { vterm_keyboard_start_paste(terminal) }.isEmpty
        modes.mouse = mouse
        modes.alternateScreen = alternateScreen
        modes.reverseVideo = reverseVideo
        return modes
    }

    private func probe(_ body: () -> Void) -> [UInt8] {
        probeOutput = []
        body()
        defer { probeOutput = nil }
        return probeOutput ?? []
    }

    private static func check(rows: Int, columns: Int, limits: Limits) throws {
        guard (1...limits.maximumRows).contains(rows), (1...limits.maximumColumns).contains(columns) else {
            throw SizeError(rows: rows, columns: columns, limits: limits)
        }
    }

    // MARK: - From libvterm

    private static func from(_ user: UnsafeMutableRawPointer) -> VirtualTerminal {
        Unmanaged<VirtualTerminal>.fromOpaque(user).takeUnretainedValue()
    }

    private func output(_ bytes: UnsafeRawBufferPointer) {
        if probeOutput != nil { probeOutput?.append(contentsOf: bytes) } else { replies.append(contentsOf: bytes) }
    }

    private func damaged(_ rect: VTermRect) {
        version += 1
        let rows = max(0, Int(rect.start_row))..<min(rowVersions.count, Int(rect.end_row))
        for row in rows { rowVersions[row] = version }
    }

    private func moved(_ position: VTermPos, visible: Bool) {
        cursor.row = Int(position.row)
        cursor.column = Int(position.col)
        cursor.visible = visible
        version += 1
    }

    private func property(_ property: VTermProp, _ value: VTermValue) {
        switch property {
        case VTERM_PROP_CURSORVISIBLE: cursor.visible = value.boolean != 0
        case VTERM_PROP_ALTSCREEN: alternateScreen = value.boolean != 0
        case VTERM_PROP_REVERSE: reverseVideo = value.boolean != 0
        case VTERM_PROP_MOUSE: mouse = ScreenModes.Mouse(rawValue: UInt8(clamping: value.number)) ?? .none
        case VTERM_PROP_TITLE:
            guard let string = value.string else { return }
            title = Self.bounded(String(cString: string), bytes: limits.titleBytes)
        default: return
        }
        version += 1
    }

    private func rang() {
        bells += 1
        version += 1
    }

    private func pushed(_ cells: UnsafePointer<VTermScreenCell>, count: Int) {
        // Trailing blanks are not kept: found before the rest is converted (most lines are short).
        var end = count
        while end > 0, Self.cell(cells[end - 1]) == .blank { end -= 1 }
        var line = (0..<end).map { Self.cell(cells[$0]) }
        for index in line.indices.dropFirst() where line[index].width == 0 && line[index - 1].width == 2 {
            line[index].style = line[index - 1].style
        }
        scrollback.push(line)
    }

    /// The callbacks libvterm keeps a pointer to; each finds its terminal through `user`.
    private static var screenCallbacks: VTermScreenCallbacks {
        VTermScreenCallbacks(
            damage: { rect, user in
                if let user { VirtualTerminal.from(user).damaged(rect) }
                return 1
            },
            // Unhandled, a scroll arrives as the damage of the rows it moved.
            moverect: nil,
            movecursor: { position, _, visible, user in
                if let user { VirtualTerminal.from(user).moved(position, visible: visible != 0) }
                return 1
            },
            settermprop: { property, value, user in
                if let user, let value { VirtualTerminal.from(user).property(property, value.pointee) }
                return 1
            },
            bell: { user in
                if let user { VirtualTerminal.from(user).rang() }
                return 1
            },
            resize: { _, _, _ in 1 },
            sb_pushline: { count, cells, user in
                if let user, let cells { VirtualTerminal.from(user).pushed(cells, count: Int(count)) }
                return 1
            },
            // Lines are not pulled back into a screen grown taller: it grows at the bottom.
            sb_popline: { _, _, _ in 0 })
    }

    // MARK: - Cells

    private static func cell(_ cell: VTermScreenCell) -> ScreenCell {
        let style = CellStyle(
            foreground: color(cell.fg, defaultFlag: UInt8(VTERM_COLOR_DEFAULT_FG.rawValue)),
            background: color(cell.bg, defaultFlag: UInt8(VTERM_COLOR_DEFAULT_BG.rawValue)),
            flags: flags(cell.attrs),
            underline: CellStyle.Underline(rawValue: UInt8(clamping: cell.attrs.underline)) ?? .single)
        let first = cell.chars.0
        // The right half of a wide character.
        if first == UInt32.max { return ScreenCell(text: "", width: 0, style: style) }
        // Most cells: one ASCII character or none, without building a string.
        if first < 0x80, cell.chars.1 == 0 {
            return ScreenCell(text: asciiText[Int(first)], width: UInt8(clamping: Int(cell.width)), style: style)
        }
        var scalars = String.UnicodeScalarView()
        withUnsafeBytes(of: cell.chars) { raw in
            for value in raw.bindMemory(to: UInt32.self) {
                guard value != 0, let scalar = Unicode.Scalar(value) else { break }
                scalars.append(scalar)
            }
        }
        return ScreenCell(text: String(scalars), width: UInt8(clamping: Int(cell.width)), style: style)
    }

    /// The text of each ASCII cell (0: an empty cell), made once.
    private static let asciiText: [String] = (0..<0x80).map { $0 == 0 ? "" : String(UnicodeScalar(UInt8($0))) }

    private static func flags(_ attributes: VTermScreenCellAttrs) -> CellStyle.Flags {
        var flags: CellStyle.Flags = []
        if attributes.bold != 0 { flags.insert(.bold) }
        if attributes.italic != 0 { flags.insert(.italic) }
        if attributes.blink != 0 { flags.insert(.blink) }
        if attributes.reverse != 0 { flags.insert(.reverse) }
        if attributes.strike != 0 { flags.insert(.strike) }
        return flags
    }

    private static func color(_ color: VTermColor, defaultFlag: UInt8) -> TerminalColor {
        if color.type & defaultFlag != 0 { return .default }
        if color.type & UInt8(VTERM_COLOR_TYPE_MASK.rawValue) == UInt8(VTERM_COLOR_INDEXED.rawValue) {
            return .indexed(color.indexed.idx)
        }
        return .rgb(red: color.rgb.red, green: color.rgb.green, blue: color.rgb.blue)
    }

    /// `text` cut to at most `bytes` of UTF-8, at a character's boundary.
    static func bounded(_ text: String, bytes: Int) -> String {
        guard text.utf8.count > bytes else { return text }
        var kept = ""
        for character in text {
            guard kept.utf8.count + character.utf8.count <= bytes else { break }
            kept.append(character)
        }
        return kept
    }
}
