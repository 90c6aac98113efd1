import LinkEmulator
import ScreenModel
@testable import SessionProtocol
import TerminalScreen
import Testing

/// A screen session's states end to end without a socket: `ScreenStateSender` on the computer's
/// side, `ScreenReplica` on the device's, the bytes between them parsed as the channel would;
/// the device's screen is the computer's after every state, the pacing is mosh's, the echo
/// acknowledgement waits its 50 ms.
@Suite struct ScreenStateTests {
    /// The sender's messages as bytes and back, into the replica: the outcome of the last.
    static func deliver(_ messages: [SessionMessage], to replica: inout ScreenReplica) throws -> ScreenReplica.Outcome?
    {
        var outcome: ScreenReplica.Outcome?
        for message in messages {
            let bytes = message.bytes
            #expect(bytes.count <= SessionMessage.maximumLength)
            guard case .screen(let update) = try SessionMessage(parsing: bytes) else {
                Issue.record("not a screen message: \(message)")
                return nil
            }
            outcome = replica.apply(update)
        }
        return outcome
    }

    static func screen(_ rows: [String], columns: Int = 10, cursor: (Int, Int) = (0, 0), title: String = "")
        -> TerminalScreen
    {
        TerminalScreen(
            lines: rows.map { text in
                let cells = text.map { ScreenCell(text: String($0)) }
                return cells + Array(repeating: .blank, count: columns - cells.count)
            }, cursor: TerminalScreen.Cursor(row: cursor.0, column: cursor.1, visible: true), title: title)
    }

    @Test func theFirstStateIsWholeAndTheNextOnlyWhatChanged() throws {
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        let first = Self.screen(["$ ls", "", "", ""], title: "shell")
        #expect(sender.nextSendTime() == -.infinity, "a new connection's first state goes at once")
        let whole = sender.messages(for: first, bells: 0, now: 0)
        guard case .screen(let update) = whole.first else { throw TestError.unexpected }
        #expect(update.base == 0 && update.state == 1 && update.title == "shell")
        #expect(update.lines.map(\.index) == [0], "blank rows are not sent")
        #expect(try Self.deliver(whole, to: &replica) == .complete(state: 1, rang: false))
        #expect(replica.screen == first)
        #expect(sender.nextSendTime() == nil, "nothing new")

        var second = first
        second.lines[1] = Self.screen(["a.txt"]).lines[0]
        second.cursor.row = 2
        sender.screenChanged(now: 0.001)
        #expect(sender.nextSendTime() == 0.020, "the collect delay, then the least interval")
        let change = sender.messages(for: second, bells: 1, now: 0.020)
        guard case .screen(let diff) = change.first else { throw TestError.unexpected }
        #expect(diff.base == 1 && diff.state == 2 && diff.title == nil && diff.lines.map(\.index) == [1])
        #expect(try Self.deliver(change, to: &replica) == .complete(state: 2, rang: true))
        #expect(replica.screen == second)
    }

    @Test func aScrollIsSentAsANumberAndTheNewRows() throws {
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        let before = Self.screen(["1", "2", "3", "4", "5"])
        _ = try Self.deliver(sender.messages(for: before, bells: 0, now: 0), to: &replica)
        let after = Self.screen(["3", "4", "5", "6", ""])
        sender.screenChanged(now: 1)
        let messages = sender.messages(for: after, bells: 0, now: 1)
        guard case .screen(let update) = messages.first else { throw TestError.unexpected }
        #expect(update.scroll == 2 && update.lines.map(\.index) == [3])
        _ = try Self.deliver(messages, to: &replica)
        #expect(replica.screen == after)
    }

