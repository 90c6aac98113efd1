import ScreenModel
import SessionProtocol
import Testing

/// The screen session's messages (docs/companion.md, "Screen sessions"): every one's bytes round
/// trip, every bound of the parser refuses, one encoding for each content.
@Suite struct ScreenMessageTests {
    static let token = (0..<16).map { UInt8($0) &* 13 &+ 1 }
    static let red = CellStyle(foreground: .indexed(1), flags: [.bold])
    static let everything = CellStyle(
        foreground: .rgb(red: 1, green: 2, blue: 3), background: .indexed(255),
        flags: [.bold, .italic, .blink, .reverse, .strike], underline: .curly)

    static func update(
        state: UInt64 = 2, base: UInt64 = 1, columns: Int = 80, rows: Int = 24, scroll: Int = 0, title: String? = nil,
        lines: [ScreenUpdate.Row] = [], cursor: (Int, Int) = (0, 0), isLastPart: Bool = true
    ) -> ScreenUpdate {
        var modes = ScreenModes()
        modes.applicationCursorKeys = true
        modes.mouse = .drag
        return ScreenUpdate(
            stream: 3, state: state, base: base, inputBytes: 17, isLastPart: isLastPart, columns: columns, rows: rows,
            cursor: TerminalScreen.Cursor(row: cursor.0, column: cursor.1, visible: true), modes: modes, bells: 2,
            scroll: scroll, title: title, lines: lines)
    }

    static let samples: [SessionMessage] = [
        .openScreen(stream: 1, target: .session(name: nil), cols: 80, rows: 24),
        .openScreen(stream: 2, target: .session(name: "work"), cols: 1000, rows: 1),
        .openScreen(stream: .max, target: .agent(session: "default", pane: "w1:p2.3"), cols: 1, rows: 1000),
        .resumeScreen(stream: 4, token: token, cols: 120, rows: 40),
        .screenStarted(stream: 5, token: token, inputReceived: .max),
        .screen(update()),
        .screen(update(state: 1, base: 0, title: "", lines: [])),
        .screen(
            update(
                state: .max, base: .max - 1, columns: 1000, rows: 1000, scroll: 999,
                title: String(repeating: "ü", count: 512),
                lines: [
                    .init(index: 0, cells: [ScreenCell(text: "a", style: red), ScreenCell(text: "b")]),
                    .init(
                        index: 999,
                        cells: [
                            ScreenCell(text: "世", width: 2, style: everything),
                            ScreenCell(text: "", width: 0, style: everything), ScreenCell(text: "e\u{301}\u{302}"),
                            .blank, ScreenCell(text: " "),
                        ]),
                ], cursor: (999, 999), isLastPart: false)),
        .screenAck(stream: 6, state: 1),
        .screenAck(stream: 6, state: .max),
        .scrollbackRequest(stream: 7, end: 1 << 40, count: 1),
        .scrollbackRequest(stream: 7, end: 0, count: 1000),
        .scrollback(
            ScrollbackLines(
                stream: 8, first: 10, oldest: 2, total: 13,
                lines: [
                    [ScreenCell(text: "x")], [], [ScreenCell(text: "🙂", width: 2), ScreenCell(text: "", width: 0)],
                ])),
        .scrollback(ScrollbackLines(stream: 8, first: 0, oldest: 0, total: 0, lines: [])),
    ]

    static func refuses(_ bytes: [UInt8]) -> Bool { (try? SessionMessage(parsing: bytes)) == nil }

    static func decoded(_ bytes: [UInt8]) -> ScreenUpdate? {
        guard case .screen(let update) = try? SessionMessage(parsing: bytes) else { return nil }
        return update
    }

    @Test func everyScreenMessageRoundTrips() throws {
        var kinds = Set<UInt8>()
        for message in Self.samples {
            let bytes = message.bytes
            #expect(bytes.count <= SessionMessage.maximumLength)
            #expect(try ChannelMessage(parsing: bytes) == .session(message), "\(message)")
            #expect(try SessionMessage(parsing: bytes).stream == message.stream)
            kinds.insert(bytes[0])
        }
        #expect(kinds == Set(0x0E...0x14), "the seven screen messages, numbered 0x0E to 0x14")
    }

