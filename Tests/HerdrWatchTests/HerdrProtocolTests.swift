import Foundation
import HerdrAgents
import Testing

@testable import HerdrWatch

@Suite struct HerdrProtocolTests {
    static func json(_ bytes: [UInt8]) throws -> [String: Any] {
        #expect(bytes.last == 0x0A)
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes.dropLast())) as? [String: Any])
    }

    @Test func requestsAreOneJSONObjectALineWithParams() throws {
        let ping = try Self.json(HerdrProtocol.requestLine(id: "a\"b", method: .ping))
        #expect(ping["id"] as? String == "a\"b")
        #expect(ping["method"] as? String == "ping")
        #expect((ping["params"] as? [String: Any])?.isEmpty == true)
        let list = try Self.json(HerdrProtocol.requestLine(id: "1", method: .agentList))
        #expect(list["method"] as? String == "agent.list")
    }

    @Test func aSubscriptionAsksForThePaneLifecycleAndEachPanesStatus() throws {
        let request = try Self.json(HerdrProtocol.subscribeLine(id: "s", panes: ["w1:p1", "w2:p3"]))
        #expect(request["method"] as? String == "events.subscribe")
        let subscriptions = try #require((request["params"] as? [String: Any])?["subscriptions"] as? [[String: Any]])
        #expect(
            subscriptions.map { $0["type"] as? String } == [
                "pane.created", "pane.closed", "pane.agent_detected", "pane.agent_status_changed",
                "pane.agent_status_changed",
            ])
        #expect(subscriptions.compactMap { $0["pane_id"] as? String } == ["w1:p1", "w2:p3"])
    }

    @Test func answersAreReadForTheirOwnIdEventsAndOthersSkipped() throws {
        func answer(_ text: String, _ method: HerdrProtocol.Method = .ping) throws(HerdrRequestFailure)
            -> HerdrProtocol.Answer?
        {
            try HerdrProtocol.answer(Array(text.utf8), id: "r1", method: method)
        }
        #expect(
            try answer(#"{"id":"r1","result":{"type":"pong","version":"1","protocol":20,"x":[1]}}"#)
                == .pong(protocol: 20))
        #expect(try answer(#"{"id":"r1","result":{"type":"pong"}}"#) == .pong(protocol: nil))
        #expect(try answer(#"{"event":"pane.created","data":{}}"#) == nil)
        #expect(try answer(#"{"id":"r2","result":{"type":"pong","protocol":20}}"#) == nil)
        let list = try answer(
            #"{"id":"r1","result":{"type":"agent_list","agents":[{"pane_id":"w1:p1","agent_status":"blocked","agent":"claude"},{"pane_id":"bad pane","agent_status":"idle"},{}]}}"#,
            .agentList)
        #expect(list == .agents([HerdrAgentInfo(pane: "w1:p1", status: .blocked, kind: "claude")], unread: 2))
        #expect(throws: HerdrRequestFailure.self) {
            try answer(#"{"id":"r1","result":{"type":"agent_list"}}"#, .agentList)
        }
        #expect(throws: HerdrRequestFailure.self) {
            try answer(#"{"id":"r1","result":{"type":"agent_list","agents":[]}}"#)
        }
        do {
            _ = try answer("\u{0}\u{FF} not json")
            Issue.record("garbage was read")
        } catch {
            #expect(error.kind == .malformed)
            #expect(error.detail == "answered ping with a line that is not a JSON object")
        }
        do {
            _ = try answer(#"{"id":"r1","error":{"code":"unknown_method","message":"unknown method 'ping'"}}"#)
            Issue.record("an error was read as an answer")
        } catch {
            #expect(error.isUnknownMethod)
            #expect(error.sessionState == .failing)
        }
    }

    @Test func aSubscriptionsLinesAreItsStartItsEventsOrItsError() throws {
        func line(_ text: String) throws(HerdrRequestFailure) -> HerdrProtocol.SubscriptionLine? {
            try HerdrProtocol.subscriptionLine(Array(text.utf8), id: "s")
        }
        #expect(try line(#"{"id":"s","result":{"type":"subscription_started"}}"#) == .started)
        #expect(
            try line(
                #"{"event":"pane.agent_status_changed","data":{"pane_id":"w1:p2","workspace_id":"w1","agent_status":"blocked","title":"Approve?\n"}}"#
            )
                == .event(.statusChanged(pane: "w1:p2", status: .blocked, kind: nil, title: "Approve?")))
        #expect(try line(#"{"event":"pane.closed","data":{"pane_id":"w1:p2"}}"#) == .event(.paneClosed(pane: "w1:p2")))
        #expect(try line(#"{"event":"pane.closed","data":{}}"#) == .event(.other("pane.closed")))
        #expect(
            try line(#"{"event":"pane.agent_detected","data":{"pane_id":"w1:p3"}}"#)
                == .event(.agentDetected(pane: "w1:p3")))
        #expect(try line(#"{"event":"tab.created","data":{}}"#) == .event(.other("tab.created")))
        #expect(
            try line(#"{"event":"pane.agent_status_changed","data":{"pane_id":"w1:p2","agent_status":"pondering"}}"#)
                == .event(.statusChanged(pane: "w1:p2", status: .unknown, kind: nil, title: nil)),
            "a later herdr's word")
        #expect(throws: HerdrRequestFailure.self) {
            try line(#"{"id":"s","error":{"code":"not_found","message":"pane not found"}}"#)
        }
        #expect(throws: HerdrRequestFailure.self) { try line(#"{"id":"s","result":{"type":"pong"}}"#) }
    }
}
