import Companion
import Foundation
import HerdrAgents
import HerdrWatch
import RelayClient

/// herdr's agents on the channel (docs/companion.md, "Agents"): each channel's watch of the
/// board, sent within the device's frame budget beside its sessions; `open agent` checked
/// against the board as it is now. The herdr watch (`HerdrWatch`) runs while a channel watches
/// or an `open agent` waits for it, and a minute more: reading herdr costs nothing while nobody
/// looks, and a device that looks again soon finds it warm.
extension HostAgent {
    /// One channel's watch, and the device whose frame budget it spends.
    struct AgentFeed {
        let device: UUID
        var feed = AgentBoardFeed()
    }

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

    // MARK: - Watching

    /// `{"agents":{"v":1,"watch":…}}` on `channel`.
    func setWatch(_ watch: Bool, device: UUID, channel: Int, _ loop: Loop) {
        var entry = loop.agentFeeds[channel] ?? AgentFeed(device: device)
        if watch { entry.feed.watch(now: MonotonicClock.now) } else { entry.feed.unwatch() }
        loop.agentFeeds[channel] = entry
        updateHerdrDemand(loop)
    }

    func forgetWatch(on channel: Int, _ loop: Loop) {
        guard loop.agentFeeds.removeValue(forKey: channel) != nil else { return }
        updateHerdrDemand(loop)
    }

    /// The watch reads herdr while a channel watches or an `open agent` waits.
    private func updateHerdrDemand(_ loop: Loop) {
        let wanted = loop.agentFeeds.values.contains { $0.feed.isWatching } || !loop.heldSessionMessages.isEmpty
        guard wanted != loop.herdrDemand else { return }
        loop.herdrDemand = wanted
        loop.herdr?.setDemand(wanted)
    }

    /// Sends each watching channel what is due of the board, a frame of its device's budget each.
    func serveAgents(_ loop: Loop, now: Double) {
        guard !loop.agentFeeds.isEmpty else { return }
        for channel in Array(loop.agentFeeds.keys) {
            while var entry = loop.agentFeeds[channel], entry.feed.isDue(loop.agents, now: now),
                queuedBytes(on: channel, loop) < Self.sendQueueLimit,
                loop.sessions.takeFrame(for: entry.device, now: now)
            {
                guard let message = entry.feed.next(loop.agents, now: now) else {
                    loop.agentFeeds[channel] = entry
                    break
                }
                loop.agentFeeds[channel] = entry
                // A failed send drops the channel, and its watch with it.
                send(ChannelMessage.bytes(of: message), on: channel, loop)
            }
        }
    }

    /// When the board or a held `open agent` needs the loop next.
    func agentsDeadline(_ loop: Loop, now: Double) -> Double? {
        var deadline: Double?
        func consider(_ time: Double) { deadline = min(deadline ?? time, time) }
        for entry in loop.agentFeeds.values {
            guard let due = entry.feed.nextDeadline(loop.agents, now: now) else { continue }
            consider(due <= now ? now + loop.sessions.frameWait(for: entry.device, now: now) : due)
        }
        for held in loop.heldSessionMessages.values { consider(held.since + Self.openAgentWait) }
        return deadline
    }

    // MARK: - herdr's news

    func herdrReported(_ report: HerdrWatch.Report, _ loop: Loop) {
        loop.agents.update(report)
        var status = loop.herdrStatus
        if report.isRunning {
            status = AgentStatus.HerdrStatus(report.board, since: Date())
        } else {
            status?.watching = false
        }
        if let status, !status.isSameState(as: loop.herdrStatus) {
            loop.herdrStatus = status
            loop.statusDirty = true
        }
        releaseHeldMessages(loop)
    }

    // MARK: - Session messages and open agent

    /// A session message from `device`, on its route: to the table, with the board for an `open
    /// agent`; held while an earlier one waits for herdr, or when this one must.
    func sessionMessage(_ message: SessionMessage, device: UUID, _ loop: Loop) {
        if var held = loop.heldSessionMessages[device] {
            guard held.messages.count < Self.maximumHeldMessages else {
                dropHeldMessages(of: device, loop)
                if let channel = loop.routes[device] {
                    drop(
                        channel,
                        why: "it sent more than \(Self.maximumHeldMessages) messages while its agent was checked", loop)
                }
                return
            }
            held.messages.append(message)
            loop.heldSessionMessages[device] = held
            return
        }
        guard case .openAgent = message else {
            return perform(loop.sessions.received(message, from: device, now: MonotonicClock.now), loop)
        }
        guard loop.agents.isFresh else {
            // Checked against a fresh look at herdr, not a stale or empty board.
            loop.heldSessionMessages[device] = HeldMessages(since: MonotonicClock.now, messages: [message])
            updateHerdrDemand(loop)
            return
        }
        perform(
            loop.sessions.received(message, from: device, now: MonotonicClock.now, agents: loop.agents.board), loop
        )
    }

    /// Hands held messages to the table once herdr was looked at (or the wait ran out), in order.
    func releaseHeldMessages(_ loop: Loop) {
        guard !loop.heldSessionMessages.isEmpty else { return }
        let now = MonotonicClock.now
        for (device, held) in loop.heldSessionMessages
        where loop.agents.isFresh || now >= held.since + Self.openAgentWait {
            loop.heldSessionMessages[device] = nil
            for message in held.messages {
                perform(loop.sessions.received(message, from: device, now: now, agents: loop.agents.board), loop)
            }
        }
        updateHerdrDemand(loop)
    }

    func dropHeldMessages(of device: UUID, _ loop: Loop) {
        guard loop.heldSessionMessages.removeValue(forKey: device) != nil else { return }
        updateHerdrDemand(loop)
    }
}