    @Test func everyPrefixIsRefusedAndSoAreTrailingBytes() {
        var checked = 0
        for message in Self.samples {
            let bytes = message.bytes
            let lengths = bytes.count > 400 ? Array(0..<400) + [bytes.count - 1] : Array(0..<bytes.count)
            for length in lengths {
                #expect(Self.refuses(Array(bytes.prefix(length))), "\(message) cut to \(length) bytes")
                checked += 1
            }
            #expect(Self.refuses(bytes + [0]), "\(message) with a byte more")
        }
        #expect(checked > 700)
    }

    /// The offset of a screen message's fields, after the type and the stream.
    enum At {
        static let state = 5, base = 13, flags = 29, columns = 30, rows = 32, cursorRow = 34, cursorColumn = 36
        static let modes = 38, mouse = 39, scroll = 44, titleLength = 46
    }

    static func patched(_ message: SessionMessage, _ edits: [(Int, [UInt8])]) -> [UInt8] {
        var bytes = message.bytes
        for (offset, value) in edits { bytes.replaceSubrange(offset..<(offset + value.count), with: value) }
        return bytes
    }

    @Test func aScreensHeaderIsBounded() {
        let plain = SessionMessage.screen(Self.update())
        #expect(!Self.refuses(plain.bytes))
        let refused: [(String, [(Int, [UInt8])])] = [
            ("state 0", [(At.state, [0, 0, 0, 0, 0, 0, 0, 0]), (At.base, [0, 0, 0, 0, 0, 0, 0, 0])]),
            ("a base not before the state", [(At.base, [0, 0, 0, 0, 0, 0, 0, 2])]),
            ("an unknown flag", [(At.flags, [0x05])]),
            ("0 columns", [(At.columns, [0, 0])]),
            ("1001 rows", [(At.rows, [0x03, 0xE9])]),
            ("the cursor below the screen", [(At.cursorRow, [0, 24])]),
            ("the cursor right of the screen", [(At.cursorColumn, [0, 80])]),
            ("an unknown mode", [(At.modes, [0x20])]),
            ("mouse mode 4", [(At.mouse, [4])]),
            ("a scroll of every row", [(At.scroll, [0, 24])]),
            ("title bytes without the flag", [(At.titleLength, [0, 1])]),
        ]
        for (what, edits) in refused {
            #expect(Self.refuses(Self.patched(plain, edits)), "\(what)")
        }
        // A whole state does not scroll.
        #expect(Self.refuses(Self.patched(.screen(Self.update(state: 1, base: 0)), [(At.scroll, [0, 1])])))
        #expect(!Self.refuses(Self.patched(plain, [(At.scroll, [0, 23])])))
    }