    @Test func aThousandByAThousandScreenSpansSeveralMessagesAndArrivesWhole() throws {
        var sender = ScreenStateSender(stream: 9)
        var replica = ScreenReplica()
        let styles = (0..<7).map { CellStyle(foreground: .rgb(red: UInt8($0), green: 0, blue: 9), flags: [.italic]) }
        let row = (0..<1000).map {
            ScreenCell(text: $0 % 2 == 0 ? "語" : "", width: $0 % 2 == 0 ? 2 : 0, style: styles[$0 / 2 % 7])
        }
        let big = TerminalScreen(
            lines: Array(repeating: row, count: 1000),
            cursor: TerminalScreen.Cursor(row: 999, column: 999, visible: false))
        let messages = sender.messages(for: big, bells: 0, now: 0)
        #expect(messages.count > 20)
        var outcomes: [ScreenReplica.Outcome] = []
        for message in messages {
            guard case .screen(let update) = try SessionMessage(parsing: message.bytes) else {
                throw TestError.unexpected
            }
            outcomes.append(replica.apply(update))
        }
        #expect(outcomes.dropLast().allSatisfy { $0 == .partial })
        #expect(outcomes.last == .complete(state: 1, rang: false))
        #expect(replica.screen == big)
    }

    @Test func pacingIsHalfTheRoundTripWithinTwentyAndTwoHundredFiftyMilliseconds() throws {
        for (roundTrip, interval) in [(0.010, 0.020), (0.100, 0.050), (0.300, 0.150), (2.0, 0.250)] {
            var sender = ScreenStateSender(stream: 1)
            var screen = Self.screen(["a"])
            var now = 0.0
            // Every state acknowledged one round trip later: the smoothed round trip converges.
            for step in 0..<60 {
                screen.lines[0][1] = ScreenCell(text: String(step % 10))
                sender.screenChanged(now: now)
                let due = try #require(sender.nextSendTime())
                now = max(now, due)
                _ = sender.messages(for: screen, bells: 0, now: now)
                let acknowledged = sender.acknowledged(sender.lastState, now: now + roundTrip)
                #expect(acknowledged)
                now += roundTrip
            }
            #expect(abs(sender.interval - interval) < 0.001, "round trip \(roundTrip)")
        }
    }

    @Test func aBusyPathGetsTheNewestScreenNotAQueue() throws {
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        var screen = Self.screen(["0"])
        var delivered: [[SessionMessage]] = []
        var now = 0.0
        for step in 1...10 {
            screen.lines[0][0] = ScreenCell(text: String(step % 10))
            sender.screenChanged(now: now)
            if let due = sender.nextSendTime() {
                now = max(now, due)
                delivered.append(sender.messages(for: screen, bells: 0, now: now))
            }
            now += 0.001
        }
        #expect(delivered.count == 4, "four states in flight, then it waits for an acknowledgement")
        #expect(sender.nextSendTime() == nil)
        for messages in delivered { _ = try Self.deliver(messages, to: &replica) }
        let acknowledged = sender.acknowledged(4, now: now)
        #expect(acknowledged, "one acknowledgement covers the states before it")
        let due = try #require(sender.nextSendTime())
        let newest = sender.messages(for: screen, bells: 0, now: max(now, due))
        #expect(try Self.deliver(newest, to: &replica) == .complete(state: 5, rang: false))
        #expect(replica.screen == screen, "the newest screen, the ones between never sent")
        let again = sender.acknowledged(4, now: now)
        #expect(!again, "a state acknowledged twice, or never sent, is refused")
        let never = sender.acknowledged(99, now: now)
        #expect(!never)
    }

    @Test func inputIsAcknowledgedFiftyMillisecondsAfterTheProgramGotIt() throws {
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        let screen = Self.screen(["$ "])
        _ = try Self.deliver(sender.messages(for: screen, bells: 0, now: 0), to: &replica)
        let acknowledged = sender.acknowledged(1, now: 0.001)
        #expect(acknowledged)
        sender.inputWritten(total: 3, now: 1.0)
        #expect(sender.nextSendTime() == 1.05, "a state goes when the input is 50 ms old, even with no change")
        let confirming = sender.messages(for: screen, bells: 0, now: 1.05)
        #expect(try Self.deliver(confirming, to: &replica) == .complete(state: 2, rang: false))
        #expect(replica.inputBytes == 3)
        #expect(sender.nextSendTime() == nil)
    }

