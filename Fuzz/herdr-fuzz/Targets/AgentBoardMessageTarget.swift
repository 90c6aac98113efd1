import HerdrAgents
import SessionProtocol

extension FuzzTargets {
    /// The agents family's board messages, as a device reads them (docs/companion.md, "Agents"):
    /// any body parses or is refused with a reason. A parsed message keeps every bound (at most
    /// 256 agents and 256 removed, 64 sessions, 8 parts, texts printable and within their bytes,
    /// pane ids and session names by their rules), its own body parses back to the same message,
    /// and a device's receiver fed it either refuses it or holds a board of at most 256 agents.
    static let agentBoardMessage = FuzzTarget("agent-board-message", "HerdrAgents board messages (JSON)") { data in
        let message: AgentBoardMessage
        do throws(AgentBoardMessageError) {
            message = try AgentBoardMessage(parsingBody: data)
        } catch {
            FuzzCheck.expect(!error.description.isEmpty, "a refusal without a reason")
            return
        }
        FuzzCheck.expect(data.count <= AgentBoardMessage.maximumBodyBytes, "a body over the limit parsed")
        FuzzCheck.expect(message.sequence > 0, "a seq of 0 parsed")
        FuzzCheck.expect(
            message.agents.count <= AgentBoard.maximumAgents && message.removed.count <= AgentBoard.maximumAgents,
            "a list over its bound")
        if case .full(let part, let parts) = message.kind {
            FuzzCheck.expect(
                1 <= part && part <= parts && parts <= AgentBoardMessage.maximumParts, "parts out of order")
            FuzzCheck.expect(message.removed.isEmpty, "a board part with removed agents")
            FuzzCheck.expect((message.herdr != nil) == (part == 1), "herdr's state outside the first part")
        }
        FuzzCheck.expect((message.sessions?.count ?? 0) <= HerdrSessionInfo.maximumCount, "too many sessions")
        for session in message.sessions ?? [] {
            FuzzCheck.expect(HerdrSessionInfo.isValidName(session.name), "a session name breaking its rule")
            FuzzCheck.expect(printable(session.detail, HerdrSessionInfo.maximumDetailBytes), "a detail out of bounds")
        }
        FuzzCheck.expect(
            printable(message.herdr?.detail, HerdrSessionInfo.maximumDetailBytes), "a detail out of bounds")
        for agent in message.agents {
            FuzzCheck.expect(
                HerdrSessionInfo.isValidName(agent.session) && HerdrAgent.isValidPane(agent.pane),
                "an agent's place breaking its rule")
            FuzzCheck.expect(
                printable(agent.name, HerdrAgent.maximumNameBytes) && printable(agent.kind, HerdrAgent.maximumKindBytes)
                    && printable(agent.title, HerdrAgent.maximumTitleBytes), "an agent's text out of bounds")
        }
        let body = message.body
        FuzzCheck.expect(
            (try? AgentBoardMessage(parsingBody: body)) == message,
            "the body does not parse back: \(String(decoding: body.prefix(400), as: UTF8.self))")
        FuzzCheck.expect(
            (try? ChannelMessage(parsing: ChannelMessage.bytes(of: message))) == .agents(message),
            "the channel does not carry it back")
        var receiver = AgentBoardReceiver()
        if let board = try? receiver.receive(message) {
            FuzzCheck.expect(board.agents.count <= AgentBoard.maximumAgents, "a board over its bound")
        }
    }

    /// Text a board may carry: nothing, or printable, trimmed and at most `limit` bytes.
    private static func printable(_ text: String?, _ limit: Int) -> Bool {
        guard let text else { return true }
        return text.utf8.count <= limit && BoundedText.printable(text, maxBytes: limit) == text
    }
}
