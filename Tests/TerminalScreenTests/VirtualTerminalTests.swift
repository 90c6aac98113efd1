import ScreenModel
import Testing

@testable import TerminalScreen

@Suite struct VirtualTerminalTests {
    private func terminal(rows: Int = 24, columns: Int = 80, _ output: String = "") throws -> VirtualTerminal {
        let terminal = try VirtualTerminal(rows: rows, columns: columns)
        terminal.feed(Array(output.utf8))
        return terminal
    }

    @Test func textLandsInCellsAndTheCursorFollows() throws {
        let terminal = try terminal("hello\r\nworld")
        let screen = terminal.snapshot()
        #expect(screen.rows == 24 && screen.columns == 80)
        #expect(screen.text(ofRow: 0) == "hello")
        #expect(screen.text(ofRow: 1) == "world")
        #expect(screen.cursor == .init(row: 1, column: 5, visible: true))
        #expect(screen.lines[0][0] == ScreenCell(text: "h"))
        #expect(screen.lines[0][5] == .blank)
    }

    @Test func attributesAndColoursAsTheProgramSetThem() throws {
        let terminal = try terminal(
            "\u{1B}[1;3;4;5;7;9mA\u{1B}[0m\u{1B}[38;5;196;48;5;21mB\u{1B}[38;2;1;2;3;48;2;250;251;252mC\u{1B}[0m\u{1B}[21mD\u{1B}[0mE"
        )
        let row = terminal.line(0)
        #expect(row[0].style.flags == [.bold, .italic, .blink, .reverse, .strike])
        #expect(row[0].style.underline == .single)
        #expect(row[1].style == CellStyle(foreground: .indexed(196), background: .indexed(21)))
        #expect(
            row[2].style
                == CellStyle(
                    foreground: .rgb(red: 1, green: 2, blue: 3), background: .rgb(red: 250, green: 251, blue: 252)))
        #expect(row[3].style.underline == .double)
        #expect(row[4].style == .plain)
    }

    @Test func theSixteenColoursStayIndexed() throws {
        let terminal = try terminal("\u{1B}[31mr\u{1B}[97mw\u{1B}[42mg\u{1B}[39;49md")
        let row = terminal.line(0)
        #expect(row[0].style.foreground == .indexed(1))
        #expect(row[1].style.foreground == .indexed(15))
        #expect(row[2].style.background == .indexed(2))
        #expect(row[3].style == .plain)
    }

    @Test func anEraseInAColourColoursTheErasedCells() throws {
        // Background colour erase, as xterm does it.
        let terminal = try terminal(rows: 2, columns: 10, "ab\u{1B}[44m\u{1B}[Kc\u{1B}[0m")
        let row = terminal.line(0)
        #expect(row[2] == ScreenCell(text: "c", style: CellStyle(background: .indexed(4))))
        #expect(row[3...].allSatisfy { $0 == ScreenCell(text: "", style: CellStyle(background: .indexed(4))) })
        #expect(terminal.line(1).allSatisfy { $0 == .blank })
    }

    @Test func wideAndCombiningCharacters() throws {
        let terminal = try terminal("日本😀e\u{301}x")
        let row = terminal.line(0)
        #expect(row[0] == ScreenCell(text: "日", width: 2))
        #expect(row[1].width == 0 && row[1].text.isEmpty)
        #expect(row[2] == ScreenCell(text: "本", width: 2))
        #expect(row[4] == ScreenCell(text: "😀", width: 2))
        #expect(row[6].text == "e\u{301}" && row[6].width == 1)
        #expect(row[7].text == "x")
        #expect(terminal.snapshot().text(ofRow: 0) == "日本😀e\u{301}x")
        #expect(terminal.snapshot().cursor.column == 8)
    }

    @Test func theAlternateScreenComesAndGoes() throws {
        let terminal = try terminal("main text")
        terminal.feed(Array("\u{1B}[?1049h\u{1B}[Hfull screen".utf8))
        #expect(terminal.modes.alternateScreen)
        #expect(terminal.snapshot().text(ofRow: 0) == "full screen")
        terminal.feed(Array("\u{1B}[?1049l".utf8))
        #expect(!terminal.modes.alternateScreen)
        #expect(terminal.snapshot().text(ofRow: 0) == "main text")
    }

    @Test func theModesADeviceNeeds() throws {
        let terminal = try terminal()
        #expect(terminal.modes == ScreenModes())
        terminal.feed(Array("\u{1B}[?1h\u{1B}[?2004h\u{1B}[?1002h\u{1B}[?25l\u{1B}[?5h".utf8))
        let modes = terminal.modes
        #expect(modes.applicationCursorKeys)
        #expect(modes.bracketedPaste)
        #expect(modes.mouse == .drag)
        #expect(modes.reverseVideo)
        #expect(!terminal.snapshot().cursor.visible)
        terminal.feed(Array("\u{1B}[?1l\u{1B}[?2004l\u{1B}[?1002l\u{1B}[?25h\u{1B}[?5l".utf8))
        #expect(terminal.modes == ScreenModes())
        #expect(terminal.snapshot().cursor.visible)
    }

    @Test func probingTheModesSendsNothingToTheProgram() throws {
        let terminal = try terminal("\u{1B}[?1h\u{1B}[?2004h")
        _ = terminal.modes
        #expect(terminal.feed(Array("x".utf8)).isEmpty)
    }

    @Test func theTitleAndTheBell() throws {
        let terminal = try terminal("\u{1B}]2;build: make test\u{07}\u{07}\u{07}")
        #expect(terminal.title == "build: make test")
        #expect(terminal.snapshot().title == "build: make test")
        #expect(terminal.bells == 2)
    }

    @Test func aLongTitleIsCutAtACharacter() throws {
        let long = String(repeating: "é", count: 2000)
        let terminal = try terminal("\u{1B}]0;\(long)\u{07}")
        #expect(terminal.title.utf8.count <= 1024)
        #expect(terminal.title.allSatisfy { $0 == "é" })
        #expect(VirtualTerminal.bounded("aé", bytes: 2) == "a")
    }

    @Test func theScreenIsTheSameHoweverTheOutputIsCut() throws {
        let output = Array(
            "\u{1B}]2;a title\u{07}日本 e\u{301}\u{1B}[1;38;5;196mred\u{1B}]0;other\u{1B}\\\u{1B}[?1049h\u{1B}[2;3Hx😀\u{1B}[0m"
                .utf8)
        let whole = try terminal()
        whole.feed(output)
        #expect(whole.title == "other")
        #expect(whole.snapshot().text(ofRow: 1) == "  x😀")
        for size in 1...8 {
            let cut = try terminal()
            var offset = 0
            while offset < output.count {
                cut.feed(output[offset..<min(output.count, offset + size)])
                offset += size
            }
            #expect(cut.snapshot() == whole.snapshot(), "cut every \(size) bytes")
        }
    }

    @Test func anUnfinishedTailWaitsForItsEndWithinABound() {
        var sequences = CompleteSequences()
        func take(_ text: [UInt8]) -> [UInt8] { text.withUnsafeBufferPointer { sequences.take($0) } }
        #expect(take(Array("ab\u{1B}]2;ti".utf8)) == Array("ab".utf8))
        #expect(take(Array("tle\u{07}c".utf8)) == Array("\u{1B}]2;title\u{07}c".utf8))
        #expect(take([0xE6, 0x97]) == [])
        #expect(take([0xA5, 0x41]) == [0xE6, 0x97, 0xA5, 0x41])
        #expect(take(Array("\u{1B}[1;3".utf8)) == [])
        #expect(take(Array("1m".utf8)) == Array("\u{1B}[1;31m".utf8))
        // Past the bound the tail is handed on, and so is the rest of that sequence.
        let long = [0x1B, 0x5D] + Array(repeating: UInt8(ascii: "t"), count: CompleteSequences.maximumHeld)
        #expect(take(long) == long)
        #expect(take(Array("tt".utf8)) == Array("tt".utf8))
        #expect(take([0x07, 0x1B]) == [0x07])
        #expect(take(Array("[A".utf8)) == Array("\u{1B}[A".utf8))
    }

    @Test func aRepeatRepeatsTheLastCharacterAndNeverHangs() throws {
        let terminal = try terminal(rows: 3, columns: 10, "A\u{1B}[3b|é\u{1B}[2b|")
        #expect(terminal.snapshot().text(ofRow: 0) == "AAAA|ééé|")
        // Before any character, or after a zero-width one put on its own, libvterm 0.1.4 would
        // loop for ever: the repeat is left out.
        for (output, row) in [
            ("\u{1B}[b", 0), ("\u{200B}\u{1B}[5b", 0), ("x\r\n\u{301}\u{1B}[b", 1), ("\u{1B}[0b", 0),
            ("\u{1B}[2\u{0}b", 0),
        ] {
            let fresh = try self.terminal(rows: 3, columns: 10, output + "ok")
            #expect(fresh.snapshot().text(ofRow: row).hasSuffix("ok"), "\(output.debugDescription)")
        }
        // A mark that combines keeps the repeat: the character repeated is the whole glyph.
        let combined = try self.terminal(rows: 1, columns: 10, "e\u{301}\u{1B}[2b")
        #expect(combined.snapshot().text(ofRow: 0) == "e\u{301}e\u{301}e\u{301}")
    }

    @Test func aSequenceWithTooManyArgumentsIsLeftOutWhole() throws {
        // 17 arguments crash libvterm 0.1.4; 16 are drawn.
        let sixteen = "\u{1B}[" + Array(repeating: "1", count: 15).joined(separator: ";") + ";31m"
        let seventeen = "\u{1B}[" + Array(repeating: "4", count: 17).joined(separator: ";") + "m"
        let terminal = try terminal(rows: 2, columns: 10, sixteen + "a" + seventeen + "b\u{1B}[;;;;;;;;;;;;;;;;hc")
        let row = terminal.line(0)
        #expect(row.map(\.text).prefix(3) == ["a", "b", "c"])
        #expect(row[0].style == CellStyle(foreground: .indexed(1), flags: .bold))
        #expect(row[1].style == row[0].style)
    }

    @Test func theTerminalAnswersTheProgramsQuestions() throws {
        let terminal = try terminal("abc")
        let reply = terminal.feed(Array("\u{1B}[6n".utf8))
        #expect(String(decoding: reply, as: UTF8.self) == "\u{1B}[1;4R")
        #expect(terminal.feed(Array("def".utf8)).isEmpty)
    }

    @Test func linesScrolledOffAreKeptTrimmedAndNumbered() throws {
        let terminal = try terminal(rows: 3, columns: 10, (1...5).map { "line \($0)" }.joined(separator: "\r\n"))
        #expect(terminal.scrollback.count == 2)
        let kept = terminal.scrollback.lines(0..<2)
        #expect(kept.map { $0.map(\.text).joined() } == ["line 1", "line 2"])
        #expect(kept[0].count == 6)
        #expect(terminal.snapshot().text(ofRow: 0) == "line 3")
    }

    @Test func theScrollbackKeepsToItsBounds() throws {
        var limits = VirtualTerminal.Limits()
        limits.scrollbackLines = 100
        let terminal = try VirtualTerminal(rows: 5, columns: 20, limits: limits)
        for line in 1...5000 { terminal.feed(Array("\(line)\r\n".utf8)) }
        #expect(terminal.scrollback.count == 100)
        #expect(terminal.scrollback.firstNumber == 4996 - 100)
        let last = terminal.scrollback.lines(4995..<4996)
        #expect(last.map { $0.map(\.text).joined() } == ["4996"])
        #expect(terminal.scrollback.lines(0..<10).isEmpty)
    }

    @Test func scrollbackCellsAreBoundedToo() {
        var scrollback = Scrollback(maximumLines: 1000, maximumCells: 25)
        for _ in 0..<10 { scrollback.push(Array(repeating: ScreenCell(text: "x"), count: 10)) }
        #expect(scrollback.count == 2)
        #expect(scrollback.cells == 20)
        scrollback.push(Array(repeating: ScreenCell(text: "y"), count: 26))
        #expect(scrollback.count == 0 && scrollback.pushed == 11)
        scrollback.push([ScreenCell(text: "z")])
        #expect(scrollback.lines(0..<100).map { $0.map(\.text).joined() } == ["z"])
        #expect(scrollback.popNewest()?.first?.text == "z")
        #expect(scrollback.count == 0 && scrollback.pushed == 11)
    }

    @Test func onlyTheRowsWrittenChangeTheirVersion() throws {
        let terminal = try terminal("a\r\nb\r\nc")
        let before = (0..<24).map(terminal.rowVersion)
        terminal.feed(Array("\u{1B}[2;1Hchanged".utf8))
        let after = (0..<24).map(terminal.rowVersion)
        #expect(after[1] > before[1])
        #expect((0..<24).filter { $0 != 1 }.allSatisfy { after[$0] == before[$0] })
    }

    @Test func resizesKeepToTheLimits() throws {
        let terminal = try terminal(rows: 24, columns: 80, "abcdef")
        try terminal.resize(rows: 10, columns: 4)
        #expect(terminal.snapshot().rows == 10 && terminal.snapshot().columns == 4)
        #expect(throws: VirtualTerminal.SizeError.self) { try terminal.resize(rows: 0, columns: 80) }
        #expect(throws: VirtualTerminal.SizeError.self) { try terminal.resize(rows: 24, columns: 1001) }
        #expect(throws: VirtualTerminal.SizeError.self) { try VirtualTerminal(rows: 1001, columns: 80) }
        let error = VirtualTerminal.SizeError(rows: 0, columns: 80, limits: .init())
        #expect(error.description == "a terminal of 80×0 is outside 1×1 to 1000×1000")
    }

    @Test func hostileOutputLeavesAWorkingTerminal() throws {
        let terminal = try terminal(rows: 24, columns: 80)
        // A megabyte of bytes without a pattern a terminal would care for (a multiplicative hash).
        for chunk in 0..<64 {
            terminal.feed((0..<16384).map { UInt8(truncatingIfNeeded: ((chunk << 14 | $0) &* 0x9E37_79B1) >> 11) })
        }
        // Endless parameters, an endless string, a megabyte line.
        terminal.feed(Array("\u{1B}[".utf8) + Array(repeating: UInt8(ascii: "9"), count: 1 << 20))
        terminal.feed(Array("\u{1B}]2;".utf8) + Array(repeating: UInt8(ascii: "t"), count: 1 << 20) + [0x07])
        terminal.feed(Array(repeating: UInt8(ascii: "x"), count: 1 << 20))
        terminal.feed(Array("\u{1B}c\u{1B}[Hstill here".utf8))
        #expect(terminal.snapshot().text(ofRow: 0) == "still here")
        #expect(terminal.title.utf8.count <= 1024)
    }
}
