import EndToEndChannel
import Foundation
import HerdrCrypto
import HerdrKit
import Noise
import Plumbing
import RelayClient
import RelayProtocol

/// The relay road: one room per paired device, parked in through a `RelayLink` that hands its
/// events, and its connection's frames, straight to the loop. Each admitted connection is a
/// channel of the table's, which waits for the device's handshake.
extension HostAgent {
    /// One device's room while the agent parks in it.
    final class RelayRoom {
        var device: PairedDevice
        let link: RelayLink
        let tag: Int
        /// The channel of the admitted connection, while there is one.
        var channel: HostChannelID?
        var state = RoomState.connecting
        var since = Date()
        var lastRoomCheck: Date?
        /// The device left since the last check: it may have removed the pairing as it went, and
        /// a room deleted between two of our connections admits the next one all the same.
        var checkDue = false

        init(device: PairedDevice, link: RelayLink, tag: Int) {
            self.device = device
            self.link = link
            self.tag = tag
        }
    }

    /// Starts parking in `device`'s room.
    func park(_ device: PairedDevice, _ loop: Loop) {
        let secret: [UInt8]
        let endpoint: RelayEndpoint
        let key: RelayJoinKey
        do {
            guard let stored = try registry.roomSecret(for: device.id) else {
                log("\(device.name): no room secret is kept for this device; pair it again")
                return
            }
            secret = stored
            endpoint = try RelayEndpoint(parsing: device.relay ?? "")
            key = try RelayJoinKey(roomSecret: secret)
        } catch {
            log("\(device.name): cannot park: \(error)")
            return
        }
        loop.lastRoomTag += 1
        let tag = loop.lastRoomTag
        let id = device.id
        guard let work = loop.work else { return }
        // In the confirmed-not-established window the room is still a pairing room: the relay
        // admits the signed join there too (open mode takes any proof into such a room).
        let link = RelayLink(
            endpoint: endpoint, room: device.room, role: .computer, credential: .joinKey(key), options: linkOptions)
        loop.rooms[device.id] = RelayRoom(device: device, link: link, tag: tag)
        link.deliver { event in work.push(.room(device: id, tag: tag, event)) }
        loop.statusDirty = true
        log("\(device.name): parking in its room at \(endpoint.host)")
    }

