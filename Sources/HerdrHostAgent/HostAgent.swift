import CLISupport
import Companion
import Foundation
import Glibc
import HerdrAgents
import HerdrCrypto
import HerdrKit
import HerdrWatch
import HomeRoad
import NetworkPath
import Noise
import PeerGateListener
import RelayClient
import RelayProtocol
import Synchronization

/// `herdr-host run`: parks in every paired device's room and keeps parking, with backoff, through
/// drops and relay restarts; notices pairings and unpairings made while it runs; listens on the
/// home network when configured (`HomeDoorConfiguration`); serves each device that connects over
/// either road (a fresh XK handshake, the pinned static key only, the device's status). A
/// device's sessions follow the channel it last sent a session message on. It logs no secret;
/// peer addresses only for the home door's refusals.
///
/// The loop's state is handled one input at a time under one lock (`CombiningQueue`): a frame on
/// its connection's thread, a PTY's output on its I/O thread; the caller's thread keeps the
/// timers and takes `inputs` from outside (`stop`).
public final class HostAgent: Sendable {
    public enum Input: Sendable {
        case room(device: UUID, tag: Int, RoomPump.Event)
        /// Whether the relay still holds the device's room (nil: it could not say).
        case roomCheck(device: UUID, tag: Int, established: Bool?)
        /// A terminal session's PTY.
        case pty(HostSessionTable.SessionID, PTYProcess.Event)
        /// The home door admitted a connection (its channel id).
        case homeOpened(Int, HomeConnection)
        /// A home connection's frame or end.
        case home(Int, RelayConnectionEvent)
        /// What the herdr watch knows now (its thread).
        case herdr(HerdrWatch.Report)
        /// Work done on another thread moved a deadline closer: the loop's thread recomputes its wait.
        case timersChanged
        case stop
    }

    /// Seconds between checks that a parked room still exists: a room deleted or expired while
    /// the agent was away admits its signed join all the same, in open mode.
    static let roomCheckInterval: TimeInterval = 600

    public let inputs = EventQueue<Input>()
    let directory: AgentDirectory
    let registry: DeviceRegistry
    let staticKey: KeyPair
    let linkOptions: RelayLink.Options
    let sessionSettings: HostSessionTable.Settings
    let homeDoor: HomeDoorConfiguration?
    let herdr: HerdrLocation
    let herdrSettings: HerdrWatcher.Settings
    let log: @Sendable (String) -> Void

    /// `homeDoor` nil: no home door, the relay road only. `herdr`: where this account's herdr
    /// keeps its sockets, read while a device watches its agents.
    public init(
        directory: AgentDirectory, staticKey: KeyPair, linkOptions: RelayLink.Options = RelayLink.Options(),
        sessionSettings: HostSessionTable.Settings = HostSessionTable.Settings(),
        homeDoor: HomeDoorConfiguration? = nil, herdr: HerdrLocation = HerdrLocation(),
        herdrSettings: HerdrWatcher.Settings = HerdrWatcher.Settings(), log: @escaping @Sendable (String) -> Void
    ) {
        self.homeDoor = homeDoor
        self.herdr = herdr
        self.herdrSettings = herdrSettings
        self.directory = directory
        self.registry = DeviceRegistry(directory: directory)
        self.staticKey = staticKey
        self.linkOptions = linkOptions
        self.sessionSettings = sessionSettings
        self.log = log
    }

    /// One device's room while the agent parks in it.
    final class Slot {
        var device: PairedDevice
        let pump: RoomPump
        let tag: Int
        var channel: FramedChannel?
        /// The channel's id among all of the agent's channels (relay and home), while there is one.
        var channelID: Int?
        var state = "connecting"
        var since = Date()
        var lastRoomCheck: Date?

        init(device: PairedDevice, pump: RoomPump, tag: Int) {
            self.device = device
            self.pump = pump
            self.tag = tag
        }
    }

