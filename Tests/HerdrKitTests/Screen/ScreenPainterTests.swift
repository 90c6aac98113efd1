import HerdrKit
import LinkEmulator
import ScreenModel
import TerminalScreen
import Testing

/// `ScreenPainter`'s bytes drawn by a real terminal emulator (libvterm, as the local terminal):
/// after every paint the local terminal shows exactly the computer's screen, cells, styles,
/// cursor and title, whatever came before; and the closing bytes give the person's screen back.
@Suite struct ScreenPainterTests {
    static let red = CellStyle(foreground: .indexed(1), flags: .bold)
    static let fancy = CellStyle(
        foreground: .rgb(red: 1, green: 2, blue: 3), background: .indexed(200), flags: [.italic, .reverse, .strike],
        underline: .double)

    static func screen(_ rows: [[ScreenCell]], columns: Int, cursor: (Int, Int), title: String = "")
        -> TerminalScreen
    {
        TerminalScreen(
            lines: rows.map { $0 + Array(repeating: .blank, count: columns - $0.count) },
            cursor: TerminalScreen.Cursor(row: cursor.0, column: cursor.1, visible: true), title: title)
    }

    static func cells(_ text: String, _ style: CellStyle = .plain) -> [ScreenCell] {
        text.map { ScreenCell(text: String($0), style: style) }
    }

    /// A local terminal of `rows` × `columns` that shows `painter`'s bytes.
    static func local(rows: Int, columns: Int) throws -> VirtualTerminal {
        let terminal = try VirtualTerminal(rows: rows, columns: columns)
        _ = terminal.feed(ScreenPainter.opening)
        return terminal
    }

    /// Whether the local terminal shows `screen`: its cells, cursor and title (its modes are
    /// the local terminal's own, the alternate screen among them).
    static func shows(_ terminal: VirtualTerminal, _ screen: TerminalScreen) -> Bool {
        let shown = terminal.snapshot()
        return shown.lines == screen.lines && shown.cursor == screen.cursor && shown.title == screen.title
    }

    @Test func eachPaintLeavesTheTerminalShowingTheScreen() throws {
        let terminal = try Self.local(rows: 4, columns: 12)
        var painter = ScreenPainter(rows: 4, columns: 12)
        let wide = ScreenCell(text: "界", width: 2, style: Self.red)
        let half = ScreenCell(text: "", width: 0, style: Self.red)
        let screens = [
            Self.screen([Self.cells("$ ls"), [], [], []], columns: 12, cursor: (0, 4), title: "one"),
            Self.screen(
                [Self.cells("$ ls"), Self.cells("a ") + Self.cells("red", Self.red), Self.cells("é͂x", Self.fancy), []],
                columns: 12, cursor: (3, 0), title: "two"),
            Self.screen(
                [
                    [], Self.cells("a ") + Self.cells("red", Self.red), [wide, half] + Self.cells("!"),
                    Self.cells("$ "),
                ],
                columns: 12, cursor: (3, 2), title: "two"),
        ]
        let first = painter.paint(screens[0])
        _ = terminal.feed(first)
        #expect(!first.isEmpty && painter.paint(screens[0]).isEmpty, "the same screen again writes nothing")
        for screen in screens {
            _ = terminal.feed(painter.paint(screen))
            #expect(Self.shows(terminal, screen), "\(terminal.snapshot().lines.map { $0.map(\.text) })")
        }
    }

    @Test func randomScreensArriveWhateverCameBefore() throws {
        var random = LinkEmulator.SplitMix64(seed: 7)
        let styles = [CellStyle.plain, Self.red, Self.fancy]
        let terminal = try Self.local(rows: 6, columns: 20)
        var painter = ScreenPainter(rows: 6, columns: 20)
        for _ in 0..<400 {
            // Many cells alike (a plain `a`), so that a change often starts in the middle of a
            // row; wide characters among them.
            let rows = (0..<6).map { _ -> [ScreenCell] in
                let count = Int(random.next() % 21)
                var cells: [ScreenCell] = []
                while cells.count < count {
                    let style = styles[Int(random.next() % 3)]
                    switch random.next() % 8 {
                    case 0: cells.append(ScreenCell(text: "", style: .plain))
                    case 1 where cells.count + 2 <= count:
                        cells += [
                            ScreenCell(text: "界", width: 2, style: style), ScreenCell(text: "", width: 0, style: style),
                        ]
                    case 2, 3: cells.append(ScreenCell(text: "a"))
                    default: cells.append(Self.cells("xyz#", style)[Int(random.next() % 4)])
                    }
                }
                return cells
            }
            let screen = Self.screen(
                rows, columns: 20, cursor: (Int(random.next() % 6), Int(random.next() % 20)), title: "t")
            _ = terminal.feed(painter.paint(screen))
            #expect(Self.shows(terminal, screen), "\(terminal.snapshot().lines.map { $0.map(\.text) })")
        }
    }

    @Test func aResizeDrawsItWholeAndAScreenTooBigIsClipped() throws {
        var painter = ScreenPainter(rows: 3, columns: 10)
        let first = try Self.local(rows: 3, columns: 10)
        _ = first.feed(painter.paint(Self.screen([Self.cells("abc"), [], []], columns: 10, cursor: (0, 3))))
        // The terminal shrank; a state taken before the computer followed is bigger than it.
        painter.resize(rows: 2, columns: 5)
        let clipped = try Self.local(rows: 2, columns: 5)
        _ = clipped.feed(
            painter.paint(
                Self.screen(
                    [Self.cells("0123456789"), Self.cells("x"), Self.cells("gone")], columns: 10, cursor: (2, 9))))
        #expect(clipped.snapshot().lines.map { $0.map(\.text).joined() } == ["01234", "x"])
        #expect(
            clipped.snapshot().cursor.row == 1 && clipped.snapshot().cursor.column == 4,
            "the cursor kept within the terminal")
    }

    @Test func theModesFollowTheProgramAndTheClosingResetsThem() throws {
        let terminal = try Self.local(rows: 2, columns: 8)
        var painter = ScreenPainter(rows: 2, columns: 8)
        var screen = Self.screen([[], []], columns: 8, cursor: (0, 0))
        screen.modes.applicationCursorKeys = true
        screen.modes.bracketedPaste = true
        screen.cursor.visible = false
        _ = terminal.feed(painter.paint(screen))
        #expect(
            terminal.modes.applicationCursorKeys && terminal.modes.bracketedPaste && !terminal.snapshot().cursor.visible
        )
        screen.modes.bracketedPaste = false
        _ = terminal.feed(painter.paint(screen))
        #expect(terminal.modes.applicationCursorKeys && !terminal.modes.bracketedPaste)
        _ = terminal.feed(ScreenPainter.closing)
        #expect(
            !terminal.modes.applicationCursorKeys && terminal.snapshot().cursor.visible
                && !terminal.modes.alternateScreen)
    }

    @Test func controlCharactersInCellsAndTitlesAreNotCommands() throws {
        let terminal = try Self.local(rows: 2, columns: 8)
        var painter = ScreenPainter(rows: 2, columns: 8)
        let hostile = Self.screen(
            [[ScreenCell(text: "\u{1B}[2J")], Self.cells("ok")], columns: 8, cursor: (1, 2), title: "a\u{7}b\u{1B}]2;x")
        _ = terminal.feed(painter.paint(hostile))
        #expect(terminal.snapshot().lines[1].prefix(2).map(\.text) == ["o", "k"])
        #expect(terminal.title == "ab]2;x")
    }
}