    func roomEvent(_ event: RelayLink.RoomEvent, device id: UUID, tag: Int, _ loop: Loop) {
        guard let room = loop.rooms[id], room.tag == tag else { return }
        switch event {
        case .admitted(let connection):
            guard
                let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                    pid: room.device.pairingID, localStatic: staticKey)
            else { return connection.close() }
            let link = ChannelLink(FramedChannel(connection: connection, handshake: handshake))
            room.channel = loop.channels.openRelay(for: id, link: link, now: MonotonicClock.now)
            setState(room, .parked, loop)
            checkRoom(room, loop)
        case .frame(let frame):
            received(frame, room, loop)
        case .connectionEnded(let end):
            if let channel = room.channel.take(), let ending = loop.channels.ended(channel, now: MonotonicClock.now) {
                if ending.wasConnected {
                    log("\(room.device.name): disconnected (\(end))")
                    room.checkDue = true
                }
                sessionsWait(ending, loop)
            }
            setState(room, .reconnecting, loop)
        case .waiting(let delay, let reason):
            setState(room, .waiting(reason: reason, retryIn: Int(delay.rounded(.up))), loop)
        case .stopped(let reason):
            if let channel = room.channel.take(), let ending = loop.channels.ended(channel, now: MonotonicClock.now) {
                sessionsWait(ending, loop)
            }
            // The pairing still stands after these, so the device is still wanted: the room stays,
            // stopped, or the next check would park again (and take the room back from the other
            // herdr-host, which would take it back in turn). A restart parks again.
            switch reason {
            case .displaced: setState(room, .displaced, loop)
            case .refused(let why): setState(room, .refused(why), loop)
            default:
                loop.rooms[id] = nil
                loop.statusDirty = true
            }
            stopped(room, reason)
        }
    }

    /// The relay's answer to `checkRoom`.
    func roomChecked(_ id: UUID, tag: Int, _ established: Bool?, _ loop: Loop) {
        guard established == false, let room = loop.rooms[id], room.tag == tag else { return }
        // The room lost its verifier: the device removed the pairing (or it expired).
        forget(id, loop)
        stopped(room, .roomDeleted)
    }

    /// Asks the relay, on a thread of its own, whether an established device's room still has its
    /// verifier: on the first admission after the device left, else at most every
    /// `roomCheckInterval`.
    private func checkRoom(_ room: RelayRoom, _ loop: Loop) {
        guard room.device.established, let work = loop.work else { return }
        if !room.checkDue, let last = room.lastRoomCheck, Date().timeIntervalSince(last) < Self.roomCheckInterval {
            return
        }
        room.checkDue = false
        room.lastRoomCheck = Date()
        guard let secret = try? registry.roomSecret(for: room.device.id),
            let key = try? RelayJoinKey(roomSecret: secret),
            let endpoint = try? RelayEndpoint(parsing: room.device.relay ?? "")
        else { return }
        let (id, tag, name) = (room.device.id, room.tag, room.device.room)
        let thread = Thread {
            let established = try? RelayHTTPClient(endpoint: endpoint).roomIsEstablished(
                room: name, verifier: key.verifier)
            work.push(.roomCheck(device: id, tag: tag, established: established))
        }
        thread.name = "room check"
        thread.start()
    }

    private func received(_ frame: [UInt8], _ room: RelayRoom, _ loop: Loop) {
        // A channel hung up (closing) hears nothing more.
        guard let id = room.channel, let link = loop.channels.link(id) else { return }
        do {
            // In place: a copy would share the cipher states and make the next message build a
            // fresh cipher context.
            let outputs = try link.framed?.receive(frame) ?? []
            for output in outputs {
                switch output {
                case .established(let established):
                    // Only the device pinned at confirmation; anyone else is cut off at once.
                    guard ConstantTime.equal(established.remoteStaticPublicKey ?? [], room.device.deviceKeyBytes) else {
                        log("\(room.device.name): refused a handshake from another device key")
                        return drop(id, why: "another device key", loop)
                    }
                    log("\(room.device.name): connected")
                    setState(room, .connected, loop)
                    loop.channels.established(id, now: MonotonicClock.now)
                    _ = try? registry.update(room.device.id) { $0.lastSeen = Date() }
                case .message(let bytes):
                    let now = MonotonicClock.now
                    guard let device = loop.channels.messageArrived(on: id, now: now) else {
                        return drop(id, why: "a message before the handshake ended", loop)
                    }
                    if let why = channelMessage(bytes, device: device, channel: id, now: now, loop) {
                        return drop(id, why: why, loop)
                    }
                }
            }
        } catch {
            let connected = loop.channels[id]?.state == .connected
            if connected, restartHandshake(frame, room, loop) { return }
            if !connected { log("\(room.device.name): a handshake failed (\(error)); parking again") }
            drop(id, why: "\(error)", loop)
        }
    }

    /// A frame the established channel cannot read may be a new connection of the device's,
    /// which the relay spliced to this socket in its old one's place (a reconnect, or a race
    /// after a silent path): when it opens a fresh handshake, that handshake takes over here at
    /// once, rather than the agent parking again while the device waits. The pinned key still
    /// decides at its end; the old channel's sessions wait for the device as after a drop.
    private func restartHandshake(_ frame: [UInt8], _ room: RelayRoom, _ loop: Loop) -> Bool {
        guard let old = room.channel, let connection = loop.channels.link(old)?.connection,
            let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                pid: room.device.pairingID, localStatic: staticKey)
        else { return false }
        var framed = FramedChannel(connection: connection, handshake: handshake)
        guard (try? framed.receive(frame)) != nil,
            let restarted = loop.channels.restart(old, link: ChannelLink(framed), now: MonotonicClock.now)
        else { return false }
        sessionsWait(restarted.ended, loop)
        log("\(room.device.name): disconnected (a new connection of the device took over)")
        room.channel = restarted.id
        setState(room, .parked, loop)
        return true
    }

    /// The link gave up: say plainly what happened and what to do.
    private func stopped(_ room: RelayRoom, _ reason: RelayLink.StopReason) {
        let name = room.device.name
        let current = (try? registry.devices())?.first { $0.id == room.device.id }
        if current == nil || current?.ended == PairedDevice.unpairingHere {
            log("\(name): unpaired; no longer parked")
            return
        }
        // What to keep and what to say; kept first, so whoever reads the log finds it kept.
        let (ended, message): (String?, String)
        switch reason {
        case .stopped: return
        case .roomDeleted:
            ended = "removed on the device (the relay deleted the room)"
            message = "\(name): the pairing was removed on the device (or expired); pair again with: herdr-host pair"
        case .needsRepairing(let why):
            ended = "the relay no longer accepts this pairing (\(why))"
            message = "\(name): the relay no longer accepts this pairing (\(why)); pair again with: herdr-host pair"
        case .pairingCycleCap:
            ended = "the relay closed the room (pairing cycle cap)"
            message = "\(name): the relay closed the room before it was established; pair again with: herdr-host pair"
        case .displaced:
            ended = nil
            message =
                "\(name): another herdr-host took this device's room; stopped parking for it here (restart herdr-host to take it back)"
        case .refused(let why):
            ended = nil
            message = "\(name): the relay refused to park (\(why)); stopped parking for it until herdr-host restarts"
        }
        if let ended {
            _ = try? registry.update(room.device.id) { $0.ended = ended }
        }
        log(message)
    }

    func setState(_ room: RelayRoom, _ state: RoomState, _ loop: Loop) {
        guard room.state != state else { return }
        room.state = state
        room.since = Date()
        loop.statusDirty = true
    }
}
