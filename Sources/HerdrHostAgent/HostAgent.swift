import CLISupport
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
import Plumbing
import RelayClient
import RelayProtocol
import SessionProtocol
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
        case room(device: UUID, tag: Int, RelayLink.RoomEvent)
        /// Whether the relay still holds the device's room (nil: it could not say).
        case roomCheck(device: UUID, tag: Int, established: Bool?)
        /// A terminal session's PTY.
        case pty(HostSessionTable.SessionID, PTYProcess.Event)
        /// A screen session's terminal emulator took output (its PTY's thread), and owes the
        /// program `replies`.
        case screen(HostSessionTable.SessionID, replies: [UInt8])
        /// The lines a screen session's scrollback request asked for, read off the loop.
        case scrollbackRead(HostSessionTable.SessionID, ScrollbackLines)
        /// The home door admitted a connection.
        case homeOpened(HomeConnection)
        /// A home connection's frame or end.
        case home(HostChannelID, FramePipeEvent)
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

    /// The loop's state, handled under the `CombiningQueue`'s lock.
    final class Loop {
        /// Every channel on both roads, and each device's route.
        var channels = Channels(settings: HostAgent.channelSettings)
        /// The relay rooms parked in, by device.
        var rooms: [UUID: RelayRoom] = [:]
        /// The last room's tag: a replaced room's late events carry an older one.
        var lastRoomTag = 0
        /// The paired devices as the registry had them at its last change.
        var paired = PairedDevices()
        var sessions: HostSessionTable
        var ptys = PTYs()
        /// The screen sessions' terminal emulators.
        var screens: [HostSessionTable.SessionID: ScreenTerminal] = [:]
        var home: HomeDoorState?
        var agents = AgentsState()
        let started = Date()
        var statusDirty = true
        /// Where inputs from the links, the PTYs and the room checks go.
        var work: CombiningQueue<Input>?
        /// When the loop's thread wakes next (monotonic seconds).
        var loopWakesAt = 0.0
        /// `run` is ending: inputs still arriving are ignored.
        var shuttingDown = false

        init(sessions: HostSessionTable) { self.sessions = sessions }

        var sessionsEnded: Int { ptys.started - sessions.sessionCount }
    }

    /// The registry's devices as read at `generation`.
    struct PairedDevices {
        var generation = ""
        var devices: [PairedDevice] = []
    }

    /// The sessions' PTYs, and how many were ever given one (or a try): those no longer in the
    /// session table have ended.
    struct PTYs {
        private(set) var running: [HostSessionTable.SessionID: PTYProcess] = [:]
        var started = 0

        subscript(id: HostSessionTable.SessionID) -> PTYProcess? {
            get { running[id] }
            set { running[id] = newValue }
        }
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
            loop.agents.watch = HerdrWatch(location: herdr, settings: herdrSettings, log: log) { report in
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
                    if registry.generation() != loop.paired.generation { reconcile(loop) }
                    // A `pair` that held a room may have ended since (the list read at the last
                    // change of the registry; decoding it every second would cost a millisecond).
                    if loop.rooms.count != wanted(loop.paired.devices).count { reconcile(loop) }
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
            loop.agents.watch?.stop()
            closeHomeDoor(loop)
            for pty in loop.ptys.running.values { pty.hangUp() }
            for room in loop.rooms.values { room.link.stop() }
            return loop.rooms.values.map(\.link)
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
        loop.paired.generation = registry.generation()
        let devices: [PairedDevice]
        do {
            devices = try registry.devices()
        } catch {
            log("cannot read the paired devices: \(error)")
            return
        }
        loop.paired.devices = devices
        let wantedIDs = Set(wanted(devices).map(\.id))
        for (id, room) in loop.rooms where !wantedIDs.contains(id) {
            forget(id, loop)
            if !devices.contains(where: { $0.id == id }) { log("\(room.device.name): unpaired; no longer parked") }
        }
        // Devices paired on the home network alone have no room: their home links end here.
        let current = Set(devices.filter { $0.ended == nil }.map(\.id))
        for id in loop.channels.homeDevices where !current.contains(id) {
            forget(id, loop)
        }
        for device in devices where wantedIDs.contains(device.id) {
            if let room = loop.rooms[device.id] {
                room.device = device
                continue
            }
            park(device, loop)
        }
    }

    /// The device is gone (unpaired, removed on the other side): its room, its home links, its
    /// route and its sessions end.
    func forget(_ id: UUID, _ loop: Loop) {
        loop.rooms.removeValue(forKey: id)?.link.stop()
        for ending in loop.channels.forget(id, now: MonotonicClock.now) {
            // Its relay channel ends with its room's link, without a word.
            if ending.road == .home { hungUp(ending, why: "its pairing ended", loop) }
        }
        perform(loop.sessions.forget(id), loop)
        updateHerdrDemand(loop)
        loop.statusDirty = true
    }

    // MARK: - Events

    private func handle(_ input: Input, _ loop: Loop) {
        switch input {
        case .pty(let id, let event): ptyEvent(id, event, loop)
        case .screen(let id, let replies): screenFed(id, replies: replies, loop)
        case .scrollbackRead(let id, let lines): loop.sessions.scrollbackRead(id, lines)
        case .room(let device, let tag, let event): roomEvent(event, device: device, tag: tag, loop)
        case .roomCheck(let device, let tag, let established): roomChecked(device, tag: tag, established, loop)
        case .homeOpened(let connection): homeOpened(connection, loop)
        case .home(let id, let event): homeEvent(event, on: id, loop)
        case .herdr(let report): herdrReported(report, loop)
        case .timersChanged, .stop: break
        }
    }

    /// A control message from `device` on channel `channel` (either road).
    func control(_ message: CompanionMessage, device: PairedDevice, channel: HostChannelID, _ loop: Loop) {
        let room = loop.rooms[device.id]
        let established = room?.device.established ?? device.established
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
                    room?.link.setCredential(.joinKey(key))
                }
            }
            _ = try? registry.update(device.id) { device in
                device.name = status.name
                if status.registered { device.established = true }
            }
            if status.registered { room?.device.established = true }
            send(CompanionMessage.servedByThisVersion.bytes, on: channel, loop)
            send(CompanionMessage.statusAcknowledged.bytes, on: channel, loop)
            send(CompanionMessage.home(loop.home?.addresses ?? []).bytes, on: channel, loop)
        case .ping(let id):
            send(CompanionMessage.pong(id).bytes, on: channel, loop)
        case .pong(let id):
            loop.channels.pong(id, on: channel, now: MonotonicClock.now)
        case .window(let stream, let bytes):
            guard loop.channels.route(of: device.id) == channel else { return }
            perform(loop.sessions.setWindow(bytes, stream: stream, from: device.id), loop)
        case .registered:
            _ = try? registry.update(device.id) { $0.established = true }
            room?.device.established = true
            log("\(device.name): the room is established")
        case .agents(let watch):
            loop.channels.setWatch(watch, on: channel, now: MonotonicClock.now)
            updateHerdrDemand(loop)
        case .pairing, .statusAcknowledged, .home, .inputReceived, .serves, .unknown:
            break
        }
    }

    private func writeStatus(_ loop: Loop) {
        loop.statusDirty = false
        guard let me = ProcessIdentity.current() else { return }
        let rooms = loop.rooms.values.sorted { $0.device.name < $1.device.name }.map {
            AgentStatus.Room(device: $0.device.id, name: $0.device.name, state: $0.state.description, since: $0.since)
        }
        var status = AgentStatus(
            pid: me.pid, startTime: me.startTime, bootID: me.bootID, startedAt: loop.started, rooms: rooms)
        status.home = homeDoorStatus(loop)
        status.herdr = loop.agents.status
        do {
            try status.save(directory)
        } catch {
            log("cannot write the status file: \(error)")
        }
    }
}
