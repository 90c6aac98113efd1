import Foundation
import HerdrAgents
import HerdrWatch
import Plumbing
import SessionProtocol

/// herdr's agents on the channel (docs/companion.md, "Agents"): each channel's watch of the
/// board, sent within the device's frame budget beside its sessions; `open agent` checked
/// against the board as it is now. The herdr watch (`HerdrWatch`) runs while a channel watches
/// or an `open agent` waits for it, and a minute more: reading herdr costs nothing while nobody
/// looks, and a device that looks again soon finds it warm.
extension HostAgent {
    /// A device's session messages that wait, in order, for a fresh look at herdr (an `open
    /// agent` came while the watch was not running or had not read every session yet).
    struct HeldMessages {
        let since: Double
        var messages: [SessionMessage] = []
    }

    /// Seconds an `open agent` waits for herdr's first look (every session's answer or time
    /// limit comes well within it); then it is answered from the board as it is.
    static let openAgentWait: Double = 5
    /// Session messages held for a device at most (keystrokes typed while its agent is checked).
    static let maximumHeldMessages = 4096

    /// herdr's agents in the loop: the watch, what it knows, whether it is wanted, what the status
    /// file says of it (the last board the watch had), and the session messages of devices whose
    /// `open agent` waits for a fresh look. Each channel's watch of the board is the channel
    /// table's.
    struct AgentsState {
        var watch: HerdrWatch?
        var current = CurrentAgentBoard()
        var demand = false
        var status: AgentStatus.HerdrStatus?
        var held: [UUID: HeldMessages] = [:]
    }

    // MARK: - Watching

    /// The watch reads herdr while a channel watches or an `open agent` waits.
    func updateHerdrDemand(_ loop: Loop) {
        let wanted = loop.channels.watchesAgents || !loop.agents.held.isEmpty
        guard wanted != loop.agents.demand else { return }
        loop.agents.demand = wanted
        loop.agents.watch?.setDemand(wanted)
    }

    /// Sends each watching channel what is due of the board, a frame of its device's budget each.
    func serveAgents(_ loop: Loop, now: Double) {
        guard !loop.channels.agentFeedChannels.isEmpty else { return }
        for channel in loop.channels.agentFeedChannels {
            while let device = loop.channels.agentMessageDue(on: channel, loop.agents.current, now: now),
                queuedBytes(on: channel, loop) < Self.sendQueueLimit,
                loop.sessions.takeFrame(for: device, now: now)
            {
                guard let message = loop.channels.nextAgentMessage(on: channel, loop.agents.current, now: now) else {
                    break
                }
                // A failed send drops the channel, and its watch with it.
                send(ChannelMessage.bytes(of: message), on: channel, loop)
            }
        }
    }

    /// When the board or a held `open agent` needs the loop next.
    func agentsDeadline(_ loop: Loop, now: Double) -> Double? {
        var deadline: Double?
        func consider(_ time: Double) { deadline = min(deadline ?? time, time) }
        for id in loop.channels.agentFeedChannels {
            guard let channel = loop.channels[id], let device = channel.device,
                let due = channel.agentFeed?.nextDeadline(loop.agents.current, now: now)
            else { continue }
            consider(due <= now ? now + loop.sessions.frameWait(for: device, now: now) : due)
        }
        for held in loop.agents.held.values { consider(held.since + Self.openAgentWait) }
        return deadline
    }

    // MARK: - herdr's news

    func herdrReported(_ report: HerdrWatch.Report, _ loop: Loop) {
        loop.agents.current.update(report)
        var status = loop.agents.status
        if report.isRunning {
            status = AgentStatus.HerdrStatus(report.board, since: Date())
        } else {
            status?.watching = false
        }
        if let status, !status.isSameState(as: loop.agents.status) {
            loop.agents.status = status
            loop.statusDirty = true
        }
        releaseHeldMessages(loop)
    }

    // MARK: - Session messages and open agent

    /// A session message from `device`, on its route: to the table, with the board for an `open
    /// agent`; held while an earlier one waits for herdr, or when this one must.
    func sessionMessage(_ message: SessionMessage, device: UUID, _ loop: Loop) {
        if var held = loop.agents.held[device] {
            guard held.messages.count < Self.maximumHeldMessages else {
                dropHeldMessages(of: device, loop)
                if let channel = loop.channels.route(of: device) {
                    drop(
                        channel,
                        why: "it sent more than \(Self.maximumHeldMessages) messages while its agent was checked", loop)
                }
                return
            }
            held.messages.append(message)
            loop.agents.held[device] = held
            return
        }
        guard Self.opensAnAgent(message) else {
            return perform(loop.sessions.received(message, from: device, now: MonotonicClock.now), loop)
        }
        guard loop.agents.current.isFresh else {
            // Checked against a fresh look at herdr, not a stale or empty board.
            loop.agents.held[device] = HeldMessages(since: MonotonicClock.now, messages: [message])
            updateHerdrDemand(loop)
            return
        }
        perform(
            loop.sessions.received(message, from: device, now: MonotonicClock.now, agents: loop.agents.current.board),
            loop)
    }

    /// Whether `message` opens an agent's pane (of bytes or as a screen session): the table checks
    /// those against the board.
    static func opensAnAgent(_ message: SessionMessage) -> Bool {
        switch message {
        case .openAgent, .openScreen(_, .agent, _, _): return true
        default: return false
        }
    }

    /// Hands held messages to the table once herdr was looked at (or the wait ran out), in order.
    func releaseHeldMessages(_ loop: Loop) {
        guard !loop.agents.held.isEmpty else { return }
        let now = MonotonicClock.now
        for (device, held) in loop.agents.held
        where loop.agents.current.isFresh || now >= held.since + Self.openAgentWait {
            loop.agents.held[device] = nil
            for message in held.messages {
                perform(
                    loop.sessions.received(message, from: device, now: now, agents: loop.agents.current.board), loop)
            }
        }
        updateHerdrDemand(loop)
    }

    func dropHeldMessages(of device: UUID, _ loop: Loop) {
        guard loop.agents.held.removeValue(forKey: device) != nil else { return }
        updateHerdrDemand(loop)
    }
}
