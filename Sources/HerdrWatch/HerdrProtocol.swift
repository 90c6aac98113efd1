import HerdrAgents
import RelayProtocol

/// The requests herdr-host makes of herdr's socket and how it reads the answers (specs/herdr-api.md):
/// only methods that change nothing in herdr. Pure: lines in, answers out.
public enum HerdrProtocol {
    /// What herdr-host asks a session's server.
    public enum Method: String, Sendable, Hashable {
        /// `ping`: is it herdr, and which protocol.
        case ping
        /// `agent.list`: the session's agents.
        case agentList = "agent.list"
    }

    /// A request's useful answer.
    public enum Answer: Sendable, Hashable {
        /// `pong`, with the protocol herdr speaks (nil when it did not say).
        case pong(protocol: Int?)
        /// `agent_list`: the agents read (at most `HerdrJSON.maximumAgentsRead`) and how many
        /// entries were not (past that, or without a pane id or status).
        case agents([HerdrAgentInfo], unread: Int)
    }

    /// A line read on a subscription's connection.
    public enum SubscriptionLine: Sendable, Hashable {
        case started
        case event(HerdrEvent)
    }

    /// At most this many lines are read waiting for a request's answer (events and other ids
    /// are skipped): a server that talks without answering is failing, not waited on forever.
    public static let maximumLinesPerAnswer = 64

    /// `{"id":…,"method":…,"params":{}}` and its newline.
    public static func requestLine(id: String, method: Method) -> [UInt8] {
        Array("{\"id\":\(RelayJSON.quoted(id)),\"method\":\"\(method.rawValue)\",\"params\":{}}\n".utf8)
    }

    /// `events.subscribe` for herdr's pane lifecycle and one status subscription per pane.
    public static func subscribeLine(id: String, panes: [String]) -> [UInt8] {
        var subscriptions = HerdrEvent.lifecycleNames.map { "{\"type\":\"\($0)\"}" }
        subscriptions += panes.map {
            "{\"type\":\"\(HerdrEvent.statusChangedName)\",\"pane_id\":\(RelayJSON.quoted($0))}"
        }
        let text =
            "{\"id\":\(RelayJSON.quoted(id)),\"method\":\"events.subscribe\",\"params\":{\"subscriptions\":["
            + subscriptions.joined(separator: ",") + "]}}\n"
        return Array(text.utf8)
    }

    /// Reads one line of the answer to request `id` (a `method`): the answer; nil for a line that
    /// is not it (an event, another id), to read on; throws what is wrong with it otherwise.
    public static func answer(_ line: [UInt8], id: String, method: Method) throws(HerdrRequestFailure) -> Answer? {
        let parsed: HerdrJSON.Line
        do {
            parsed = try HerdrJSON.line(line)
        } catch {
            throw HerdrRequestFailure(.malformed, "answered \(method.rawValue) with \(error)")
        }
        switch parsed {
        case .event:
            return nil
        case .error(let answerID, let code, let message):
            guard answerID == nil || answerID == id else { return nil }
            throw HerdrRequestFailure(
                .herdrError(code: BoundedText.printable(code, maxBytes: 64)),
                "answered \(method.rawValue) with the error \(code): \(message)")
        case .result(let answerID, let type, let result):
            guard answerID == id else { return nil }
            switch method {
            case .ping:
                guard type == "pong" else {
                    throw HerdrRequestFailure(.malformed, "answered ping with \(Self.describe(type)), not a pong")
                }
                return .pong(protocol: RelayJSON.integer(result["protocol"]))
            case .agentList:
                guard type == "agent_list", result["agents"] is [Any] else {
                    throw HerdrRequestFailure(
                        .malformed, "answered agent.list with \(Self.describe(type)), not an agent list")
                }
                let (agents, skipped) = HerdrJSON.agents(result["agents"])
                return .agents(agents, unread: skipped)
            }
        }
    }

    /// Reads one line of a subscription `id`'s connection: its start (`subscription_started`), an
    /// event, or nil (a line for another id); throws for an error or a line that is not herdr's.
    public static func subscriptionLine(_ line: [UInt8], id: String) throws(HerdrRequestFailure) -> SubscriptionLine? {
        let parsed: HerdrJSON.Line
        do {
            parsed = try HerdrJSON.line(line)
        } catch {
            throw HerdrRequestFailure(.malformed, "sent on its subscription \(error)")
        }
        switch parsed {
        case .event(let name, let data):
            return .event(HerdrEvent(name: name, data: data))
        case .error(let answerID, let code, let message):
            guard answerID == nil || answerID == id else { return nil }
            throw HerdrRequestFailure(
                .herdrError(code: BoundedText.printable(code, maxBytes: 64)),
                "answered events.subscribe with the error \(code): \(message)")
        case .result(let answerID, let type, _):
            guard answerID == id else { return nil }
            guard type == "subscription_started" else {
                throw HerdrRequestFailure(
                    .malformed, "answered events.subscribe with \(Self.describe(type)), not subscription_started")
            }
            return .started
        }
    }

    private static func describe(_ type: String?) -> String {
        type.map { "a result of type \(BoundedText.printable($0, maxBytes: 32))" } ?? "a result without a type"
    }
}
