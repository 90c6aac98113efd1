import HerdrAgents
import HerdrKit

/// One computer as `agents` and `watch` show it: its saved name, its road, where its board stands
/// and the last board it gave (kept while it is away, marked so).
struct ComputerEntry: Sendable, Equatable {
    var name: String
    /// `ssh`, `relay` or `home`: the road it is reached by (the board's own road once read).
    var road: String
    var state: ComputerBoardState
    /// The last board read, even if the computer is away now.
    var board: AgentBoard?

    init(name: String, road: String, state: ComputerBoardState = .connecting, board: AgentBoard? = nil) {
        self.name = name
        self.road = road
        self.state = state
        self.board = board
        update(state)
    }

    /// Takes a new state, keeping the last board through a loss.
    mutating func update(_ state: ComputerBoardState) {
        self.state = state
        if case .live(let board, let road) = state {
            self.board = board
            self.road = road
        }
    }

    /// Whether its board is the one it has now (not one kept from before a loss).
    var isLive: Bool {
        if case .live = state { return true }
        return false
    }

    /// What stands in its row when it has no agents to show: a short word, or nil when its
    /// agents are its rows.
    var rowStatus: String? {
        switch state {
        case .connecting: return "connecting"
        case .lost(let problem, _):
            if board?.agents.isEmpty == false { return nil }
            return Self.word(for: problem.kind)
        case .live(let board, _):
            switch board.herdr.state {
            case .notInstalled: return "no herdr"
            case .failing: return "herdr failing"
            case .ready: return board.agents.isEmpty ? "no agents" : nil
            }
        }
    }

    /// Lines a person should read about it beyond its rows: why it is away, herdr's state, the
    /// sessions that could not be read, agents left out.
    var notes: [String] {
        var notes: [String] = []
        if case .lost(let problem, let retrying) = state {
            let kept = board?.agents.isEmpty == false ? "; its agents as last seen" : ""
            notes.append(
                "\(name): \(Self.word(for: problem.kind)): \(problem.message)\(retrying ? " (trying again)" : "")\(kept)"
            )
        }
        guard let board else { return notes }
        if let detail = board.herdr.detail, board.herdr.state != .ready {
            notes.append("\(name): herdr \(board.herdr.state.rawValue): \(detail)")
        }
        for session in board.sessions where session.state != .ready && session.state != .notRunning {
            notes.append(
                "\(name): herdr session \(session.name) \(session.state.rawValue)"
                    + (session.detail.map { ": \($0)" } ?? ""))
        }
        if board.omitted > 0 { notes.append("\(name): \(board.omitted) more agents not listed (at most 256)") }
        return notes
    }

    static func word(for kind: ComputerProblem.Kind) -> String {
        switch kind {
        case .unreachable: "unreachable"
        case .timedOut: "timed out"
        case .olderHerdrHost: "older herdr-host"
        case .hostKeyChanged: "host key changed"
        case .notPinned: "not pinned"
        case .authentication: "login refused"
        case .pairingGone: "pairing gone"
        case .relayRefused: "relay refused"
        case .unsupported: "unsupported"
        case .protocolViolation: "broken answer"
        case .failed: "failed"
        }
    }
}

/// One agent on one computer: a row of `agents` and of `watch`'s board.
struct AgentRow: Sendable, Hashable {
    var computer: String
    var agent: HerdrAgent

    /// What opens it: `connect COMPUTER --agent SESSION/PANE`.
    var target: String { "\(agent.session)/\(agent.pane)" }

    /// The rows of every computer's board (kept boards too), in the order a person wants them:
    /// by status (`blocked` first), the longest waiting first, then by computer and place.
    static func rows(_ computers: [ComputerEntry]) -> [AgentRow] {
        computers.flatMap { entry in
            (entry.board?.agents.values).map { $0.map { AgentRow(computer: entry.name, agent: $0) } } ?? []
        }.sorted(by: listOrder)
    }

    static func listOrder(_ lhs: AgentRow, _ rhs: AgentRow) -> Bool {
        if lhs.agent.status != rhs.agent.status { return lhs.agent.status < rhs.agent.status }
        let (left, right) = (lhs.agent.since ?? .max, rhs.agent.since ?? .max)
        if left != right { return left < right }
        if lhs.computer != rhs.computer { return lhs.computer < rhs.computer }
        return lhs.agent.key < rhs.agent.key
    }
}

/// How long ago a status began, in the fewest characters: `12s`, `4m`, `3h`, `2d`; `-` unknown.
enum SinceText {
    static func format(since: Int64?, now: Int64) -> String {
        guard let since else { return "-" }
        let seconds = max(0, now - since)
        switch seconds {
        case ..<60: return "\(seconds)s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<(48 * 3600): return "\(seconds / 3600)h"
        default: return "\(seconds / 86400)d"
        }
    }
}
