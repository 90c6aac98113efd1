import HerdrAgents
import Testing

@testable import HerdrHostAgent

/// What an `open agent` runs: herdr's own attach for the pane, never a device's text.
@Suite struct AgentAttachCommandTests {
    @Test func theDefaultSessionsAgentIsAttachedByItsPane() {
        #expect(
            SessionCommand.command(configured: nil, target: .agent(AgentKey(session: "default", pane: "w1:p2")))
                == #"exec "$SHELL" -lc 'herdr agent attach w1:p2'"#)
        #expect(SessionCommand.sessionName(.agent(AgentKey(session: "default", pane: "w1:p2"))) == nil)
    }

    @Test func aNamedSessionsAgentNamesItsSession() {
        let key = AgentKey(session: "work.2", pane: "w3:p14")
        #expect(SessionCommand.agentAttach(key) == #"exec "$SHELL" -lc 'herdr agent attach w3:p14 --session work.2'"#)
        #expect(SessionCommand.sessionName(.agent(key)) == "work.2")
    }

    @Test func theConfiguredSessionCommandIsForSessionsNotAgents() {
        let key = AgentKey(session: "default", pane: "w1:p1")
        #expect(
            SessionCommand.command(configured: "tmux attach", target: .agent(key)) == SessionCommand.agentAttach(key))
        #expect(SessionCommand.command(configured: "tmux attach", target: .session("x")) == "tmux attach")
    }

    @Test func textBreakingTheRulesIsQuotedAsOneWord() {
        let key = AgentKey(session: "a b", pane: "w1;rm -rf")
        #expect(
            SessionCommand.agentAttach(key)
                == #"exec "$SHELL" -lc 'herdr agent attach '\''w1;rm -rf'\'' --session '\''a b'\'''"#)
    }
}
