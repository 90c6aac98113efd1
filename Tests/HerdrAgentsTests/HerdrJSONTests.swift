import HerdrAgents
import Testing

@Suite("herdr's own JSON, as its socket and commands give it")
struct HerdrJSONTests {
    @Test func aReplyAnErrorAndAnEventAreToldApart() throws {
        guard
            case .result(let id, let type, let result) = try HerdrJSON.line(
                Array(#"{"id":"r1","result":{"type":"pong","version":"0.9.2","protocol":20}}"#.utf8))
        else {
            Issue.record("not a result")
            return
        }
        #expect(id == "r1")
        #expect(type == "pong")
        #expect(result["protocol"] as? Int == 20)
        guard
            case .error(_, let code, let message) = try HerdrJSON.line(
                Array(#"{"id":"r2","error":{"code":"not_found","message":"pane not found"}}"#.utf8))
        else {
            Issue.record("not an error")
            return
        }
        #expect(code == "not_found")
        #expect(message == "pane not found")
        guard
            case .event(let name, let data) = try HerdrJSON.line(
                Array(
                    #"{"event":"pane.agent_status_changed","data":{"pane_id":"w1:p1","workspace_id":"w1","agent_status":"blocked"}}"#
                        .utf8))
        else {
            Issue.record("not an event")
            return
        }
        #expect(name == "pane.agent_status_changed")
        #expect(data["agent_status"] as? String == "blocked")
    }

    @Test(arguments: ["", "not json", "[1]", #"{"id":"r1"}"#])
    func aLineThatIsNotHerdrsProtocolIsRefused(line: String) {
        #expect(throws: HerdrReplyError.self) { try HerdrJSON.line(Array(line.utf8)) }
    }

    @Test func anAgentListKeepsTheFieldsABoardNeedsAndSkipsBrokenEntries() throws {
        let line =
            #"{"id":"r1","result":{"type":"agent_list","agents":[{"pane_id":"w1:p1","workspace_id":"w1","tab_id":"w1:t1","terminal_id":"t1","agent_status":"blocked","focused":true,"revision":7,"agent":"claude","name":"claude-1","title":"Approve?","state_change_seq":3,"later_field":{}},{"pane_id":"w1:p2","agent_status":"dreaming","display_agent":"Codex","terminal_title_stripped":"~/src"},{"workspace_id":"w1"},{"pane_id":"bad pane","agent_status":"idle"}]}}"#
        guard case .result(_, _, let result) = try HerdrJSON.line(Array(line.utf8)) else {
            Issue.record("not a result")
            return
        }
        let (agents, skipped) = HerdrJSON.agents(result["agents"])
        #expect(skipped == 2)
        #expect(
            agents == [
                HerdrAgentInfo(
                    pane: "w1:p1", workspace: "w1", status: .blocked, kind: "claude", name: "claude-1",
                    title: "Approve?",
                    focused: true, revision: 7, stateChangeSequence: 3),
                HerdrAgentInfo(pane: "w1:p2", status: .unknown, kind: "Codex", title: "~/src"),
            ])
        #expect(agents[0].agent(session: "work", since: 9).key == AgentKey(session: "work", pane: "w1:p1"))
    }

    @Test func aListPastTheReadBoundIsCountedNotParsed() {
        let list: [Any] = (0..<(HerdrJSON.maximumAgentsRead + 10)).map {
            ["pane_id": "w1:p\($0)", "agent_status": "idle"] as [String: Any]
        }
        let (agents, skipped) = HerdrJSON.agents(list)
        #expect(agents.count == HerdrJSON.maximumAgentsRead)
        #expect(skipped == 10)
    }

    @Test func theSessionListReadsAsHerdrPrintsIt() throws {
        let text =
            #"{"sessions":[{"name":"default","default":true,"running":true,"socket_path":"/h/.config/herdr/herdr.sock","session_dir":"/h/.config/herdr"},{"name":"work","default":false,"running":false,"socket_path":"/h/.config/herdr/sessions/work/herdr.sock"},{"name":"bad name"},{"name":"work","default":false,"running":true}]}"#
        let sessions = try HerdrJSON.sessionList(Array(text.utf8))
        #expect(
            sessions == [
                HerdrSessionListing(
                    name: "default", isDefault: true, running: true, socketPath: "/h/.config/herdr/herdr.sock"),
                HerdrSessionListing(
                    name: "work", isDefault: false, running: false,
                    socketPath: "/h/.config/herdr/sessions/work/herdr.sock"),
            ])
        #expect(throws: HerdrReplyError.self) { try HerdrJSON.sessionList(Array(#"{"list":[]}"#.utf8)) }
    }

    @Test func aSnapshotsAgentsAreReadWhetherWrappedInAReplyOrNot() throws {
        let bare = #"{"type":"session_snapshot","workspaces":[],"agents":[{"pane_id":"w1:p1","agent_status":"done"}]}"#
        let wrapped = #"{"id":"x","result":\#(bare)}"#
        for text in [bare, wrapped] {
            let (agents, _) = try HerdrJSON.snapshotAgents(Array(text.utf8))
            #expect(agents.map(\.status) == [.done])
        }
        #expect(throws: HerdrReplyError.self) { try HerdrJSON.snapshotAgents(Array(#"{"workspaces":[]}"#.utf8)) }
    }
}
