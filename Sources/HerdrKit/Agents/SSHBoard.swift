import HerdrAgents

/// One computer's agents board over the SSH road: herdr's session list, then one snapshot per
/// running session (at most `HerdrSessionInfo.maximumCount`), over one poller.
enum SSHBoard {
    /// What herdr answered, before it is read.
    struct Replies: Sendable {
        var list: HerdrPoll.Reply
        /// The snapshot of each running session, by name.
        var snapshots: [String: HerdrPoll.Reply]
    }

    /// Asks for the list and the running sessions' snapshots, each within `timeout` seconds.
    static func read(_ poller: SSHHerdrPoller, timeout: Double) async throws(ComputerProblem) -> Replies {
        let list = try await poller.request(.list, timeout: timeout)
        var replies = Replies(list: list, snapshots: [:])
        guard case .success(let sessions) = listing(list) else { return replies }
        for session in sessions where session.running {
            replies.snapshots[session.name] = try await poller.request(
                .snapshot(session: session.name), timeout: timeout)
        }
        return replies
    }

    /// The sessions herdr listed (at most `HerdrSessionInfo.maximumCount`), or what herdr's state is when
    /// it could not list them.
    static func listing(_ list: HerdrPoll.Reply) -> Result<[HerdrSessionListing], HerdrAvailabilityError> {
        if list.herdrMissing {
            return .failure(HerdrAvailabilityError(HerdrAvailability(.notInstalled, detail: list.problem)))
        }
        guard list.status == 0 else {
            return .failure(HerdrAvailabilityError(HerdrAvailability(.failing, detail: list.problem)))
        }
        do {
            return .success(Array(try HerdrJSON.sessionList(list.output).prefix(HerdrSessionInfo.maximumCount)))
        } catch {
            return .failure(HerdrAvailabilityError(HerdrAvailability(.failing, detail: error.description)))
        }
    }

    /// The board the replies make: every listed session with its state, the agents of those whose
    /// snapshot read, at most `AgentBoard.maximumAgents` of them (`since` unknown: the caller's
    /// tracker stamps it).
    static func board(_ replies: Replies) -> AgentBoard {
        let sessions: [HerdrSessionListing]
        switch listing(replies.list) {
        case .failure(let error): return AgentBoard(herdr: error.availability)
        case .success(let listed): sessions = listed
        }
        var infos: [HerdrSessionInfo] = []
        var agents: [HerdrAgent] = []
        for session in sessions {
            guard session.running else {
                infos.append(HerdrSessionInfo(name: session.name, isDefault: session.isDefault, state: .notRunning))
                continue
            }
            guard let snapshot = replies.snapshots[session.name] else { continue }
            guard snapshot.status == 0 else {
                infos.append(
                    HerdrSessionInfo(
                        name: session.name, isDefault: session.isDefault, state: .failing, detail: snapshot.problem))
                continue
            }
            do {
                let read = try HerdrJSON.snapshotAgents(snapshot.output)
                agents += read.agents.map { $0.agent(session: session.name, since: nil) }
                infos.append(HerdrSessionInfo(name: session.name, isDefault: session.isDefault, state: .ready))
            } catch {
                infos.append(
                    HerdrSessionInfo(
                        name: session.name, isDefault: session.isDefault, state: .failing, detail: error.description))
            }
        }
        var board = AgentBoard(herdr: .ready, sessions: infos, agents: agents)
        board.bound()
        return board
    }
}

/// herdr could not be listed: its state on the computer.
struct HerdrAvailabilityError: Error {
    let availability: HerdrAvailability
    init(_ availability: HerdrAvailability) { self.availability = availability }
}

/// When each agent's status began, as far as a device polling herdr can tell (herdr says nothing
/// of it): unknown for what the first poll found, the poll that first saw it for an agent that
/// appeared or a status that changed later. Pure.
public struct AgentSinceTracker: Sendable {
    private var seen: [AgentKey: (status: HerdrAgentStatus, since: Int64?)] = [:]
    private var polled = false

    public init() {}

    /// `board` with each agent's `since` stamped, `now` being this poll's time (Unix seconds).
    public mutating func stamp(_ board: AgentBoard, now: Int64) -> AgentBoard {
        var stamped = board
        var next: [AgentKey: (status: HerdrAgentStatus, since: Int64?)] = [:]
        for (key, agent) in board.agents {
            let since: Int64?
            if let earlier = seen[key], earlier.status == agent.status {
                since = earlier.since
            } else {
                since = polled ? now : nil
            }
            stamped.agents[key]?.since = since
            next[key] = (agent.status, since)
        }
        seen = next
        polled = true
        return stamped
    }
}