    @Test func rowsAndCellsAreBounded() {
        let one = ScreenUpdate.Row(index: 3, cells: [ScreenCell(text: "a", style: Self.red)])
        let bytes = SessionMessage.screen(Self.update(lines: [one])).bytes
        // After the header: row count, row index, column, run count, style (fg 1 1, bg 0, flags, underline),
        // cell count (the top bit: a text run), the text's length, the text.
        let rows = 50 - 2
        #expect(Array(bytes[rows...]) == [0, 1, 0, 3, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0x80, 1, 0, 1, 0x61])
        // A run with a wide character is each cell: a byte of width and length, then the text.
        let wide = ScreenUpdate.Row(
            index: 3,
            cells: [ScreenCell(text: "界", width: 2, style: Self.red), ScreenCell(text: "", width: 0, style: Self.red)])
        let wideBytes = SessionMessage.screen(Self.update(lines: [wide])).bytes
        #expect(Array(wideBytes[(rows + 13)...]) == [0, 2, 0x83, 0xE7, 0x95, 0x8C, 0x00])
        #expect(
            Self.refuses(Self.patched(.screen(Self.update(lines: [wide])), [(rows + 15, [0xC3])])), "a cell of width 3")
        let refused: [(String, [(Int, [UInt8])])] = [
            ("row 24 of 24", [(rows + 2, [0, 24])]),
            ("more row entries than the message holds", [(rows, [0, 25])]),
            ("column 80 of 80", [(rows + 4, [0, 80])]),
            ("column 80 of 80, keeping the rest", [(rows + 4, [0x80, 80])]),
            ("a colour of kind 3", [(rows + 8, [3])]),
            ("an unknown attribute", [(rows + 11, [0x20])]),
            ("underline 4", [(rows + 12, [4])]),
            ("an empty run", [(rows + 13, [0, 0])]),
            ("more than four bytes of text a cell", [(rows + 15, [0, 5])]),
            ("two cells of one character", [(rows + 13, [0x80, 2])]),
            ("a text run that is not UTF-8", [(rows + 17, [0xFF])]),
        ]
        for (what, edits) in refused {
            #expect(Self.refuses(Self.patched(.screen(Self.update(lines: [one])), edits)), "\(what)")
        }
        let outOfOrder = Self.update(lines: [
            ScreenUpdate.Row(index: 5, cells: []), ScreenUpdate.Row(index: 5, cells: []),
        ])
        #expect(Self.refuses(SessionMessage.screen(outOfOrder).bytes), "a row twice")
        // Parts of one row: each after the one before, which kept the rest of the row.
        let cell = [ScreenCell(text: "c")]
        func parts(_ rows: [ScreenUpdate.Row]) -> [UInt8] { SessionMessage.screen(Self.update(lines: rows)).bytes }
        #expect(
            !Self.refuses(
                parts([
                    ScreenUpdate.Row(index: 5, column: 2, cells: cell, keepsRest: true),
                    ScreenUpdate.Row(index: 5, column: 3, cells: cell),
                ])))
        #expect(
            Self.refuses(
                parts([
                    ScreenUpdate.Row(index: 5, column: 2, cells: cell + cell, keepsRest: true),
                    ScreenUpdate.Row(index: 5, column: 3, cells: cell),
                ])), "overlapping parts")
        #expect(
            Self.refuses(
                parts([
                    ScreenUpdate.Row(index: 5, column: 2, cells: cell),
                    ScreenUpdate.Row(index: 5, column: 9, cells: cell),
                ])),
            "a part after one that cleared the rest")
        #expect(
            Self.refuses(parts([ScreenUpdate.Row(index: 0, column: 79, cells: cell + cell)])),
            "cells past the last column")
        let tooMany = Self.update(
            columns: 2, lines: [ScreenUpdate.Row(index: 0, cells: Array(repeating: ScreenCell(text: "x"), count: 3))])
        #expect(Self.refuses(SessionMessage.screen(tooMany).bytes), "more cells than columns")
        // A cell's text: 32 bytes at most (the encoder cuts; a peer that says more is refused).
        let long = ScreenCell(text: String(repeating: "e\u{301}", count: 11))
        let encoded = SessionMessage.screen(Self.update(lines: [ScreenUpdate.Row(index: 0, cells: [long])])).bytes
        // (After a default style's four bytes: e and U+0301 are 3 bytes, the eleventh e the 31st.)
        #expect(encoded[rows + 14] == 0x40 | 31, "the text cut to at most 32 bytes at a code point's boundary")
        var tooLong = Array(encoded[..<(rows + 14)]) + [0x40 | 33] + Array(repeating: 0x61, count: 33)
        #expect(Self.refuses(tooLong))
        tooLong[rows + 14] = 0x40 | 32
        #expect(Self.refuses(tooLong), "a byte more than its length says")
        // Two runs of one style are one run: the encoding is one for each row.
        let twoRuns =
            Array(encoded[..<(rows + 6)]) + [0, 2] + [0, 0, 0, 0, 0x80, 1, 0, 1, 0x61] + [
                0, 0, 0, 0, 0x80, 1, 0, 1, 0x62,
            ]
        #expect(Self.refuses(twoRuns))
        #expect(!Self.refuses(Array(twoRuns[..<(rows + 6)]) + [0, 1] + Array(twoRuns[(rows + 8)..<(rows + 17)])))
        // A run of characters is sent as its text: each cell alone is refused.
        #expect(Self.refuses(Array(encoded[..<(rows + 6)]) + [0, 1] + [0, 0, 0, 0, 0, 1, 0x41, 0x61]))
        // An empty cell in a text run is a NUL.
        let withEmpty = ScreenUpdate.Row(index: 0, cells: [ScreenCell(text: "x"), .blank, ScreenCell(text: "é")])
        let emptyBytes = SessionMessage.screen(Self.update(lines: [withEmpty])).bytes
        #expect(Array(emptyBytes[(rows + 12)...]) == [0x80, 3, 0, 4, 0x78, 0x00, 0xC3, 0xA9])
        #expect(Self.decoded(emptyBytes)?.lines == [withEmpty])
    }

    @Test func openScreenTakesTheRulesOfOpenAndOpenAgent() {
        let session = SessionMessage.openScreen(stream: 1, target: .session(name: "ok"), cols: 80, rows: 24).bytes
        #expect(session.prefix(2) == [0x0E, 1], "the type, then the version")
        #expect(Self.refuses([0x0E, 2] + session.dropFirst(2)), "version 2")
        var kind2 = session
        kind2[10] = 2
        #expect(Self.refuses(kind2), "a target of kind 2")
        for name in ["", "a b", String(repeating: "n", count: 65)] where !name.isEmpty {
            let bytes = SessionMessage.openScreen(stream: 1, target: .session(name: name), cols: 80, rows: 24).bytes
            #expect(Self.refuses(bytes), "\(name)")
        }
        let badPane = SessionMessage.openScreen(
            stream: 1, target: .agent(session: "default", pane: "a/b"), cols: 80, rows: 24)
        #expect(Self.refuses(badPane.bytes))
        #expect(
            Self.refuses(SessionMessage.openScreen(stream: 1, target: .session(name: nil), cols: 0, rows: 24).bytes))
        #expect(Self.refuses(SessionMessage.resumeScreen(stream: 1, token: Self.token, cols: 80, rows: 1001).bytes))
    }

    @Test func acknowledgementsAndScrollbackAreBounded() {
        #expect(Self.refuses(SessionMessage.screenAck(stream: 1, state: 0).bytes))
        #expect(Self.refuses(SessionMessage.scrollbackRequest(stream: 1, end: 5, count: 0).bytes))
        #expect(Self.refuses(SessionMessage.scrollbackRequest(stream: 1, end: 5, count: 1001).bytes))
        let beyond: [ScrollbackLines] = [
            ScrollbackLines(stream: 1, first: 1, oldest: 2, total: 5, lines: []),
            ScrollbackLines(stream: 1, first: 4, oldest: 2, total: 5, lines: [[], []]),
            ScrollbackLines(stream: 1, first: 0, oldest: 6, total: 5, lines: []),
            ScrollbackLines(stream: 1, first: 6, oldest: 0, total: 5, lines: []),
        ]
        for lines in beyond { #expect(Self.refuses(SessionMessage.scrollback(lines).bytes), "\(lines)") }
    }

    @Test func theComputerSaysItServesScreenSessions() throws {
        let served = CompanionMessage.servedByThisVersion
        #expect(String(decoding: served.bytes, as: UTF8.self) == #"{"serves":{"screen":1}}"#)
        #expect(try CompanionMessage(parsing: served.bytes) == served)
        let later = #"{"serves":{"screen":2,"push":1,"bad name":1,"x":"text","y":-1,"z":1.5}}"#
        #expect(try CompanionMessage(parsing: Array(later.utf8)) == .serves(["screen": 2, "push": 1]))
        let many = "{\"serves\":{" + (0...16).map { "\"k\($0)\":1" }.joined(separator: ",") + "}}"
        #expect(throws: CompanionMessageError.self) { try CompanionMessage(parsing: Array(many.utf8)) }
        #expect(throws: CompanionMessageError.self) { try CompanionMessage(parsing: Array(#"{"serves":1}"#.utf8)) }
    }
}
