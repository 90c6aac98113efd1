import Foundation
import HerdrAgents
import SessionProtocol
import Testing

/// `open agent` in the session table: checked against the computer's own board, then a session
/// like any; and the board's frames counted in the same budget as the sessions'.
@Suite struct OpenAgentTableTests {
    typealias Table = HostSessionTable
    static let phone = HostSessionTableTests.phone
    static let key = AgentKey(session: "default", pane: "w1:p2")

    static func board(_ agents: [AgentKey], sessions: [HerdrSessionInfo]? = nil) -> AgentBoard {
        AgentBoard(
            herdr: .ready,
            sessions: sessions ?? [
                HerdrSessionInfo(name: "default", isDefault: true, state: .ready),
                HerdrSessionInfo(name: "work", isDefault: false, state: .unresponsive, detail: "did not answer ping"),
            ],
            agents: agents.map { HerdrAgent(key: $0, status: .blocked) })
    }

    static func openAgent(_ stream: UInt32, _ key: AgentKey) -> SessionMessage {
        .openAgent(stream: stream, session: key.session, pane: key.pane, cols: 100, rows: 30, window: 1 << 20)
    }

    @Test func anAgentOnTheBoardOpensASessionOnItsPane() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let actions = table.received(
            Self.openAgent(3, Self.key), from: Self.phone, now: now, agents: Self.board([Self.key]))
        #expect(actions == [.spawn(1, device: Self.phone, target: .agent(Self.key), cols: 100, rows: 30, screen: false)])
        _ = table.spawned(1, failure: nil)
        let started = HostSessionTableTests.drain(&table, Self.phone, &now)
        guard case .started(3, let token, 0, _) = started.first else {
            Issue.record("not started: \(started)")
            return
        }
        // From then on an ordinary session: input, resize, and a resume by its token.
        #expect(table.received(.input(stream: 3, data: [0x61]), from: Self.phone, now: now) == [.write(1, [0x61])])
        _ = table.disconnected(Self.phone, now: now)
        table.connected(Self.phone)
        let resumed = table.received(
            .resume(stream: 4, token: token, received: 0, cols: 80, rows: 24, window: 1 << 20), from: Self.phone,
            now: now)
        #expect(resumed.contains(.resize(1, cols: 80, rows: 24)))
    }

    @Test func anAgentNotOnTheBoardIsRefusedWithReasonSixSayingWhich() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let board = Self.board([Self.key])
        func refusal(_ stream: UInt32, _ key: AgentKey, _ board: AgentBoard?) -> String? {
            let actions = table.received(Self.openAgent(stream, key), from: Self.phone, now: now, agents: board)
            #expect(actions.allSatisfy { if case .spawn = $0 { false } else { true } })
            return HostSessionTableTests.onlyRefusal(
                HostSessionTableTests.drain(&table, Self.phone, &now), stream: stream, .unknownAgent)
        }
        #expect(
            refusal(1, AgentKey(session: "default", pane: "w1:p9"), board)
                == "no agent w1:p9 in herdr session default on this computer")
        #expect(
            refusal(2, AgentKey(session: "work", pane: "w1:p2"), board)
                == "no agent w1:p2 in herdr session work on this computer (the session is unresponsive: did not answer ping)"
        )
        #expect(
            refusal(3, AgentKey(session: "other", pane: "w1:p2"), board)
                == "no agent w1:p2 in herdr session other on this computer (herdr has no such session here)")
        let missing = AgentBoard(
            herdr: HerdrAvailability(.notInstalled, detail: "no herdr on PATH and no ~/.config/herdr"))
        #expect(
            refusal(4, Self.key, missing)
                == "no agent w1:p2 in herdr session default on this computer (herdr is not-installed: no herdr on PATH and no ~/.config/herdr)"
        )
        #expect(
            refusal(5, Self.key, nil)
                == "no agent w1:p2 in herdr session default on this computer (herdr is failing: herdr-host has not read herdr yet)"
        )
        #expect(table.sessionCount == 0)
    }

    @Test func anAgentOpenedOnAStreamInUseEndsTheConnection() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        _ = try HostSessionTableTests.start(&table, Self.phone, stream: 1, &now)
        let actions = table.received(
            Self.openAgent(1, AgentKey(session: "default", pane: "w1:p9")), from: Self.phone, now: now,
            agents: Self.board([]))
        #expect(HostSessionTableTests.isDrop(actions, Self.phone))
    }

    @Test func theBoardsFramesAndTheSessionsShareOneBudget() throws {
        var table = HostSessionTableTests.table()
        var now = 10.0
        table.connected(Self.phone)
        let (id, _) = try HostSessionTableTests.start(&table, Self.phone, stream: 1, window: 64 << 20, &now)
        _ = table.setWindow(64 << 20, stream: 1, from: Self.phone)
        // A flood of output, and the board taking a frame every 10 ms of one second.
        var frames = 0
        let start = now
        while now < start + 1 {
            table.output(id, [UInt8](repeating: 0x79, count: 100))
            if table.takeFrame(for: Self.phone, now: now) { frames += 1 }
            frames += table.messages(for: Self.phone, now: now).count
            now += 0.0005
        }
        // Together within what one budget lets through in a second (456 and a burst of 2).
        #expect(frames <= Int(FrameBudget.computer.rate) + Int(FrameBudget.computer.burst) + 1)
        #expect(frames >= Int(FrameBudget.computer.rate) - 2)
        #expect(table.frameWait(for: Self.phone, now: now) >= 0)
    }
}
