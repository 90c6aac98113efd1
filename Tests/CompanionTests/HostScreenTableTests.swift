import Foundation
import HerdrAgents
import ScreenModel
import SessionProtocol
import Testing

/// Screen sessions in `HostSessionTable`, driven as the pure state machine it is: the open, the
/// states paced and acknowledged, the exit after the last screen, a resume of the right kind
/// only, the scrollback, and the credit and window of byte sessions refused.
@Suite struct HostScreenTableTests {
    typealias Table = HostSessionTable
    static let phone = HostSessionTableTests.phone

    /// What the shell's terminal emulator would hand over: rows of text, padded to 10 columns.
    static func screen(_ rows: [String]) -> TerminalScreen { ScreenStateTests.screen(rows) }

    /// Opens a screen session on `stream` and starts its PTY; its id and token.
    static func start(_ table: inout Table, stream: UInt32, _ now: inout Double) throws -> (Table.SessionID, [UInt8]) {
        let opened = table.received(
            .openScreen(stream: stream, target: .session(name: nil), cols: 10, rows: 3), from: phone, now: now)
        guard case .spawn(let id, phone, .session(nil), 10, 3, true) = try #require(opened.last) else {
            Issue.record("no screen spawn: \(opened)")
            throw CancellationError()
        }
        #expect(table.spawned(id, failure: nil) == [.allowReading(id, upTo: .max)], "read all the time")
        let started = HostSessionTableTests.drain(&table, phone, &now)
        guard started.count == 1, case .screenStarted(stream, let token, 0) = started[0] else {
            Issue.record("not started: \(started)")
            throw CancellationError()
        }
        return (id, token)
    }

    /// The table's messages for the phone at `now` with `screen` as the terminal's.
    static func send(_ table: inout Table, _ screen: TerminalScreen?, bells: UInt32 = 0, now: Double)
        -> [SessionMessage]
    {
        table.messages(for: phone, now: now, screens: { _ in screen.map { ($0, bells) } })
    }

    static func states(_ messages: [SessionMessage]) -> [ScreenUpdate] {
        messages.compactMap { if case .screen(let update) = $0 { update } else { nil } }
    }

    @Test func statesGoWhenTheScreenChangesPacedAndAcknowledged() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, stream: 1, &now)

        // The first state goes whole, at once.
        #expect(table.nextDeadline(now: now) == now, "a new connection's first state is due")
        let first = Self.states(Self.send(&table, Self.screen(["$", "", ""]), now: now))
        #expect(
            first.map(\.state) == [1] && first[0].base == 0 && first[0].lines.map(\.index) == [0],
            "blank rows go as none")

        // A change waits 8 ms for more of it to come, then only the changed row goes.
        table.screenChanged(id, now: now + 0.001)
        #expect(table.nextDeadline(now: now + 0.001) == now + 0.020, "the minimum interval after the first")
        #expect(Self.send(&table, Self.screen(["$ l", "", ""]), now: now + 0.010) == [])
        let second = Self.states(Self.send(&table, Self.screen(["$ ls", "", ""]), now: now + 0.020))
        #expect(second.map(\.state) == [2] && second[0].base == 1 && second[0].lines.map(\.index) == [0])

        // An acknowledgement of a state in flight is taken; of any other, the device is broken.
        #expect(table.received(.screenAck(stream: 1, state: 2), from: Self.phone, now: now + 0.1) == [])
        #expect(
            HostSessionTableTests.isDrop(
                table.received(.screenAck(stream: 1, state: 9), from: Self.phone, now: now + 0.1), Self.phone))
    }

    @Test func inputIsCountedAndAcknowledgedInALaterState() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, stream: 1, &now)
        _ = Self.send(&table, Self.screen(["$", "", ""]), now: now)
        #expect(
            table.received(.input(stream: 1, data: Array("ls".utf8)), from: Self.phone, now: now) == [
                .write(id, Array("ls".utf8))
            ])
        // Nothing on the screen changed; the input's acknowledgement still goes, 50 ms later.
        #expect(table.nextDeadline(now: now) == now + 0.050)
        let state = Self.states(Self.send(&table, Self.screen(["$", "", ""]), now: now + 0.050))
        #expect(state.map(\.inputBytes) == [2] && state[0].lines.isEmpty)
    }

    @Test func theExitComesAfterTheLastScreenAndNamesIt() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, stream: 1, &now)
        _ = Self.send(&table, Self.screen(["$", "", ""]), now: now)
        table.screenChanged(id, now: now)
        table.exited(id, status: 3, signal: nil)
        // The program's last output has not gone yet: its state first, the exit after it.
        let last = Self.send(&table, Self.screen(["bye", "", ""]), now: now + 0.001)
        #expect(last == [], "the last state waits its 8 ms like any")
        let end = Self.send(&table, Self.screen(["bye", "", ""]), now: now + 0.020)
        #expect(Self.states(end).map(\.state) == [2])
        #expect(end.last == .exit(stream: 1, end: 2, status: 3, signal: nil))
        #expect(Self.send(&table, Self.screen(["bye", "", ""]), now: now + 1) == [], "once")
    }

    @Test func aResumeTakesOnlyAScreenSessionsTokenAndSendsTheWholeScreen() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, token) = try Self.start(&table, stream: 1, &now)
        let (_, byteToken) = try HostSessionTableTests.start(&table, Self.phone, stream: 2, &now)
        _ = Self.send(&table, Self.screen(["$", "", ""]), now: now)
        _ = table.received(.input(stream: 1, data: [0x61, 0x62]), from: Self.phone, now: now)
        _ = table.disconnected(Self.phone, now: now)
        table.connected(Self.phone)

        // Each kind's token resumes only its own kind.
        #expect(
            table.received(
                .resumeScreen(stream: 5, token: byteToken, cols: 10, rows: 3), from: Self.phone, now: now + 1) == [])
        #expect(
            table.received(
                .resume(stream: 6, token: token, received: 0, cols: 10, rows: 3, window: 4096), from: Self.phone,
                now: now + 1) == [])
        let refusals = HostSessionTableTests.drain(&table, Self.phone, &now)
        let refused = refusals.map { message -> UInt32 in
            if case .refused(let stream, .unknownSession, _) = message { stream } else { 0 }
        }
        #expect(refused == [5, 6])

        let resumed = table.received(
            .resumeScreen(stream: 7, token: token, cols: 12, rows: 4), from: Self.phone, now: now + 1)
        #expect(resumed == [.resize(id, cols: 12, rows: 4)])
        let messages = Self.send(&table, Self.screen(["$ ab", "", ""]), now: now + 1)
        #expect(messages.first == .screenStarted(stream: 7, token: token, inputReceived: 2))
        let whole = Self.states(messages)
        #expect(whole.map(\.base) == [0] && whole[0].state == 2 && whole[0].stream == 7, "numbering goes on")
        #expect(whole[0].lines.map(\.index) == [0], "the whole screen: its one row that is not blank")
    }

    @Test func creditWindowsAndScrollbackFitAScreenSession() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try Self.start(&table, stream: 1, &now)
        #expect(
            HostSessionTableTests.isDrop(
                table.received(.credit(stream: 1, consumed: 1), from: Self.phone, now: now), Self.phone),
            "a screen session sends no output to credit")
        #expect(table.setWindow(1 << 20, stream: 1, from: Self.phone) == [])

        let asked = table.received(.scrollbackRequest(stream: 1, end: 40, count: 5), from: Self.phone, now: now)
        #expect(asked == [.readScrollback(id, stream: 1, end: 40, count: 5)])
        let lines = ScrollbackLines.answer(
            stream: 1, lines: [[ScreenCell(text: "x")]], first: 39, oldest: 0, total: 40)
        table.scrollbackRead(id, lines)
        // An answer for a stream the session is no longer on is dropped.
        table.scrollbackRead(id, ScrollbackLines.answer(stream: 9, lines: [], first: 40, oldest: 0, total: 40))
        let answers = Self.send(&table, nil, now: now)
        #expect(answers == [.scrollback(lines)])
        // Of a byte session, no scrollback: it keeps none.
        _ = try HostSessionTableTests.start(&table, Self.phone, stream: 2, &now)
        #expect(table.received(.scrollbackRequest(stream: 2, end: 40, count: 5), from: Self.phone, now: now) == [])
    }

    @Test func anAgentsScreenIsCheckedAgainstTheBoard() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let key = OpenAgentTableTests.key
        let board = OpenAgentTableTests.board([key])
        let open = table.received(
            .openScreen(stream: 1, target: .agent(session: key.session, pane: key.pane), cols: 10, rows: 3),
            from: Self.phone, now: now, agents: board)
        #expect(open == [.spawn(1, device: Self.phone, target: .agent(key), cols: 10, rows: 3, screen: true)])
        let other = table.received(
            .openScreen(stream: 2, target: .agent(session: key.session, pane: "w9:p9"), cols: 10, rows: 3),
            from: Self.phone, now: now, agents: board)
        #expect(other.count == 1 && table.sessionCount == 1)
        #expect(
            HostSessionTableTests.onlyRefusal(
                HostSessionTableTests.drain(&table, Self.phone, &now), stream: 2, .unknownAgent)
                != nil)
    }
}
