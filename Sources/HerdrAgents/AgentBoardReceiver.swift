/// The device's side of the agents family: puts a board together from its parts and applies
/// changes after it, checking that each message follows the last (docs/companion.md, "Agents").
public struct AgentBoardReceiver: Sendable {
    /// The last whole board; nil until the first arrived.
    public private(set) var board: AgentBoard?
    private var lastSequence: UInt32 = 0
    private var assembling: (board: AgentBoard, parts: Int, next: Int)?

    public init() {}

    /// Takes the next message; returns the board when it changed (a whole board put together, or
    /// changes applied), nil while a board's parts are still coming. Throws for a message out of
    /// order or one that would break the board's bounds.
    public mutating func receive(_ message: AgentBoardMessage) throws(AgentBoardMessageError) -> AgentBoard? {
        guard message.sequence > lastSequence else {
            throw AgentBoardMessageError("an agents message's seq \(message.sequence) does not follow \(lastSequence)")
        }
        lastSequence = message.sequence
        switch message.kind {
        case .full(let part, let parts):
            if part == 1 {
                guard let herdr = message.herdr, let sessions = message.sessions, let omitted = message.omitted else {
                    throw AgentBoardMessageError("the first part of a board lacks herdr, sessions or omitted")
                }
                assembling = (AgentBoard(herdr: herdr, sessions: sessions, omitted: omitted), parts, 1)
            }
            guard let (started, count, expected) = assembling, expected == part, count == parts else {
                throw AgentBoardMessageError("part \(part) of \(parts) of a board came out of order")
            }
            var next = started
            for agent in message.agents { next.agents[agent.key] = agent }
            try check(next)
            guard part == parts else {
                assembling = (next, count, expected + 1)
                return nil
            }
            assembling = nil
            board = next
            return next
        case .changes:
            guard assembling == nil, var next = board else {
                throw AgentBoardMessageError("agents changes came before a whole board")
            }
            if let herdr = message.herdr { next.herdr = herdr }
            if let sessions = message.sessions { next.sessions = sessions }
            if let omitted = message.omitted { next.omitted = omitted }
            for key in message.removed { next.agents[key] = nil }
            for agent in message.agents { next.agents[agent.key] = agent }
            try check(next)
            board = next
            return next
        }
    }

    private func check(_ board: AgentBoard) throws(AgentBoardMessageError) {
        guard board.agents.count <= AgentBoard.maximumAgents else {
            throw AgentBoardMessageError("a board of more than \(AgentBoard.maximumAgents) agents")
        }
    }
}