    final class Loop {
        var slots: [UUID: Slot] = [:]
        var sessions: HostSessionTable
        var ptys: [HostSessionTable.SessionID: PTYProcess] = [:]
        /// Each device's session channel: the one it last sent a session message on.
        var routes: [UUID: Int] = [:]
        /// Ids for channels, shared with the home door's accept thread.
        let homeIDs = ChannelCounter()
        var home: HomeDoorState?
        var homeLinks: [Int: HomeLink] = [:]
        /// Each established channel's liveness, by channel id (`HostAgent+Liveness`).
        var liveness: [Int: PathLiveness] = [:]
        /// herdr's agents (`HostAgent+Agents`): the watch, what it knows, each channel's watch of
        /// the board, and the session messages of devices whose `open agent` waits for a fresh look.
        var herdr: HerdrWatch?
        var agents = CurrentAgentBoard()
        var herdrDemand = false
        /// What the status file says of herdr: the last board the watch had.
        var herdrStatus: AgentStatus.HerdrStatus?
        var agentFeeds: [Int: AgentFeed] = [:]
        var heldSessionMessages: [UUID: HeldMessages] = [:]

        init(sessions: HostSessionTable) { self.sessions = sessions }
        var nextTag = 0
        var generation = ""
        /// The registry's devices as read at `generation`.
        var devices: [PairedDevice] = []
        var started = Date()
        var statusDirty = true
        /// Where inputs from the links, the PTYs and the room checks go.
        var work: CombiningQueue<Input>?
        /// When the loop's thread wakes next (monotonic seconds).
        var loopWakesAt = 0.0
        /// `run` is ending: inputs still arriving are ignored.
        var shuttingDown = false
        /// Sessions given a PTY (or a try), ever: those no longer in the table have ended.
        var sessionsSpawned = 0
        var sessionsEnded: Int { sessionsSpawned - sessions.sessionCount }
    }

    /// Runs until `stop` arrives, then stops every link.
    public func run() {
        let loop = Loop(sessions: HostSessionTable(settings: sessionSettings))
        let work = CombiningQueue<Input> { [self] batch in
            guard !loop.shuttingDown else { return }
            for input in batch { handle(input, loop) }
            serveSessions(loop, tick: false)
            if loop.statusDirty { writeStatus(loop) }
            // A deadline set here that the loop's thread would sleep through.
            if MonotonicClock.now + wakeTimeout(loop) < loop.loopWakesAt - 0.001 { inputs.push(.timersChanged) }
        }
        loop.work = work
        work.withLock {
            loop.herdr = HerdrWatch(location: herdr, settings: herdrSettings, log: log) { report in
                work.push(.herdr(report))
            }
            reconcile(loop)
            openHomeDoor(loop)
        }
        var lastCheck = Date()
        var endedAtLastTrim = 0
        while true {
            let timeout = work.withLock {
                let timeout = wakeTimeout(loop)
                loop.loopWakesAt = MonotonicClock.now + timeout
                return timeout
            }
            if let input = inputs.next(timeout: timeout) {
                if case .stop = input { break }
                work.push(input)
            }
            let checking = Date().timeIntervalSince(lastCheck) >= 1
            // Read before taking the lock: a keystroke arriving meanwhile does not wait for it.
            let interfaces = checking && homeDoor != nil ? InterfaceAddresses.current() : nil
            let ended = work.withLock {
                serveSessions(loop)
                if checking {
                    lastCheck = Date()
                    if registry.generation() != loop.generation { reconcile(loop) }
                    // A `pair` that held a room may have ended since (the list read at the last
                    // change of the registry; decoding it every second would cost a millisecond).
                    if loop.slots.count != wanted(loop.devices).count { reconcile(loop) }
                    checkHomeDoor(loop, interfaces: interfaces)
                    checkLiveness(loop)
                }
                if loop.statusDirty { writeStatus(loop) }
                return loop.sessionsEnded
            }
            // What the ended sessions held goes back to the system, outside the lock.
            if ended > endedAtLastTrim {
                endedAtLastTrim = ended
                FreedMemory.returnToSystem()
            }
        }
        let links = work.withLock {
            loop.shuttingDown = true
            loop.herdr?.stop()
            closeHomeDoor(loop)
            for pty in loop.ptys.values { pty.hangUp() }
            for slot in loop.slots.values { slot.pump.stop() }
            return loop.slots.values.map(\.pump.link)
        }
        for link in links { link.waitUntilStopped(timeout: 3) }
        try? FileManager.default.removeItem(at: directory.agentStatusFile)
    }

