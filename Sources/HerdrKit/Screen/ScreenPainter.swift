import ScreenModel

/// Draws a screen session's screens into a local terminal, as mosh's client does: the first
/// screen whole, then only the rows that changed, in the alternate screen so the person's own
/// screen comes back at the end. Pure: screens in, the bytes for the terminal out.
///
/// Cells are clipped to the terminal's size (the computer's screen follows the terminal's after
/// a resize, but a state taken before it may still come). The modes a program's input depends on
/// (the cursor keys, bracketed paste, mouse reporting) are set on the local terminal too, so it
/// sends what the program expects.
public struct ScreenPainter: Sendable {
    /// The screen as the terminal shows it now; nil before the first, or after the terminal was
    /// resized (everything is drawn again).
    private var shown: TerminalScreen?
    /// The terminal's size, in cells.
    private var size: (rows: Int, columns: Int)

    public init(rows: Int, columns: Int) {
        size = (max(1, rows), max(1, columns))
    }

    /// What enters the painter's screen: the alternate screen, cleared, the cursor home.
    public static let opening: [UInt8] = Array("\u{1B}[?1049h\u{1B}[H\u{1B}[2J".utf8)

    /// What gives the person's terminal back, whatever the program set: plain style, the cursor
    /// shown, the modes off, the main screen.
    public static let closing: [UInt8] = Array(
        "\u{1B}[0m\u{1B}[?25h\u{1B}[?1l\u{1B}[?2004l\u{1B}[?1000l\u{1B}[?1002l\u{1B}[?1003l\u{1B}[?1006l\u{1B}[?1049l"
            .utf8)

    /// The local terminal was resized: the next screen is drawn whole.
    public mutating func resize(rows: Int, columns: Int) {
        size = (max(1, rows), max(1, columns))
        shown = nil
    }

    /// The bytes that turn what the terminal shows into `screen` (with a bell when `rang`); none
    /// when it shows it already.
    public mutating func paint(_ screen: TerminalScreen, rang: Bool = false) -> [UInt8] {
        // A state that only confirmed input: nothing to draw, so nothing written.
        if screen == shown, !rang { return [] }
        var out = "\u{1B}[?25l"  // no cursor flying over the rows being drawn
        let previous = shown
        if previous == nil { out += "\u{1B}[0m\u{1B}[H\u{1B}[2J" }
        let rows = min(screen.rows, size.rows)
        let columns = min(screen.columns, size.columns)
        for row in 0..<rows {
            let line = screen.lines[row]
            var span = 0..<columns
            if let previous, row < previous.rows, previous.columns == screen.columns {
                guard let changed = Self.changed(previous.lines[row], line) else { continue }
                span = changed.clamped(to: 0..<columns)
                guard !span.isEmpty else { continue }
            }
            out += "\u{1B}[\(row + 1);\(span.lowerBound + 1)H" + Self.text(of: line, span, columns: columns)
        }
        if let previous, previous.rows > screen.rows || previous.columns > screen.columns {
            // A smaller screen than before: what lay outside it goes.
            out += "\u{1B}[0m"
            if previous.columns > screen.columns {
                for row in 0..<rows where screen.columns < size.columns {
                    out += "\u{1B}[\(row + 1);\(screen.columns + 1)H\u{1B}[K"
                }
            }
            if previous.rows > screen.rows, screen.rows < size.rows { out += "\u{1B}[\(screen.rows + 1);1H\u{1B}[J" }
        }
        out += modes(screen, previous: previous)
        // The computer's terminal already acted on any control: here one would be a command.
        if previous?.title != screen.title { out += "\u{1B}]2;\(TerminalText.printable(screen.title))\u{7}" }
        let cursor = screen.cursor
        out += "\u{1B}[\(min(cursor.row, size.rows - 1) + 1);\(min(cursor.column, size.columns - 1) + 1)H"
        if cursor.visible { out += "\u{1B}[?25h" }
        if rang { out += "\u{7}" }
        shown = screen
        return Array(out.utf8)
    }

    /// The columns where `new` differs from `old` (a wide character's two halves together), or
    /// nil when it does not: only those are drawn again, as mosh's client does.
    static func changed(_ old: [ScreenCell], _ new: [ScreenCell]) -> Range<Int>? {
        guard old != new, old.count == new.count else { return old == new ? nil : 0..<new.count }
        var first = 0
        while old[first] == new[first] { first += 1 }
        var last = new.count - 1
        while old[last] == new[last] { last -= 1 }
        if first > 0, new[first].width == 0 || old[first].width == 0 { first -= 1 }
        if last + 1 < new.count, new[last].width == 2 || old[last].width == 2 { last += 1 }
        return first..<last + 1
    }