    @Test func aNewConnectionGetsTheWholeScreenUnderANewNumber() throws {
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        _ = try Self.deliver(sender.messages(for: Self.screen(["a"], title: "t"), bells: 0, now: 0), to: &replica)
        sender.restart()
        replica.restart()
        let messages = sender.messages(for: Self.screen(["b"], title: "t"), bells: 0, now: 0.001)
        guard case .screen(let update) = messages.first else { throw TestError.unexpected }
        #expect(update.base == 0 && update.state == 2 && update.title == "t")
        #expect(try Self.deliver(messages, to: &replica) == .complete(state: 2, rang: false))
        #expect(replica.screen == Self.screen(["b"], title: "t"))
    }

    @Test func theReplicaRefusesWhatTheComputerMayNotSend() throws {
        var sender = ScreenStateSender(stream: 1)
        let first = sender.messages(for: Self.screen(["a"]), bells: 0, now: 0)
        sender.screenChanged(now: 1)
        let second = sender.messages(for: Self.screen(["b"]), bells: 0, now: 1)
        var replica = ScreenReplica()
        guard case .broken = try Self.deliver(second, to: &replica) else {
            Issue.record("a change of a state this device does not hold was applied")
            return
        }
        var fresh = ScreenReplica()
        _ = try Self.deliver(first, to: &fresh)
        guard case .broken = try Self.deliver(first, to: &fresh) else {
            Issue.record("a state number again was applied")
            return
        }
    }

    /// Random screens of a seeded generator, with scrolls, resizes, titles and bells, through the
    /// bytes: the device holds the computer's screen after every state.
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func randomScreensArriveAsTheyWere(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        func below(_ bound: Int) -> Int { Int.random(in: 0..<max(1, bound), using: &random) }
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        var columns = 12
        var screen = Self.screen(Array(repeating: "", count: 6), columns: columns)
        let glyphs: [ScreenCell] = [
            ScreenCell(text: "x"), ScreenCell(text: "é"), ScreenCell(text: " "), .blank,
            ScreenCell(text: "y", style: CellStyle(background: .indexed(4))),
            ScreenCell(text: "z", style: CellStyle(flags: [.reverse], underline: .double)),
        ]
        for step in 0..<300 {
            switch below(10) {
            case 0:
                let count = 1 + below(screen.rows - 1)
                screen.lines.removeFirst(count)
                screen.lines += Array(repeating: Array(repeating: .blank, count: columns), count: count)
            case 1:
                columns = 4 + below(20)
                screen = Self.screen(Array(repeating: "q", count: 2 + below(8)), columns: columns)
            case 2: screen.title = "title \(step)"
            case 3:
                sender.restart()
                replica.restart()
            case 4:
                // A wide character and its right half, over whatever was there.
                let row = below(screen.rows)
                let column = below(columns - 1)
                let style = CellStyle(flags: step % 2 == 0 ? [.bold] : [])
                screen.lines[row][column] = ScreenCell(text: "界", width: 2, style: style)
                screen.lines[row][column + 1] = ScreenCell(text: "", width: 0, style: style)
            default:
                for _ in 0..<(1 + below(6)) {
                    screen.lines[below(screen.rows)][below(columns)] =
                        glyphs[below(glyphs.count)]
                }
            }
            screen.cursor = TerminalScreen.Cursor(
                row: below(screen.rows), column: below(columns), visible: step % 3 != 0)
            let messages = sender.messages(for: screen, bells: UInt32(step / 50), now: Double(step))
            guard !messages.isEmpty else { continue }
            guard case .complete(let state, _) = try Self.deliver(messages, to: &replica) else {
                Issue.record("state not complete at step \(step)")
                return
            }
            #expect(replica.screen == screen, "step \(step)")
            let acknowledged = sender.acknowledged(state, now: Double(step) + 0.01)
            #expect(acknowledged)
        }
    }

