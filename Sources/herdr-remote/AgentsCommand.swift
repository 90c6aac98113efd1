import CLISupport
import Foundation
import HerdrAgents
import HerdrKit

/// `agents [HOST…]`: every computer's agents in one table, the ones waiting for a person first.
enum AgentsCommand {
    static let defaultTimeout = 5

    static let spec = CommandSpec(
        name: "agents", abstract: "List the herdr agents of every saved computer, the ones that need you first.",
        discussion: """
            Every computer is asked at once, over its own road: over SSH by running herdr session list --json \
            and herdr api snapshot for each running session (the host key must be pinned: connect once \
            first); on the end-to-end roads herdr-host sends its board. Each gets --timeout seconds; one that \
            does not answer in time, or cannot be reached, or has no herdr, still gets its row, saying so, and \
            a note says why. Rows are sorted blocked first, then done, working, idle, unknown, the longest \
            waiting first. SINCE is how long the status has lasted, as far as the computer knows (over SSH \
            this device cannot tell, so it shows -).

            Open one with: herdr-remote connect COMPUTER --agent SESSION/PANE

            Examples:
              herdr-remote agents
              herdr-remote agents studio laptop --timeout 3
              herdr-remote agents --json | jq '.agents[] | select(.status == "blocked")'
            """,
        arguments: [
            PositionalSpec(
                "host", help: "Saved hosts to ask (default: every saved host).", isRequired: false, isRepeating: true,
                completion: HostCommands.savedNames)
        ],
        options: [timeoutOption(defaultTimeout)],
        flags: [
            FlagSpec(
                "json",
                help:
                    "Print JSON for scripts instead of the table: {version, computers: [...], agents: [...]} (docs/agents.md)."
            )
        ],
        exitCodes: RemoteExitCode.agentsCodes,
        handler: { @MainActor arguments in
            try await run(arguments)
        })

    /// `--timeout SECONDS`, shared by `agents` and `sessions`.
    static func timeoutOption(_ seconds: Int) -> OptionSpec {
        OptionSpec(
            "timeout", valueName: "seconds",
            help: "How long each computer has to answer, in seconds (1-120); a connection's own limit too.",
            defaultValue: String(seconds))
    }

    /// The options reading a board once takes, with the time limit `seconds`.
    static func readOptions(limit seconds: Int) -> BoardWatchOptions {
        var options = BoardWatchOptions()
        options.session.connectTimeout = .seconds(seconds)
        options.requestTimeout = Double(seconds)
        options.boardTimeout = Double(seconds)
        options.session.agentSocketPath = agentSocket
        return options
    }

    /// The ssh-agent to ask for keys, as `connect` does: `SSH_AUTH_SOCK`, empty meaning none.
    static var agentSocket: String? {
        guard let socket = ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"], !socket.isEmpty else { return nil }
        return socket
    }

    /// The hosts named, or every saved host.
    @MainActor
    static func hosts(_ names: [String], in store: HostStore) throws -> [HostProfile] {
        guard !names.isEmpty else {
            guard !store.hosts.isEmpty else {
                throw RemoteError(.failure, "no hosts are saved yet; add one with herdr-remote add, or pair one")
            }
            return store.hosts.sorted { $0.name < $1.name }
        }
        var seen: Set<String> = []
        return try names.filter { seen.insert($0).inserted }.map { try HostCommands.findHost($0, in: store) }
    }

    @MainActor
    static func run(_ arguments: ParsedArguments) async throws -> ExitCode {
        let limit = try arguments.int("timeout", range: 1...120) ?? defaultTimeout
        let store = try HostCommands.openStore()
        let hosts = try hosts(arguments.positionals("host"), in: store)
        let computers = await read(hosts, store: store, limit: limit)
        let now = Int64(Date().timeIntervalSince1970)
        print(
            arguments.flag("json") ? AgentsReport.json(computers) : AgentTable.render(computers, now: now),
            terminator: "")
        if arguments.flag("json") { print() }
        return computers.allSatisfy(\.isLive) ? .success : RemoteExitCode.someUnanswered
    }

    /// Every host's board at once, each within `limit` seconds, in the hosts' order.
    @MainActor
    static func read(_ hosts: [HostProfile], store: HostStore, limit: Int) async -> [ComputerEntry] {
        let options = readOptions(limit: limit)
        var entries = hosts.map { ComputerEntry(name: $0.name, road: $0.road) }
        await withTaskGroup(of: Answer.self) { group in
            for index in hosts.indices {
                let host = hosts[index]
                group.addTask { await ask(host, index: index, store: store, limit: limit, options: options) }
            }
            for await answer in group {
                switch answer.result {
                case .success(let read): entries[answer.index].update(.live(read.board, road: read.road))
                case .failure(let problem): entries[answer.index].update(.lost(problem, retrying: false))
                }
            }
        }
        return entries
    }

    /// One host's board, or why there is none.
    struct Answer: Sendable {
        var index: Int
        var result: Result<(board: AgentBoard, road: String), ComputerProblem>
    }

    @MainActor
    private static func ask(
        _ host: HostProfile, index: Int, store: HostStore, limit: Int, options: BoardWatchOptions
    ) async -> Answer {
        Answer(
            index: index, result: await ComputerBoards.read(host, store: store, limit: Double(limit), options: options))
    }
}
