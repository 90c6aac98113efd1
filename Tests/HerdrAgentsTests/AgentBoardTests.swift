import HerdrAgents
import Testing

@Suite("A computer's board of agents")
struct AgentBoardTests {
    typealias Make = AgentBoardMessageTests

    @Test func blockedComeFirstThenDoneWorkingIdleUnknownAndTheLongestWaitingFirst() {
        let board = AgentBoard(agents: [
            Make.agent("w1:p1", status: .idle, since: 1),
            Make.agent("w1:p2", status: .blocked, since: 50),
            Make.agent("w1:p3", status: .unknown, since: 1),
            Make.agent("w1:p4", status: .blocked, since: 10),
            Make.agent("w1:p5", status: .working, since: 1),
            Make.agent("w1:p6", status: .done, since: 1),
            Make.agent("w1:p7", status: .blocked),
        ])
        #expect(board.sorted.map(\.pane) == ["w1:p4", "w1:p2", "w1:p7", "w1:p6", "w1:p5", "w1:p1", "w1:p3"])
    }

    @Test func paneIdsSortAsNumbersWithinASession() {
        let board = AgentBoard(agents: [Make.agent("w1:p10"), Make.agent("w1:p9"), Make.agent("w1:p1")])
        #expect(board.sorted.map(\.pane) == ["w1:p1", "w1:p9", "w1:p10"])
    }

    @Test func pastItsBoundABoardKeepsTheAgentsThatNeedAPersonAndCountsTheRest() {
        var board = AgentBoard(
            agents: (1...300).map { Make.agent("w1:p\($0)", status: $0 % 100 == 0 ? .blocked : .working) }, omitted: 2)
        board.bound()
        #expect(board.agents.count == AgentBoard.maximumAgents)
        #expect(board.omitted == 2 + 300 - AgentBoard.maximumAgents)
        #expect(board.agents.values.filter { $0.status == .blocked }.count == 3)
    }

    @Test func changesNameEachAgentWhoseStatusIsNewWithWhatItWas() {
        let before = AgentBoard(agents: [Make.agent("w1:p1", status: .working), Make.agent("w1:p2", status: .idle)])
        let after = AgentBoard(agents: [
            Make.agent("w1:p1", status: .blocked), Make.agent("w1:p2", status: .idle),
            Make.agent("w1:p3", status: .done),
        ])
        let changes = after.changes(since: before)
        #expect(changes.map(\.agent.pane) == ["w1:p1", "w1:p3"])
        #expect(changes.map(\.was) == [.working, nil])
    }

    @Test func aTargetIsAPaneIdASessionAndPaneOrAnAgentName() {
        let board = AgentBoard(agents: [
            Make.agent("w1:p1", name: "claude-1"), Make.agent("w1:p1", session: "work", name: "claude-1"),
            Make.agent("w2:p1", session: "work", name: "codex"),
        ])
        #expect(board.agents(matching: "w1:p1").count == 2)
        #expect(board.agents(matching: "work/w1:p1").map(\.session) == ["work"])
        #expect(board.agents(matching: "codex").map(\.pane) == ["w2:p1"])
        #expect(board.agents(matching: "claude-1", session: "default").map(\.session) == ["default"])
        #expect(board.agents(matching: "nobody").isEmpty)
    }

    @Test func textFromHerdrIsMadePrintableAndCutAtACharacterBoundary() {
        #expect(BoundedText.printable("a\u{1B}[31mb\u{7}\nc", maxBytes: 64) == "a[31mb c")
        #expect(BoundedText.printable(String(repeating: "é", count: 40), maxBytes: 5) == "éé")
        #expect(BoundedText.optional("\u{1B}\u{7}", maxBytes: 10) == nil)
        let agent = HerdrAgent(
            key: AgentKey(session: "default", pane: "w1:p1"), name: String(repeating: "n", count: 500), status: .idle)
        #expect(agent.name?.utf8.count == HerdrAgent.maximumNameBytes)
    }

    @Test(arguments: [
        ("w1:p1", true), ("w12:p345", true), ("a.b_c-d", true), ("", false), ("w1 p1", false), ("w1;p1", false),
        ("w1:p1'", false), (String(repeating: "p", count: 32), true), (String(repeating: "p", count: 33), false),
    ])
    func paneIdsFollowTheirRule(pane: String, valid: Bool) {
        #expect(HerdrAgent.isValidPane(pane) == valid)
    }
}
