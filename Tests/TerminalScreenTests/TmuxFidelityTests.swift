import Foundation
import ScreenModel
import TestSupport
import Testing

@testable import TerminalScreen

/// The same output drawn by tmux and by a `VirtualTerminal` gives the same screen, cell by cell:
/// text, width and style, the cursor and the alternate screen. tmux's screen is read with
/// `capture-pane -e -N` (each cell's attributes as escapes) and drawn again in a fresh terminal
/// to compare cells with cells.
@Suite struct TmuxFidelityTests {
    static let columns = 80
    static let rows = 24
    static let escape = "\u{1B}["

    static let outputs: [(name: String, text: String)] = [
        ("the 16 colours, 256 and RGB, every attribute", colours),
        ("wide, emoji and combining characters, a wide one at the edge", wide),
        ("cursor moves, erases, inserts, a scroll region, tabs", editing),
        ("the alternate screen over a main one", alternate),
        ("long lines wrapping and a screen scrolled many times", scrolling),
    ]

    @Test(arguments: outputs.indices)
    func tmuxAndTheVirtualTerminalAgree(_ index: Int) throws {
        let output = Array((Self.outputs[index].text + "\r\n<end>").utf8)
        let ours = try VirtualTerminal(rows: Self.rows, columns: Self.columns)
        ours.feed(output)
        let tmux = try Self.tmuxScreen(after: output)
        let screen = ours.snapshot()
        var differences: [String] = []
        for row in 0..<Self.rows {
            for column in 0..<Self.columns {
                let mine = Self.comparable(screen.lines[row][column])
                let theirs = Self.comparable(tmux.screen.lines[row][column])
                if mine != theirs { differences.append("row \(row) column \(column): ours \(mine), tmux's \(theirs)") }
            }
        }
        #expect(differences.isEmpty, "\(Self.outputs[index].name):\n\(differences.prefix(10).joined(separator: "\n"))")
        #expect(screen.cursor.row == tmux.cursorRow && screen.cursor.column == tmux.cursorColumn)
        #expect(screen.modes.alternateScreen == tmux.alternate)
    }

    /// A cell as both sides can show it: a space and an empty cell are one blank.
    static func comparable(_ cell: ScreenCell) -> ScreenCell {
        cell.text == " " ? ScreenCell(text: "", width: cell.width, style: cell.style) : cell
    }

    struct TmuxScreen {
        var screen: TerminalScreen
        var cursorRow: Int
        var cursorColumn: Int
        var alternate: Bool
    }

    /// tmux's screen once it has shown `output` (ending in `<end>`).
    static func tmuxScreen(after output: [UInt8]) throws -> TmuxScreen {
        let directory = try TemporaryDirectory()
        let file = directory.file("output")
        try Data(output).write(to: file)
        let tmux = try TmuxTerminal(
            directory: directory, width: columns, height: rows, command: "cat '\(file.path)'; exec sleep 600")
        try tmux.waitFor("<end>")
        let capture = try tmux.tmux(["capture-pane", "-p", "-e", "-N", "-t", "local"]).stdout
        let state = try tmux.tmux([
            "display-message", "-p", "-t", "local", "#{cursor_x} #{cursor_y} #{alternate_on}",
        ]).stdout.split(separator: " ").map { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        var lines = capture.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        let redrawn = try VirtualTerminal(rows: rows, columns: columns)
        redrawn.feed(Array(lines.joined(separator: "\r\n").utf8))
        return TmuxScreen(
            screen: redrawn.snapshot(), cursorRow: state[1], cursorColumn: state[0], alternate: state[2] == 1)
    }

    // MARK: - The outputs

    static var colours: String {
        var text = ""
        for index in 0..<8 { text += "\(escape)\(30 + index)m f\(index)\(escape)\(40 + index)m b\(index)\(escape)0m" }
        text += "\r\n"
        for index in 0..<8 { text += "\(escape)\(90 + index)m F\(index)\(escape)\(100 + index)m B\(index)\(escape)0m" }
        text += "\r\n"
        for row in 0..<4 {
            for index in (row * 64)..<(row * 64 + 64) { text += "\(escape)38;5;\(index)m#" }
            text += "\(escape)0m\r\n"
        }
        for index in 0..<64 { text += "\(escape)48;2;\(index * 4);\(255 - index * 4);128m \(escape)0m" }
        text += "\r\n"
        for index in 0..<64 { text += "\(escape)38;2;\(index * 3);99;\(255 - index * 2)mx" }
        text += "\(escape)0m\r\n"
        let attributes = [1, 3, 4, 5, 7, 9]
        for attribute in attributes { text += "\(escape)\(attribute)mattr\(attribute)\(escape)0m " }
        // Not an erase in a colour (`ESC [ 44 m ESC [ K`): tmux colours the erased cells, but
        // capture-pane leaves trailing blanks out even with -N, colour and all
        // (VirtualTerminalTests checks libvterm's, which is xterm's).
        text += "\(escape)1;3;4;7;38;5;208;48;2;10;20;30mall\(escape)0m"
        return text
    }

    static var wide: String {
        var text = "日本語のテキスト 中文 한국어\r\n"
        text += "emoji: 😀🎉🚀 and flags 🇫🇷\r\n"
        text += "combining: e\u{301} a\u{308} n\u{303} o\u{302}\u{323}\r\n"
        text += String(repeating: "x", count: 79) + "日" + "\r\n"
        text += String(repeating: "-", count: 78) + "字字"
        return text
    }

    static var editing: String {
        var text = (1...20).map { "line \($0) " + String(repeating: "abcdefghij", count: 6) }.joined(separator: "\r\n")
        text += "\(escape)5;10H\(escape)K"
        text += "\(escape)6;1H\(escape)1K"
        text += "\(escape)7;20H\(escape)5@INSERTED"
        text += "\(escape)8;5H\(escape)10P"
        // IND (ESC D), not a line feed: a PTY's ONLCR would make tmux's "\n" a "\r\n".
        text += "\(escape)10;20r\(escape)20;1H\u{1B}D\u{1B}D\u{1B}Dscrolled in the region\(escape)r"
        text += "\(escape)22;1Ha\tb\tc\td"
        text += "\(escape)3;1H\(escape)2Mdeleted two"
        text += "\(escape)23;1H\(escape)J"
        return text
    }

    static var alternate: String {
        "main screen text\r\nsecond line" + "\(escape)?1049h\(escape)H\(escape)2J"
            + "\(escape)1;31mfull screen\(escape)0m"
            + "\(escape)12;30Hmiddle" + "\(escape)24;1Hstatus line"
            + "\(escape)2;1H"
    }

    static var scrolling: String {
        (1...200).map { "row \($0): " + String(repeating: "wrap me ", count: $0 % 23) }.joined(separator: "\r\n")
    }
}
