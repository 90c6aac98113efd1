import EndToEndChannel
import Foundation
import HomeRoad
import NetworkPath
import Plumbing
import SessionProtocol

/// The shell of the channel table (`HostChannelTable`): it decides, this carries out. A device
/// may have a relay channel and home channels at once, but its sessions speak over one, the
/// channel it last sent a session message on; moving the route hangs up the old channel.
///
/// Liveness (docs/companion.md, "Liveness"): every established channel, on either road, is
/// pinged after 10 s of hearing nothing from its device and dropped 15 s later if still nothing
/// came, so a device whose network died without a word does not hold its sessions past their
/// grace period, which counts from the last thing heard.
extension HostAgent {
    /// The agent's channels, each carrying its I/O.
    typealias Channels = HostChannelTable<ChannelLink>

    /// A ping after 10 s of silence; the channel dropped after 15 s more.
    static let deviceLiveness: PathLiveness.Settings = {
        var settings = PathLiveness.Settings()
        settings.idlePing = 10
        settings.minimumSilence = 15
        return settings
    }()

    /// Liveness and the home door's limits, for the channel table.
    static let channelSettings = Channels.Settings(
        liveness: deviceLiveness, maximumHomeLinks: maximumHomeLinks, homeHandshakeTimeout: homeHandshakeTimeout)

    /// A channel's I/O, which the table carries for the shell: the connection, and once its
    /// handshake began the Noise channel over it.
    final class ChannelLink {
        let connection: any FramePipe
        /// Used in place: a copy would share its cipher states.
        var framed: FramedChannel?
        /// A home link's paired device, once its first message matched one (a relay room's is the
        /// room's).
        var homeDevice: PairedDevice?
        /// A home link's peer address, for the log.
        let homePeer: String?

        /// A relay room's, its handshake begun.
        init(_ framed: FramedChannel) {
            self.connection = framed.connection
            self.framed = framed
            self.homePeer = nil
        }

        /// A home link's, before its first message.
        init(home connection: HomeConnection) {
            self.connection = connection
            self.homePeer = connection.peer
        }
    }

    /// A message from `device` on `channel`, heard at `now`: session messages move the route
    /// here and go to the table, control messages are answered. Nil, or why the channel ends: the
    /// device broke the channel's rule (ChannelMessage), to be logged as the channel's end.
    ///
    /// The device goes by its id: its whole record is looked up only for a control message (a
    /// copy of it per keystroke is a dozen retains and releases).
    func channelMessage(_ bytes: [UInt8], device: UUID, channel: HostChannelID, now: Double, _ loop: Loop) -> String? {
        let message: ChannelMessage
        do {
            message = try ChannelMessage(parsing: bytes)
        } catch {
            return "it sent \(error)"
        }
        switch message {
        case .session(let message):
            if let rerouting = loop.channels.routeSessions(of: device, over: channel, now: now) {
                if case .moved(let old) = rerouting {
                    sessionsWait(old, loop)
                    hungUp(old, why: "its sessions moved to \(road(of: channel, loop))", loop)
                }
                // No relay on the home road: no frame cap to keep under.
                loop.sessions.connected(device, budget: loop.channels[channel]?.road == .home ? .unlimited : .computer)
            }
            sessionMessage(message, device: device, loop)
        case .control(let message):
            guard let paired = loop.channels.link(channel)?.homeDevice ?? loop.rooms[device]?.device else {
                return "it is no longer paired"
            }
            control(message, device: paired, channel: channel, loop)
        case .agents:
            return "it sent an agents board, which only a computer sends"
        }
        return nil
    }

    /// Sends one message on `channel`, in place (a copy of a channel would share its cipher
    /// states); a failed send drops the channel.
    func send(_ bytes: [UInt8], on channel: HostChannelID, _ loop: Loop) {
        do {
            try loop.channels.link(channel)?.framed?.send(bytes)
        } catch {
            drop(channel, why: "\(error)", loop)
        }
    }

    /// Bytes waiting for `channel`'s socket.
    func queuedBytes(on channel: HostChannelID, _ loop: Loop) -> Int {
        loop.channels.link(channel)?.connection.queuedByteCount ?? 0
    }

    /// Ends `channel` for `why`, the one log line of its end when a device was connected on it:
    /// a relay room parks again, a home link closes; the sessions, if they spoke over it, wait
    /// for the device.
    func drop(_ channel: HostChannelID, why: String, _ loop: Loop) {
        guard let ending = loop.channels.hangUp(channel, now: MonotonicClock.now) else { return }
        hungUp(ending, why: why, loop)
        sessionsWait(ending, loop)
    }

    /// Closes the connection of a channel the table hung up, saying `why` when a device was
    /// connected on it.
    func hungUp(_ ending: Channels.Ending, why: String, _ loop: Loop) {
        ending.link.connection.close()
        switch ending.road {
        case .relay(let device):
            guard let room = loop.rooms[device] else { return }
            if ending.wasConnected { log("\(room.device.name): disconnected (\(why))") }
            setState(room, .reconnecting, loop)
        case .home:
            guard ending.wasConnected, let device = ending.link.homeDevice else { return }
            log("\(device.name): disconnected from the home network (\(why))")
        }
    }

    /// A channel ended: if the device's sessions spoke over it, they wait for it to come back
    /// (the grace period, from the last thing heard on it). A dropped channel forgets its watch
    /// of the agents.
    func sessionsWait(_ ending: Channels.Ending, _ loop: Loop) {
        updateHerdrDemand(loop)
        guard let device = ending.device, let since = ending.sessionsWaitFrom else { return }
        // Messages of the route that waited for herdr go with it: the device resends after its resume.
        dropHeldMessages(of: device, loop)
        perform(loop.sessions.disconnected(device, now: since), loop)
    }

    /// "the home network" or "the relay": the road `channel` runs on, for the log.
    func road(of channel: HostChannelID, _ loop: Loop) -> String {
        loop.channels[channel]?.road == .home ? "the home network" : "the relay"
    }

    func deviceName(_ device: UUID, _ loop: Loop) -> String {
        if let room = loop.rooms[device] { return room.device.name }
        let home = loop.channels.records.values.first { $0.device == device && $0.link.homeDevice != nil }
        return home?.link.homeDevice?.name ?? "a device"
    }

    /// Pings the channels that have been quiet, drops those that stayed so.
    func checkLiveness(_ loop: Loop) {
        for action in loop.channels.checkLiveness(now: MonotonicClock.now) {
            switch action {
            case .ping(let channel, let id):
                send(CompanionMessage.ping(id).bytes, on: channel, loop)
            case .drop(let channel, let silentFor):
                drop(channel, why: "heard nothing for \(Int(silentFor)) s; its sessions wait for it", loop)
            }
        }
    }
}