    /// The cells of `span` of a row: each style change as SGR, a wide character once (its right
    /// half is the terminal's), empty cells erased rather than written, and the blanks at the
    /// end of the row erased to its end.
    static func text(of line: [ScreenCell], _ span: Range<Int>, columns: Int) -> String {
        var end = min(columns, line.count)
        while end > 0, line[end - 1] == .blank { end -= 1 }
        let erasesToEnd = span.upperBound > end
        end = min(end, span.upperBound)
        var out = "\u{1B}[0m"
        var style = CellStyle.plain
        var column = span.lowerBound
        while column < end {
            let cell = line[column]
            if cell.style != style {
                out += sgr(cell.style)
                style = cell.style
            }
            if cell.text.isEmpty, cell.width == 1 {
                // Empty cells are erased, not written as spaces: a space is a character.
                var run = 1
                while column + run < end, line[column + run].text.isEmpty, line[column + run].width == 1,
                    line[column + run].style == style
                {
                    run += 1
                }
                out += "\u{1B}[\(run)X\u{1B}[\(run)C"
                column += run
                continue
            }
            if cell.width == 2, column + 1 >= columns {
                out += " "  // half a wide character does not fit: a blank, as a terminal draws it
            } else if cell.width == 0 {
                // The right half of the wide character before it, already drawn; an orphan half
                // (a program's cursor movement cut its wide character) is a blank.
                if column == 0 || line[column - 1].width != 2 { out += " " }
            } else {
                out += TerminalText.printable(cell.text)
            }
            column += 1
        }
        out += "\u{1B}[0m"
        if erasesToEnd, end < columns { out += "\u{1B}[K" }
        return out
    }

    /// The SGR sequence that sets `style` from nothing.
    static func sgr(_ style: CellStyle) -> String {
        var codes = ["0"]
        if style.flags.contains(.bold) { codes.append("1") }
        if style.flags.contains(.italic) { codes.append("3") }
        switch style.underline {
        case .none: break
        case .single: codes.append("4")
        case .double: codes.append("21")
        case .curly: codes.append("4:3")
        }
        if style.flags.contains(.blink) { codes.append("5") }
        if style.flags.contains(.reverse) { codes.append("7") }
        if style.flags.contains(.strike) { codes.append("9") }
        codes += color(style.foreground, base: 30, bright: 90, extended: 38)
        codes += color(style.background, base: 40, bright: 100, extended: 48)
        return "\u{1B}[" + codes.joined(separator: ";") + "m"
    }

    private static func color(_ color: TerminalColor, base: Int, bright: Int, extended: Int) -> [String] {
        switch color {
        case .default: []
        case .indexed(let index) where index < 8: ["\(base + Int(index))"]
        case .indexed(let index) where index < 16: ["\(bright + Int(index) - 8)"]
        case .indexed(let index): ["\(extended)", "5", "\(index)"]
        case .rgb(let red, let green, let blue): ["\(extended)", "2", "\(red)", "\(green)", "\(blue)"]
        }
    }

    /// The modes the local terminal must have for the program's input, where they changed.
    private func modes(_ screen: TerminalScreen, previous: TerminalScreen?) -> String {
        let now = screen.modes
        let before = previous?.modes ?? ScreenModes()
        var out = ""
        if previous == nil || now.applicationCursorKeys != before.applicationCursorKeys {
            out += now.applicationCursorKeys ? "\u{1B}[?1h" : "\u{1B}[?1l"
        }
        if previous == nil || now.bracketedPaste != before.bracketedPaste {
            out += now.bracketedPaste ? "\u{1B}[?2004h" : "\u{1B}[?2004l"
        }
        if previous == nil || now.mouse != before.mouse {
            out += "\u{1B}[?1000l\u{1B}[?1002l\u{1B}[?1003l"
            switch now.mouse {
            case .none: break
            case .click: out += "\u{1B}[?1000h"
            case .drag: out += "\u{1B}[?1002h"
            case .move: out += "\u{1B}[?1003h"
            }
        }
        if previous == nil || now.reverseVideo != before.reverseVideo {
            out += now.reverseVideo ? "\u{1B}[?5h" : "\u{1B}[?5l"
        }
        return out
    }
}