    // MARK: - Devices

    /// Those of `devices` the agent parks for.
    private func wanted(_ devices: [PairedDevice]) -> [PairedDevice] {
        devices.filter { device in
            guard device.ended == nil else { return false }  // gone on the other side, or being unpaired here
            guard device.relay != nil else { return false }  // paired on the home network only: no room
            if let holder = device.finishingProcess,
                ProcessIdentity(pid: holder.pid, startTime: holder.startTime, bootID: holder.bootID).isAlive
            {
                return false  // `herdr-host pair` is still finishing this pairing in that room
            }
            return true
        }
    }

    /// Parks for new devices, stops for gone ones.
    private func reconcile(_ loop: Loop) {
        loop.generation = registry.generation()
        let devices: [PairedDevice]
        do {
            devices = try registry.devices()
        } catch {
            log("cannot read the paired devices: \(error)")
            return
        }
        loop.devices = devices
        let wantedIDs = Set(wanted(devices).map(\.id))
        for (id, slot) in loop.slots where !wantedIDs.contains(id) {
            forget(id, loop)
            if !devices.contains(where: { $0.id == id }) { log("\(slot.device.name): unpaired; no longer parked") }
        }
        // Devices paired on the home network alone have no slot: their home links end here.
        let current = Set(devices.filter { $0.ended == nil }.map(\.id))
        for id in Set(loop.homeLinks.values.compactMap(\.device?.id)) where !current.contains(id) {
            forget(id, loop)
        }
        for device in devices where wantedIDs.contains(device.id) {
            if let slot = loop.slots[device.id] {
                slot.device = device
                continue
            }
            start(device, loop)
        }
    }

    /// The device is gone (unpaired, removed on the other side): its room, its home links, its
    /// route and its sessions end.
    private func forget(_ id: UUID, _ loop: Loop) {
        loop.slots[id]?.pump.stop()
        loop.slots[id] = nil
        for link in loop.homeLinks.values where link.device?.id == id { end(link, why: "its pairing ended", loop) }
        loop.routes[id] = nil
        perform(loop.sessions.forget(id), loop)
        loop.statusDirty = true
    }

    private func start(_ device: PairedDevice, _ loop: Loop) {
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
        loop.nextTag += 1
        let tag = loop.nextTag
        let id = device.id
        guard let work = loop.work else { return }
        // In the confirmed-not-established window the room is still a pairing room: the relay
        // admits the signed join there too (open mode takes any proof into such a room).
        let link = RelayLink(
            endpoint: endpoint, room: device.room, role: .mac, credential: .joinKey(key), options: linkOptions)
        let pump = RoomPump(link: link, tag: tag) { tag, event in work.push(.room(device: id, tag: tag, event)) }
        loop.slots[device.id] = Slot(device: device, pump: pump, tag: tag)
        loop.statusDirty = true
        log("\(device.name): parking in its room at \(endpoint.host)")
    }

    // MARK: - Events