    /// A change inside a row is sent as the cells that changed, as mosh's client redraws them:
    /// groups of changes a few cells apart are one part, a wide character is never split, and a
    /// row that now ends sooner clears the rest.
    @Test func aChangeWithinARowIsSentAsTheCellsThatChanged() throws {
        let text = "PID USER  %CPU  TIME+   COMMAND        load 0.87, 1.06, 1.31    x"
        let wideColumn = text.count - 3
        var old = Self.screen([text], columns: 80).lines[0]
        old[wideColumn] = ScreenCell(text: "界", width: 2)
        old[wideColumn + 1] = ScreenCell(text: "", width: 0)
        func changed(_ edit: (inout [ScreenCell]) -> Void) -> [ScreenUpdate.Row] {
            var new = old
            edit(&new)
            return ScreenDiff.changes(0, from: old, to: new)
        }
        let one = changed { $0[12] = ScreenCell(text: "9") }
        #expect(one == [ScreenUpdate.Row(index: 0, column: 12, cells: [ScreenCell(text: "9")], keepsRest: true)])
        let near = changed {
            $0[12] = ScreenCell(text: "9")
            $0[15] = ScreenCell(text: "8")
        }
        #expect(near.map { [$0.column, $0.end] } == [[12, 16]], "changes 3 cells apart are one part")
        let apart = changed {
            $0[2] = ScreenCell(text: "9")
            $0[40] = ScreenCell(text: "8")
        }
        #expect(apart.map { [$0.column, $0.end] } == [[2, 3], [40, 41]] && apart.allSatisfy(\.keepsRest))
        let wide = changed { $0[wideColumn + 1] = ScreenCell(text: "y") }
        #expect(wide.first?.column == wideColumn, "the wide character's cell starts the part")
        let shorter = changed { row in
            for column in 50..<80 { row[column] = .blank }
        }
        #expect(shorter == [ScreenUpdate.Row(index: 0, column: 50, cells: [])], "the rest of the row cleared")
        // Through the sender: the bytes are those of one cell, not the row.
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        var screen = Self.screen([text, text], columns: 80)
        _ = try Self.deliver(sender.messages(for: screen, bells: 0, now: 0), to: &replica)
        screen.lines[1][12] = ScreenCell(text: "9")
        sender.screenChanged(now: 0.001)
        let messages = sender.messages(for: screen, bells: 0, now: 1)
        #expect(messages.map(\.bytes.count).reduce(0, +) < 70, "\(messages.map(\.bytes.count))")
        _ = try Self.deliver(messages, to: &replica)
        #expect(replica.screen == screen)
    }

    /// A real terminal's output (libvterm) on one side, the replica on the other.
    @Test func aVirtualTerminalsScreensReachTheDevice() throws {
        let terminal = try VirtualTerminal(rows: 5, columns: 20)
        var sender = ScreenStateSender(stream: 1)
        var replica = ScreenReplica()
        let outputs = [
            "\u{1B}]2;build\u{07}$ make\r\n", "\u{1B}[1;31merror\u{1B}[0m: 世界\r\n", "a\r\nb\r\nc\r\nd\r\ne\r\nf",
            "\u{1B}[?1049h\u{1B}[2J\u{1B}[Hfull screen\u{1B}[?1h", "\u{1B}[?1049l\u{07}",
        ]
        var now = 0.0
        for output in outputs {
            _ = terminal.feed(Array(output.utf8))
            sender.screenChanged(now: now)
            now = max(now, sender.nextSendTime() ?? now)
            let messages = sender.messages(for: terminal.snapshot(), bells: UInt32(terminal.bells), now: now)
            guard case .complete(let state, _) = try Self.deliver(messages, to: &replica) else {
                Issue.record("no state for \(output.debugDescription)")
                return
            }
            let acknowledged = sender.acknowledged(state, now: now + 0.005)
            #expect(acknowledged)
            #expect(replica.screen == terminal.snapshot(), "after \(output.debugDescription)")
            now += 0.1
        }
        #expect(replica.screen.title == "build" && replica.bells == 1)
    }
}

enum TestError: Error { case unexpected }
