import HerdrAgents
import HerdrWatch
import SessionProtocol
import Testing

@testable import HerdrHostAgent

/// One channel's watch of the board: the whole board first (once herdr was looked at, or after
/// its wait), then changes coalesced over 100 ms, `seq` growing over the channel's life.
@Suite struct AgentBoardFeedTests {
    /// The computer's board, made `agents` (each call a new version when they changed).
    final class Board {
        var current = CurrentAgentBoard()

        func set(_ agents: [HerdrAgent], settled: Bool = true) -> CurrentAgentBoard {
            current.update(
                HerdrWatch.Report(
                    board: AgentBoard(
                        herdr: .ready, sessions: [HerdrSessionInfo(name: "default", isDefault: true, state: .ready)],
                        agents: agents),
                    isRunning: true, isSettled: settled))
            return current
        }
    }

    static func agent(_ pane: String, _ status: HerdrAgentStatus, since: Int64 = 100) -> HerdrAgent {
        HerdrAgent(key: AgentKey(session: "default", pane: pane), name: "a-\(pane)", status: status, since: since)
    }

    /// Every message due by `until`, taking time in 10 ms steps; each with the time it went.
    static func run(
        _ feed: inout AgentBoardFeed, _ report: CurrentAgentBoard, from: Double, until: Double
    ) -> [(at: Double, message: AgentBoardMessage)] {
        var out: [(Double, AgentBoardMessage)] = []
        var now = from
        while now <= until + 1e-9 {
            while let message = feed.next(report, now: now) { out.append((now, message)) }
            now += 0.01
        }
        return out
    }

    @Test func theWholeBoardComesFirstThenOnlyWhatChanged() throws {
        let board = Board()
        var feed = AgentBoardFeed()
        #expect(feed.next(board.set([]), now: 0) == nil, "nothing before a watch")
        feed.watch(now: 0)
        let first = board.set([Self.agent("w1:p1", .working)])
        let next = feed.next(first, now: 0)
        let full = try #require(next)
        #expect(full.sequence == 1)
        #expect(full.kind == .full(part: 1, parts: 1))
        #expect(full.agents == [Self.agent("w1:p1", .working)])
        #expect(feed.next(first, now: 0) == nil)
        #expect(feed.nextDeadline(first, now: 0) == nil, "nothing owed")

        let blocked = board.set([Self.agent("w1:p1", .blocked, since: 200), Self.agent("w1:p2", .idle)])
        let changes = Self.run(&feed, blocked, from: 0.01, until: 1)
        #expect(changes.count == 1)
        let message = try #require(changes.first?.message)
        #expect(message.kind == .changes)
        #expect(message.sequence == 2)
        #expect(Set(message.agents.map(\.pane)) == ["w1:p1", "w1:p2"])
        #expect(message.herdr == nil && message.sessions == nil, "only what changed")
        let removed = Self.run(&feed, board.set([Self.agent("w1:p2", .idle)]), from: 2, until: 3)
        #expect(removed.map(\.message.removed) == [[AgentKey(session: "default", pane: "w1:p1")]])
        // What the device puts together is the computer's board.
        var receiver = AgentBoardReceiver()
        for item in [full, message] + removed.map(\.message) { _ = try receiver.receive(item) }
        #expect(receiver.board == board.set([Self.agent("w1:p2", .idle)]).board)
    }

    @Test func changesWithin100msOfTheLastMessageGoTogetherAtItsEnd() throws {
        let board = Board()
        var feed = AgentBoardFeed()
        feed.watch(now: 0)
        _ = feed.next(board.set([Self.agent("w1:p1", .working)]), now: 0)
        // A change long after the last message goes at once.
        let first = board.set([Self.agent("w1:p1", .blocked)])
        #expect(feed.next(first, now: 5)?.kind == .changes)
        // The next ones within 100 ms wait for the end of those 100 ms, and go as one.
        let second = board.set([Self.agent("w1:p1", .working)])
        #expect(feed.next(second, now: 5.03) == nil)
        #expect(feed.nextDeadline(second, now: 5.03) == 5.1)
        let third = board.set([Self.agent("w1:p1", .done), Self.agent("w1:p2", .idle)])
        #expect(feed.next(third, now: 5.06) == nil)
        let last = feed.next(third, now: 5.1)
        let together = try #require(last)
        #expect(Set(together.agents.map(\.status)) == [.done, .idle])
    }

    @Test func theFirstBoardWaitsForHerdrsFirstLookAtMostThreeSeconds() throws {
        let board = Board()
        var feed = AgentBoardFeed()
        feed.watch(now: 10)
        let reading = board.set([], settled: false)
        #expect(feed.next(reading, now: 10) == nil)
        #expect(feed.nextDeadline(reading, now: 10) == 13)
        #expect(feed.next(reading, now: 12.9) == nil)
        #expect(feed.next(reading, now: 13)?.kind == .full(part: 1, parts: 1))

        var early = AgentBoardFeed()
        early.watch(now: 10)
        #expect(early.next(board.set([], settled: true), now: 10.2)?.kind == .full(part: 1, parts: 1))

        // Before the watch ever reported, the board says herdr was not read yet.
        var cold = AgentBoardFeed()
        cold.watch(now: 0)
        let sent = cold.next(CurrentAgentBoard(), now: 3)
        let message = try #require(sent)
        #expect(message.herdr == HerdrAvailability(.failing, detail: "herdr-host has not read herdr yet"))
    }

    @Test func aBigBoardGoesInPartsAndSeqGrowsAcrossWatchesOfAChannel() throws {
        let board = Board()
        let long = String(repeating: "x", count: 200)
        let agents = (1...256).map {
            HerdrAgent(
                key: AgentKey(session: "default", pane: "w1:p\($0)"), name: long, kind: long, status: .idle,
                title: long, since: 1)
        }
        var feed = AgentBoardFeed()
        feed.watch(now: 0)
        let parts = Self.run(&feed, board.set(agents), from: 0, until: 0)
        #expect(parts.count > 1)
        #expect(parts.map(\.message.sequence) == Array(1...UInt32(parts.count)))
        #expect(parts.map(\.message.kind) == (1...parts.count).map { .full(part: $0, parts: parts.count) })
        #expect(parts.allSatisfy { ChannelMessage.bytes(of: $0.message).count <= 65_518 })
        feed.unwatch()
        #expect(feed.next(board.set([]), now: 1) == nil)
        feed.watch(now: 2)
        let rewatched = feed.next(board.set([]), now: 2)
        let again = try #require(rewatched)
        #expect(again.sequence == UInt32(parts.count) + 1)
        #expect(again.kind == .full(part: 1, parts: 1))
    }
}
