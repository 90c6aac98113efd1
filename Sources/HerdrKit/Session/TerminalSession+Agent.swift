import Foundation
import HerdrAgents
import SSHClient

/// `connect --agent`: the agent the person named, found on the computer's board before the
/// session starts (docs/agents.md, "Opening an agent"), the same way on every road.
extension TerminalSession {
    /// SSH road: reads the board over one SSH connection (the pinned key `pin`) and resolves the
    /// target; false when the session failed (or was closed) meanwhile. A `SESSION/PANE` target is
    /// taken as it is: herdr checks it when it attaches.
    func resolveAgentOverSSH(pin: SSHPublicKey, generation: Int) async -> Bool {
        guard let target = options.agent, resolvedAgent == nil else { return true }
        if target.isExplicitPane, let session = target.session {
            resolvedAgent = HerdrAgent(key: AgentKey(session: session, pane: target.name), status: .unknown)
            return true
        }
        guard profile.platform == .unix else {
            fail(
                .agentsUnavailable,
                "Agents are read over SSH with a POSIX shell, which \(profile.name) (Windows) does not have; name the agent as SESSION/PANE (herdr checks it)"
            )
            return false
        }
        let board: AgentBoard
        do throws(ComputerProblem) {
            let poller = try SSHHerdrPoller(login: login, pin: pin)
            defer { poller.close() }
            let limit = options.connectTimeout.seconds
            try await poller.start(timeout: limit + 10)
            board = SSHBoard.board(try await SSHBoard.read(poller, timeout: 10))
        } catch {
            guard generation == self.generation else { return false }
            let kind: SessionFailureKind =
                switch error.kind {
                case .unreachable, .timedOut: .unreachable
                case .hostKeyChanged: .hostKeyChanged
                case .authentication: .authentication
                default: .agentsUnavailable
                }
            fail(kind, "Cannot read the agents of \(profile.name): \(error.message)")
            return false
        }
        guard generation == self.generation else { return false }
        if case .failure(let failure) = resolveAgent(on: board) {
            fail(failure.kind, failure.message)
            return false
        }
        return true
    }

    /// Resolves `options.agent` on `board` into `resolvedAgent`; the failure to end with otherwise.
    func resolveAgent(on board: AgentBoard) -> Result<HerdrAgent, AgentResolutionFailure> {
        guard let target = options.agent else {
            return .failure(AgentResolutionFailure(.agentNotFound, "No agent was asked for"))
        }
        switch board.herdr.state {
        case .ready: break
        case .notInstalled:
            return .failure(
                AgentResolutionFailure(
                    .agentsUnavailable,
                    "herdr is not installed on \(profile.name)" + (board.herdr.detail.map { " (\($0))" } ?? "")))
        case .failing:
            return .failure(
                AgentResolutionFailure(
                    .agentsUnavailable,
                    "herdr's sessions cannot be listed on \(profile.name)"
                        + (board.herdr.detail.map { " (\($0))" } ?? "")))
        }
        switch target.resolve(on: board, preferredSession: profile.herdrSession ?? HerdrSessionInfo.defaultName) {
        case .success(let agent):
            resolvedAgent = agent
            return .success(agent)
        case .failure(let error):
            var message = "\(profile.name): \(error)"
            let quiet = board.sessions.filter { $0.state != .ready && $0.state != .notRunning }
            if !quiet.isEmpty {
                message +=
                    " (not read: " + quiet.map { "\($0.name) \($0.state.rawValue)" }.joined(separator: ", ") + ")"
            }
            return .failure(AgentResolutionFailure(.agentNotFound, message))
        }
    }
}

/// Why `--agent` found no single agent: the kind to fail with and the words.
struct AgentResolutionFailure: Error {
    let kind: SessionFailureKind
    let message: String
    init(_ kind: SessionFailureKind, _ message: String) {
        self.kind = kind
        self.message = message
    }
}
