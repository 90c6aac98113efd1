import CLISupport
import Foundation
import HerdrAgents
import HerdrKit

/// `sessions HOST`: the computer's herdr sessions and whether each runs.
enum SessionsCommand {
    static let spec = CommandSpec(
        name: "sessions", abstract: "List a computer's herdr sessions: which run, and how many agents each has.",
        discussion: """
            Over SSH it runs herdr session list --json (and herdr api snapshot for each running session, to \
            count its agents; the host key must be pinned: connect once first); on the end-to-end roads \
            herdr-host says. STATE is running, not running, or why a running session could not be read \
            (unresponsive, failing, unsupported: an older herdr).

            Attach one with: herdr-remote add NAME --session SESSION ... (SSH), or connect and switch in herdr.
            """,
        arguments: [
            PositionalSpec(
                "name", help: "A saved host (herdr-remote hosts lists them).", completion: HostCommands.savedNames)
        ],
        options: [AgentsCommand.timeoutOption(10)],
        exitCodes: RemoteExitCode.sessionsCodes,
        handler: { @MainActor arguments in
            let limit = try arguments.int("timeout", range: 1...120) ?? 10
            let store = try HostCommands.openStore()
            let host = try HostCommands.findHost(arguments.positional("name") ?? "", in: store)
            let result = await ComputerBoards.read(
                host, store: store, limit: Double(limit), options: AgentsCommand.readOptions(limit: limit))
            let board: AgentBoard
            switch result {
            case .failure(let problem):
                throw RemoteError(RemoteExitCode.code(for: problem), "\(host.name): \(problem.message)")
            case .success(let read):
                board = read.board
            }
            switch board.herdr.state {
            case .ready: break
            case .notInstalled:
                throw RemoteError(
                    RemoteExitCode.agentsUnavailable,
                    "herdr is not installed on \(host.name)" + (board.herdr.detail.map { " (\($0))" } ?? ""))
            case .failing:
                throw RemoteError(
                    RemoteExitCode.agentsUnavailable,
                    "herdr's sessions cannot be listed on \(host.name)" + (board.herdr.detail.map { " (\($0))" } ?? ""))
            }
            print(render(board), terminator: "")
            return .success
        })

    /// The sessions table, then the details of running sessions that could not be read (a
    /// session not running says so in its row). Pure.
    static func render(_ board: AgentBoard) -> String {
        guard !board.sessions.isEmpty else { return "No herdr sessions.\n" }
        var rows = [["SESSION", "DEFAULT", "STATE", "AGENTS"]]
        for session in board.sessions {
            let agents = board.agents.values.filter { $0.session == session.name }.count
            rows.append([
                session.name, session.isDefault ? "yes" : "no", stateText(session.state),
                session.state == .ready ? String(agents) : "-",
            ])
        }
        var text = HostCommands.table(rows)
        let details = board.sessions.filter { $0.state != .notRunning }.compactMap { session in
            session.detail.map { "\(session.name): \($0)" }
        }
        if !details.isEmpty { text += "\n" + details.map { $0 + "\n" }.joined() }
        return text
    }

    static func stateText(_ state: HerdrSessionInfo.State) -> String {
        switch state {
        case .ready: "running"
        case .notRunning: "not running"
        case .unsupported: "unsupported"
        case .unresponsive: "unresponsive"
        case .failing: "failing"
        }
    }
}
