import Foundation
import HerdrAgents
import HerdrKit

/// `agents`' table: one row per agent across every computer (`AgentRow.listOrder`), then one row
/// for each computer with no agent to show (away, no herdr, no agents), then notes on what could
/// not be read. Pure.
enum AgentTable {
    static let header = ["COMPUTER", "SESSION", "PANE", "AGENT", "KIND", "STATUS", "SINCE"]

    static func render(_ computers: [ComputerEntry], now: Int64) -> String {
        var rows = [header]
        for row in AgentRow.rows(computers) {
            rows.append(cells(row, now: now))
        }
        for entry in computers {
            guard let status = entry.rowStatus else { continue }
            rows.append([entry.name, "-", "-", "-", "-", status, "-"])
        }
        var text = HostCommands.table(rows)
        let notes = computers.flatMap(\.notes)
        if !notes.isEmpty { text += "\n" + notes.map { $0 + "\n" }.joined() }
        return text
    }

    /// One agent's cells, in `header`'s order.
    static func cells(_ row: AgentRow, now: Int64) -> [String] {
        let agent = row.agent
        return [
            row.computer, agent.session, agent.pane, agent.name ?? "-", agent.kind ?? "-", agent.status.rawValue,
            SinceText.format(since: agent.since, now: now),
        ]
    }
}

/// `agents --json`: a stable shape for scripts (docs/agents.md, "agents --json"). Version 1:
/// `computers` in the order asked, each with `answered` and either its herdr state, sessions and
/// `omitted`, or the `problem` that kept it from answering; `agents` across them in the table's
/// order. Keys are sorted; fields with no value are left out.
enum AgentsReport {
    static let version = 1

    static func json(_ computers: [ComputerEntry]) -> String {
        let object: [String: Any] = [
            "version": version,
            "computers": computers.map(computer),
            "agents": AgentRow.rows(computers).map(agent),
        ]
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    private static func computer(_ entry: ComputerEntry) -> [String: Any] {
        var fields: [String: Any] = ["name": entry.name, "road": entry.road, "answered": entry.isLive]
        if case .lost(let problem, _) = entry.state {
            fields["problem"] = ["kind": problem.kind.rawValue, "message": problem.message]
        }
        if case .connecting = entry.state {
            fields["problem"] = ["kind": ComputerProblem.Kind.timedOut.rawValue, "message": "no answer"]
        }
        if let board = entry.board, entry.isLive {
            var herdr: [String: Any] = ["state": board.herdr.state.rawValue]
            if let detail = board.herdr.detail { herdr["detail"] = detail }
            fields["herdr"] = herdr
            fields["sessions"] = board.sessions.map { session -> [String: Any] in
                var fields: [String: Any] = [
                    "name": session.name, "default": session.isDefault, "state": session.state.rawValue,
                ]
                if let detail = session.detail { fields["detail"] = detail }
                return fields
            }
            fields["omitted"] = board.omitted
        }
        return fields
    }

    private static func agent(_ row: AgentRow) -> [String: Any] {
        let agent = row.agent
        var fields: [String: Any] = [
            "computer": row.computer, "session": agent.session, "pane": agent.pane, "status": agent.status.rawValue,
        ]
        if let name = agent.name { fields["name"] = name }
        if let kind = agent.kind { fields["kind"] = kind }
        if let title = agent.title { fields["title"] = title }
        if let since = agent.since { fields["since"] = since }
        return fields
    }
}
