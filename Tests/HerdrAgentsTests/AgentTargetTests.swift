import HerdrAgents
import Testing

/// What a person types to name one agent, resolved on a board.
@Suite struct AgentTargetTests {
    static func agent(_ session: String, _ pane: String, name: String? = nil, _ status: HerdrAgentStatus = .idle)
        -> HerdrAgent
    {
        HerdrAgent(key: AgentKey(session: session, pane: pane), name: name, kind: "claude", status: status)
    }

    static let board = AgentBoard(agents: [
        agent("default", "w1:p1", name: "claude-1", .working),
        agent("default", "w1:p2", name: "twin", .blocked),
        agent("work", "w1:p2", name: "twin"),
        agent("work", "w1:p3", name: "w1:p1"),
    ])

    static func resolve(_ text: String, preferring session: String? = nil) -> Result<HerdrAgent, AgentTargetError>? {
        AgentTarget(text)?.resolve(on: board, preferredSession: session)
    }

    @Test func aPaneInASessionAnUniqueNameOrAPaneFirst() throws {
        #expect(try Self.resolve("work/w1:p2")?.get().key == AgentKey(session: "work", pane: "w1:p2"))
        #expect(try Self.resolve("claude-1")?.get().key == AgentKey(session: "default", pane: "w1:p1"))
        // A pane id wins over an agent named like one.
        #expect(try Self.resolve("w1:p1")?.get().key == AgentKey(session: "default", pane: "w1:p1"))
        #expect(try Self.resolve("work/w1:p1")?.get().key == AgentKey(session: "work", pane: "w1:p3"))
        // A bare pane in several sessions: the host's session when it has it.
        #expect(try Self.resolve("w1:p2", preferring: "work")?.get().key == AgentKey(session: "work", pane: "w1:p2"))
        #expect(AgentTarget("work/w1:p2")?.isExplicitPane == true)
        #expect(AgentTarget("claude-1")?.isExplicitPane == false)
    }

    @Test func absentOrAmbiguousNamesTheCandidates() {
        guard case .failure(let twice) = Self.resolve("twin") else {
            Issue.record("twin resolved")
            return
        }
        #expect(twice.kind == .ambiguous)
        #expect(
            twice.description
                == "twin names 2 agents: default/w1:p2 (twin, blocked), work/w1:p2 (twin, idle); name one as SESSION/PANE"
        )
        guard case .failure(let pane) = Self.resolve("w1:p2") else {
            Issue.record("w1:p2 resolved")
            return
        }
        #expect(pane.kind == .ambiguous)
        guard case .failure(let none) = Self.resolve("nobody") else {
            Issue.record("nobody resolved")
            return
        }
        #expect(none.kind == .absent)
        #expect(none.candidates.count == 4)
        #expect(none.description.hasPrefix("no agent nobody; the computer's agents: default/w1:p2 (twin, blocked), "))
        guard case .failure(let empty) = AgentTarget("x")?.resolve(on: AgentBoard()) else {
            Issue.record("x")
            return
        }
        #expect(empty.description == "no agent x; the computer lists no agents")
    }

    @Test func whatCannotNameAnAgent() {
        for text in ["", "/w1:p1", "bad session/w1:p1", "a/", "x\u{1B}[2J", String(repeating: "a", count: 65)] {
            #expect(AgentTarget(text) == nil, "\(text.debugDescription)")
        }
        #expect(AgentTarget("a/b/w1:p1") == nil, "a session name has no slash")
    }
}
