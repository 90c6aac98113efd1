/// A terminal's screen at one moment: its cells row by row, the cursor, the modes and the title.
/// What a screen session's computer keeps and its device draws.
public struct TerminalScreen: Hashable, Sendable {
    public struct Cursor: Hashable, Sendable {
        public var row: Int
        public var column: Int
        public var visible: Bool

        public init(row: Int, column: Int, visible: Bool) {
            self.row = row
            self.column = column
            self.visible = visible
        }
    }

    /// `rows` rows of `columns` cells each.
    public var lines: [[ScreenCell]]
    public var cursor: Cursor
    public var modes: ScreenModes
    /// The window title the program set (OSC 0 or 2), "" when none.
    public var title: String

    public var rows: Int { lines.count }
    public var columns: Int { lines.first?.count ?? 0 }

    public init(lines: [[ScreenCell]], cursor: Cursor, modes: ScreenModes = ScreenModes(), title: String = "") {
        self.lines = lines
        self.cursor = cursor
        self.modes = modes
        self.title = title
    }

    /// Row `row`'s text with trailing blanks removed, wide characters once.
    public func text(ofRow row: Int) -> String {
        var text = ""
        var pendingSpaces = 0
        for cell in lines[row] where cell.width != 0 {
            if cell.text.isEmpty || cell.text == " " {
                pendingSpaces += 1
            } else {
                text += String(repeating: " ", count: pendingSpaces) + cell.text
                pendingSpaces = 0
            }
        }
        return text
    }
}
