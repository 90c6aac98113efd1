import Companion
import Foundation
import RelayClient
import Synchronization

/// Channels and the sessions' route: a device may have a relay channel and home channels at
/// once (the device races its roads; a road that died may not have noticed yet), but its
/// sessions speak over one, the channel it last sent a session message on. Moving the route
/// hangs up the old channel and resumes the sessions on the new one, as a relay drop would.
extension HostAgent {
    /// Ids for channels, unique across both roads; taken on the home door's accept thread too.
    final class ChannelCounter: Sendable {
        private let value = Atomic<Int>(0)
        func next() -> Int { value.add(1, ordering: .relaxed).newValue }
    }

    /// A message from `device` on `channel`: session messages move the route here and go to the
    /// table, control messages are answered. Nil, or why the channel ends: the device broke the
    /// channel's rule (ChannelMessage), to be logged as the channel's end.
    ///
    /// The device goes by its id: its whole record is looked up only for a control message (a
    /// copy of it per keystroke is a dozen retains and releases).
    func channelMessage(_ bytes: [UInt8], device: UUID, channel: Int, _ loop: Loop) -> String? {
        loop.liveness[channel]?.heard(now: MonotonicClock.now)
        let message: ChannelMessage
        do {
            message = try ChannelMessage(parsing: bytes)
        } catch {
            return "it sent \(error)"
        }
        switch message {
        case .session(let message):
            if loop.routes[device] != channel {
                if let old = loop.routes[device] {
                    routeEnded(old, device: device, loop)
                    close(old, why: "its sessions moved to \(road(of: channel, loop))", loop)
                }
                loop.routes[device] = channel
                // No relay on the home road: no frame cap to keep under.
                loop.sessions.connected(device, budget: loop.homeLinks[channel] != nil ? .unlimited : .computer)
            }
            sessionMessage(message, device: device, loop)
        case .control(let message):
            guard let paired = loop.homeLinks[channel]?.device ?? loop.slots[device]?.device else {
                return "it is no longer paired"
            }
            control(message, device: paired, channel: channel, loop)
        case .agents:
            return "it sent an agents board, which only a computer sends"
        }
        return nil
    }

    /// `channel` ended or was dropped: if the device's sessions spoke over it, they wait for it
    /// to come back (the grace period, from the last thing heard on it).
    func routeEnded(_ channel: Int, device: UUID, _ loop: Loop) {
        let heard = loop.liveness.removeValue(forKey: channel)?.lastHeard
        // A dropped channel forgets its watch of the agents.
        forgetWatch(on: channel, loop)
        guard loop.routes[device] == channel else { return }
        loop.routes[device] = nil
        // Messages of the route that waited for herdr go with it: the device resends after its resume.
        dropHeldMessages(of: device, loop)
        perform(loop.sessions.disconnected(device, now: heard ?? MonotonicClock.now), loop)
    }

    /// Sends one message on `channel`, in place (a copy of a channel would share its cipher
    /// states); a failed send drops the channel.
    func send(_ bytes: [UInt8], on channel: Int, _ loop: Loop) {
        do {
            if let link = loop.homeLinks[channel] {
                try link.channel?.send(bytes)
            } else if let slot = relaySlot(holding: channel, loop) {
                try slot.channel?.send(bytes)
            }
        } catch {
            drop(channel, why: "\(error)", loop)
        }
    }

    /// Bytes waiting for `channel`'s socket.
    func queuedBytes(on channel: Int, _ loop: Loop) -> Int {
        if let link = loop.homeLinks[channel] { return link.connection.queuedByteCount }
        return relaySlot(holding: channel, loop)?.channel?.connection.queuedByteCount ?? 0
    }

    /// Ends `channel` for `why`, the one log line of its end: a relay slot parks again, a home link
    /// closes; the route, if it was the device's, waits for the device.
    func drop(_ channel: Int, why: String, _ loop: Loop) {
        if let link = loop.homeLinks[channel] {
            end(link, why: why, loop)
            if let device = link.device { routeEnded(channel, device: device.id, loop) }
        } else if let slot = relaySlot(holding: channel, loop) {
            drop(slot, why: why, loop)
        }
    }

    /// Closes `channel` for `why` (logged) without touching the route (the caller moved it).
    private func close(_ channel: Int, why: String, _ loop: Loop) {
        if let link = loop.homeLinks[channel] {
            end(link, why: why, loop)
        } else if let slot = relaySlot(holding: channel, loop) {
            if slot.state == "connected" { log("\(slot.device.name): disconnected (\(why))") }
            slot.channel?.connection.close()
            slot.channel = nil
            slot.channelID = nil
            setState(slot, "reconnecting", loop)
        }
    }

    /// "the home network" or "the relay": the road `channel` runs on, for the log.
    func road(of channel: Int, _ loop: Loop) -> String {
        loop.homeLinks[channel] != nil ? "the home network" : "the relay"
    }

    func relaySlot(holding channel: Int, _ loop: Loop) -> Slot? {
        loop.slots.values.first { $0.channelID == channel }
    }

    func deviceName(_ device: UUID, _ loop: Loop) -> String {
        loop.slots[device]?.device.name ?? loop.homeLinks.values.first { $0.device?.id == device }?.device?.name
            ?? "a device"
    }
}