    private func handle(_ input: Input, _ loop: Loop) {
        if case .pty(let id, let event) = input { return ptyEvent(id, event, loop) }
        switch input {
        case .homeOpened, .home: return homeEvent(input, loop)
        case .herdr(let report): return herdrReported(report, loop)
        default: break
        }
        if case .roomCheck(let id, let tag, let established) = input {
            guard established == false, let slot = loop.slots[id], slot.tag == tag else { return }
            // The room lost its verifier: the device removed the pairing (or it expired).
            forget(id, loop)
            return stopped(slot, .roomDeleted)
        }
        guard case .room(let id, let tag, let event) = input, let slot = loop.slots[id], slot.tag == tag else { return }
        switch event {
        case .admitted(let connection):
            guard
                let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                    pid: slot.device.pairingID, localStatic: staticKey)
            else { return connection.close() }
            slot.channel = FramedChannel(connection: connection, handshake: handshake)
            slot.channelID = loop.homeIDs.next()
            setState(slot, "parked", loop)
            checkRoom(slot, loop)
        case .frame(let frame):
            received(frame, slot, loop)
        case .connectionEnded(let end):
            if slot.state == "connected" { log("\(slot.device.name): disconnected (\(end))") }
            slot.channel = nil
            if let channel = slot.channelID.take() { routeEnded(channel, device: id, loop) }
            setState(slot, "reconnecting", loop)
        case .waiting(let delay, let reason):
            setState(slot, "waiting (\(reason)); retry in \(Int(delay.rounded(.up))) s", loop)
        case .stopped(let reason):
            if let channel = slot.channelID.take() { routeEnded(channel, device: id, loop) }
            slot.channel = nil
            // The pairing still stands after these, so the device is still wanted: the slot stays,
            // stopped, or the next check would park again (and take the room back from the other
            // herdr-host, which would take it back in turn). A restart parks again.
            switch reason {
            case .displaced: setState(slot, "stopped: another herdr-host took the room", loop)
            case .refused(let why): setState(slot, "stopped: the relay refused to park (\(why))", loop)
            default:
                loop.slots[id] = nil
                loop.statusDirty = true
            }
            stopped(slot, reason)
        }
    }

    /// Asks the relay, on a thread of its own, whether an established device's room still has its
    /// verifier; at most every `roomCheckInterval`.
    private func checkRoom(_ slot: Slot, _ loop: Loop) {
        guard slot.device.established, let work = loop.work else { return }
        if let last = slot.lastRoomCheck, Date().timeIntervalSince(last) < Self.roomCheckInterval { return }
        slot.lastRoomCheck = Date()
        guard let secret = try? registry.roomSecret(for: slot.device.id),
            let key = try? RelayJoinKey(roomSecret: secret),
            let endpoint = try? RelayEndpoint(parsing: slot.device.relay ?? "")
        else { return }
        let (id, tag, room) = (slot.device.id, slot.tag, slot.device.room)
        let thread = Thread {
            let established = try? RelayHTTPClient(endpoint: endpoint).roomIsEstablished(
                room: room, verifier: key.verifier)
            work.push(.roomCheck(device: id, tag: tag, established: established))
        }
        thread.name = "room check"
        thread.start()
    }

    private func received(_ frame: [UInt8], _ slot: Slot, _ loop: Loop) {
        guard slot.channel != nil else { return }
        do {
            // In place: a copy would share the cipher states and make the next message build a
            // fresh cipher context.
            let outputs = try slot.channel?.receive(frame) ?? []
            for output in outputs {
                switch output {
                case .established(let established):
                    // Only the device pinned at confirmation; anyone else is cut off at once.
                    guard ConstantTime.equal(established.remoteStaticPublicKey ?? [], slot.device.deviceKeyBytes) else {
                        log("\(slot.device.name): refused a handshake from another device key")
                        return drop(slot, why: "another device key", loop)
                    }
                    log("\(slot.device.name): connected")
                    setState(slot, "connected", loop)
                    if let channel = slot.channelID { channelEstablished(channel, loop) }
                    _ = try? registry.update(slot.device.id) { $0.lastSeen = Date() }
                case .message(let bytes):
                    guard slot.state == "connected", let channel = slot.channelID else {
                        return drop(slot, why: "a message before the handshake ended", loop)
                    }
                    if let why = channelMessage(bytes, device: slot.device.id, channel: channel, loop) {
                        return drop(slot, why: why, loop)
                    }
                }
            }
        } catch {
            if slot.state == "connected", restartHandshake(frame, slot, loop) { return }
            if slot.state != "connected" { log("\(slot.device.name): a handshake failed (\(error)); parking again") }
            drop(slot, why: "\(error)", loop)
        }
    }

    /// A frame the established channel cannot read may be a new connection of the device's,
    /// which the relay spliced to this socket in its old one's place (a reconnect, or a race
    /// after a silent path): when it opens a fresh handshake, that handshake takes over here at
    /// once, rather than the agent parking again while the device waits. The pinned key still
    /// decides at its end; the old channel's sessions wait for the device as after a drop.
    private func restartHandshake(_ frame: [UInt8], _ slot: Slot, _ loop: Loop) -> Bool {
        guard let connection = slot.channel?.connection,
            let handshake = try? CompanionProfile.herdrRemote.responderHandshake(
                pid: slot.device.pairingID, localStatic: staticKey)
        else { return false }
        var channel = FramedChannel(connection: connection, handshake: handshake)
        guard (try? channel.receive(frame)) != nil else { return false }
        if let old = slot.channelID { routeEnded(old, device: slot.device.id, loop) }
        log("\(slot.device.name): disconnected (a new connection of the device took over)")
        slot.channel = channel
        slot.channelID = loop.homeIDs.next()
        setState(slot, "parked", loop)
        return true
    }

    /// A control message from `device` on channel `channel` (either road).
    func control(_ message: CompanionMessage, device: PairedDevice, channel: Int, _ loop: Loop) {
        let slot = loop.slots[device.id]
        let established = slot?.device.established ?? device.established
        switch message {
        case .status(let status):
            let stored = (try? registry.roomSecret(for: device.id)) ?? nil
            if stored.map({ ConstantTime.equal($0, status.roomSecret) }) != true {
                if established {
                    // The relay's verifier comes from the stored secret: another one would lock
                    // both sides out of the room.
                    log("\(device.name): sent another room secret for an established room; kept the registered one")
                } else if let key = try? RelayJoinKey(roomSecret: status.roomSecret) {
                    // Not registered yet: the device's latest secret is the one it will register.
                    var renamed = device
                    renamed.name = status.name
                    try? registry.save(renamed, roomSecret: status.roomSecret)
                    slot?.pump.link.setCredential(.joinKey(key))
                }
            }
            _ = try? registry.update(device.id) { device in
                device.name = status.name
                if status.registered { device.established = true }
            }
            if status.registered { slot?.device.established = true }
            send(CompanionMessage.statusAcknowledged.bytes, on: channel, loop)
            send(CompanionMessage.home(loop.home?.addresses ?? []).bytes, on: channel, loop)
        case .ping(let id):
            send(CompanionMessage.pong(id).bytes, on: channel, loop)
        case .pong(let id):
            loop.liveness[channel]?.pong(id, now: MonotonicClock.now)
        case .window(let stream, let bytes):
            guard loop.routes[device.id] == channel else { return }
            perform(loop.sessions.setWindow(bytes, stream: stream, from: device.id), loop)
        case .registered:
            _ = try? registry.update(device.id) { $0.established = true }
            slot?.device.established = true
            log("\(device.name): the room is established")
        case .agents(let watch):
            setWatch(watch, device: device.id, channel: channel, loop)
        case .pairing, .statusAcknowledged, .home, .inputReceived, .unknown:
            break
        }
    }

    /// Ends the slot's channel (it parks again); `why` is the channel's one log line of its end
    /// when a device was connected on it.
    func drop(_ slot: Slot, why: String, _ loop: Loop) {
        if slot.state == "connected" { log("\(slot.device.name): disconnected (\(why))") }
        slot.channel?.connection.close()
        slot.channel = nil
        if let channel = slot.channelID.take() { routeEnded(channel, device: slot.device.id, loop) }
        setState(slot, "reconnecting", loop)
    }

    /// The link gave up: say plainly what happened and what to do.
    private func stopped(_ slot: Slot, _ reason: RelayLink.StopReason) {
        let name = slot.device.name
        let current = (try? registry.devices())?.first { $0.id == slot.device.id }
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
            _ = try? registry.update(slot.device.id) { $0.ended = ended }
        }
        log(message)
    }

    func setState(_ slot: Slot, _ state: String, _ loop: Loop) {
        guard slot.state != state else { return }
        slot.state = state
        slot.since = Date()
        loop.statusDirty = true
    }

    private func writeStatus(_ loop: Loop) {
        loop.statusDirty = false
        guard let me = ProcessIdentity.current() else { return }
        let rooms = loop.slots.values.sorted { $0.device.name < $1.device.name }.map {
            AgentStatus.Room(device: $0.device.id, name: $0.device.name, state: $0.state, since: $0.since)
        }
        var status = AgentStatus(
            pid: me.pid, startTime: me.startTime, bootID: me.bootID, startedAt: loop.started, rooms: rooms)
        status.home = homeDoorStatus(loop)
        status.herdr = loop.herdrStatus
        do {
            try status.save(directory)
        } catch {
            log("cannot write the status file: \(error)")
        }
    }
}
