import TestSupport
import Testing

@testable import HerdrKit

@Suite struct OutputTailTests {
    private func lines(_ chunks: [String], limit: Int = 3) -> [String] {
        var tail = OutputTail()
        for chunk in chunks { tail.append(Array(chunk.utf8)) }
        return tail.readableLines(limit: limit)
    }

    @Test func unixShellOutput() {
        let output = [
            "\u{1B}]0;me@mac: ~\u{07}\u{1B}[?2004h$ herdr\r\n\u{1B}[?2004l\r",
            "Last login: Mon Jan 1 10:00\r\n",
            "\u{1B}[01;31mbash: herdr: command not found\u{1B}[0m\r\n",
            "\u{1B}[?2004h",
        ]
        #expect(lines(output) == ["$ herdr", "Last login: Mon Jan 1 10:00", "bash: herdr: command not found"])
    }

    @Test func conptyShapedOutput() {
        // What Windows OpenSSH's ConPTY sends: hidden cursor, title, absolute moves instead of newlines,
        // cursor-forward instead of spaces, erase-character runs.
        let output =
            "\u{1B}[?25l\u{1B}[2J\u{1B}[m\u{1B}[H\u{1B}]0;C:\\WINDOWS\\system32\\conhost.exe\u{07}\u{1B}[?25h"
            + "\u{1B}[?25lherdr : The term 'herdr' is not recognized\u{1B}[K\u{1B}[2;1H"
            + "At line:1 char:1\u{1B}[15X\u{1B}[3;1H+\u{1B}[1Cherdr\u{1B}[4;1H+\u{1B}[1C~~~~~\u{1B}[K"
            + "\u{1B}[5;1H\u{1B}[?25h"
        #expect(
            lines([output], limit: 10) == [
                "herdr : The term 'herdr' is not recognized", "At line:1 char:1", "+ herdr", "+ ~~~~~",
            ])
        #expect(lines([output]) == ["At line:1 char:1", "+ herdr", "+ ~~~~~"])
    }

    @Test func keepsOnlyTheLastLinesUpToTheLimit() {
        let output = (1...10).map { "line \($0)\n" }
        #expect(lines(output) == ["line 8", "line 9", "line 10"])
        #expect(lines(output, limit: 1) == ["line 10"])
        #expect(lines(output, limit: 0) == [])
        #expect(lines(["only\n"]) == ["only"])
        #expect(lines([]) == [])
    }

    @Test func emptyAndBlankLinesAreSkippedAndTrailingSpaceTrimmed() {
        #expect(lines(["a  \n\n   \n\t\nb\t \r\n\u{1B}[0m\n"]) == ["a", "b"])
        #expect(lines(["  indented\n"]) == ["  indented"])
    }

    @Test func oscDcsApcAndTwoByteEscapesAreStripped() {
        let output =
            "\u{1B}]8;;https://example.com\u{1B}\\link\u{1B}]8;;\u{1B}\\ text\n"  // OSC ended by ST
            + "\u{1B}P+q544e\u{1B}\\dcs gone\n"  // DCS
            + "\u{1B}_apc payload\u{1B}\\\u{1B}^pm\u{1B}\\\u{1B}Xsos\u{1B}\\plain\n"  // APC, PM, SOS
            + "\u{1B}(B\u{1B}7\u{1B}8\u{1B}=\u{1B}#8charset\n"  // designations and two-byte sequences
        #expect(lines([output], limit: 10) == ["link text", "dcs gone", "plain", "charset"])
    }

    @Test func escapesSplitAcrossChunksAreStillStripped() {
        #expect(lines(["ab\u{1B}", "[3", "1mcd\u{1B}]0;ti", "tle\u{07}ef\n"]) == ["abcdef"])
    }

    @Test func carriageReturnsFollowTheDocumentedRule() {
        // CRLF is a line break, a CR at the end ends the line, and a CR followed by text overwrites.
        #expect(lines(["one\r\ntwo\r"]) == ["one", "two"])
        #expect(lines(["progress 10%\rprogress 20%\rprogress 100%\n"]) == ["progress 100%"])
        #expect(lines(["abc\r\r\n"]) == ["abc"])
    }

    @Test func controlCharactersAreDroppedAndTabsBecomeSpaces() {
        #expect(lines(["a\u{07}b\u{08}c\u{00}d\u{7F}e\tf\n"]) == ["abcde f"])
        // A C1 control encoded in UTF-8 (U+009B, CSI) is dropped too.
        #expect(lines(["x\u{9B}y\n"]) == ["xy"])
    }

    @Test func invalidUTF8IsReplaced() {
        var tail = OutputTail()
        tail.append(Array("bad ".utf8) + [0xFF, 0xC3] + Array(" end\nnext é\n".utf8))
        #expect(tail.readableLines() == ["bad \u{FFFD}\u{FFFD} end", "next é"])
    }

    @Test func keepsOnlyTheEndOfLongOutput() {
        var tail = OutputTail()
        for index in 0..<2_000 { tail.append(Array("noise line \(index)\n".utf8)) }
        tail.append(Array("\u{1B}[31mError: connection refused\u{1B}[0m\r\n".utf8))
        #expect(tail.readableLines(limit: 2) == ["noise line 1999", "Error: connection refused"])
        // What is kept is bounded and recent: the window ends with the newest lines, in order.
        let all = tail.readableLines(limit: 10_000)
        let bytes = all.reduce(0) { $0 + $1.utf8.count + 1 }
        #expect(bytes >= OutputTail.capacity - 20)
        #expect(bytes <= 2 * OutputTail.capacity)
        let numbers = all.dropFirst().dropLast().map { Int($0.dropFirst("noise line ".count)) }
        #expect(numbers == Array((2_000 - numbers.count)..<2_000))
    }

    @Test func aSingleHugeLineKeepsItsEnd() {
        var tail = OutputTail()
        tail.append(Array(repeating: UInt8(ascii: "x"), count: 5 * OutputTail.capacity))
        tail.append(Array("é the end".utf8))
        let lines = tail.readableLines()
        #expect(lines.count == 1)
        #expect(lines[0].hasSuffix("xé the end"))
        #expect(lines[0].utf8.count <= 2 * OutputTail.capacity)
        tail.append(Array("\nafter\n".utf8))
        #expect(tail.readableLines().last == "after")
    }

    @Test func aCutInsideAMultibyteCharacterDropsTheOrphanedBytes() {
        var tail = OutputTail()
        // 3-byte characters, so some cut lands inside one whatever the window size.
        for _ in 0..<3 { tail.append(Array(String(repeating: "€", count: OutputTail.capacity / 3 + 1).utf8)) }
        let line = tail.readableLines()[0]
        #expect(!line.isEmpty)
        #expect(line.unicodeScalars.allSatisfy { $0 == "€" })
    }

    @Test func carriageReturnStateSurvivesTheCut() {
        var tail = OutputTail()
        tail.append(Array(String(repeating: "a", count: 3 * OutputTail.capacity).utf8) + [0x0D])
        tail.append(Array(String(repeating: "\u{1B}[0m", count: OutputTail.capacity / 2).utf8))
        tail.append(Array("overwritten\n".utf8))
        #expect(tail.readableLines() == ["overwritten"])
    }

    @Test func aHugeOSCPayloadDoesNotHideWhatFollows() {
        var tail = OutputTail()
        tail.append(Array("\u{1B}]0;".utf8) + Array(repeating: UInt8(ascii: "t"), count: 3 * OutputTail.capacity))
        tail.append(Array("\u{07}\u{1B}[38;5;196mlast words\n".utf8))
        #expect(tail.readableLines() == ["last words"])
    }

    @Test func unterminatedSequencesSwallowOnlyTheirOwnBytes() {
        #expect(lines(["before\n\u{1B}[12;34"]) == ["before"])
        #expect(lines(["text\n\u{1B}]0;title never ends"]) == ["text"])
        // An ESC inside an OSC that is not ST ends it and starts a new sequence.
        #expect(lines(["\u{1B}]0;title\u{1B}[1mbold\n"]) == ["bold"])
    }
}
