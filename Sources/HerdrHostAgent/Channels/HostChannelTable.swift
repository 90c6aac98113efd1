import Foundation
import HerdrAgents
import NetworkPath

/// Every channel of the computer's, on both roads, one record each, and each device's route: the
/// channel its sessions speak over, the one it last sent a session message on. A device may have
/// a relay channel and home channels at once (it races its roads; a road that died may not have
/// noticed yet); moving its route hangs up the old channel, and its sessions resume on the new
/// one, as after a drop.
///
/// Pure: the shell (`HostAgent`) passes the time in and carries out what the table returns
/// (closing a connection, saying why, letting the sessions wait). Each record carries the
/// shell's `Link` (the connection and its Noise channel), which the table never touches.
struct HostChannelTable<Link> {
    typealias ID = HostChannelID

    /// The road a channel runs on.
    enum Road: Hashable, Sendable {
        /// The device's relay room.
        case relay(device: UUID)
        /// A connection through the home door.
        case home
    }

    enum State: Hashable, Sendable {
        /// Its handshake is under way (a relay room's: parked, waiting for the device).
        case handshaking
        /// The handshake completed with the paired device's key.
        case connected
        /// Hung up by the agent, its end already said: it carries nothing more and waits for its
        /// connection's end (a home link counts against the limit until then).
        case closing
    }

    /// One channel.
    struct Channel {
        let road: Road
        fileprivate(set) var state = State.handshaking
        /// A relay room's device from the start; a home link's once its first message matched one.
        fileprivate(set) var device: UUID?
        /// When it was opened: a home link has `homeHandshakeTimeout` from then to be connected.
        let openedAt: Double
        /// Once connected: whether its device is still heard.
        fileprivate(set) var liveness: PathLiveness?
        /// Its watch of the agents board, from the device's first `agents` message on; the feed
        /// lasts the channel's life, and its `seq` with it.
        fileprivate(set) var agentFeed: AgentBoardFeed?
        /// The shell's I/O.
        let link: Link

        /// A message arrived at `now`: the device, when it is connected.
        fileprivate mutating func heard(now: Double) -> UUID? {
            guard state == .connected else { return nil }
            liveness?.heard(now: now)
            return device
        }

        fileprivate mutating func close() {
            state = .closing
            liveness = nil
            agentFeed = nil
        }
    }

    /// What a channel's end leaves to the shell.
    struct Ending {
        let id: ID
        let road: Road
        let device: UUID?
        /// The device was connected on it: the end is its disconnection, to be said once.
        let wasConnected: Bool
        /// The device's sessions spoke over it: they wait for the device, their grace period from
        /// this time, the last thing heard on it.
        let sessionsWaitFrom: Double?
        let link: Link
    }

    /// Where a session message moved its device's route.
    enum Rerouting {
        /// No channel carried the device's sessions.
        case started
        /// The old channel carried them: hung up now.
        case moved(from: Ending)
    }

    enum LivenessAction: Equatable {
        /// Send `{"ping":…}` on the channel.
        case ping(ID, UInt32)
        /// A ping went unanswered and nothing was heard for `silentFor` seconds: drop the channel.
        case drop(ID, silentFor: Double)
    }

    struct Settings {
        /// When a quiet channel is pinged, and the silence that drops it.
        var liveness: PathLiveness.Settings
        /// Home links at once; more are refused as they arrive.
        var maximumHomeLinks: Int
        /// Seconds a home link has to complete its handshake.
        var homeHandshakeTimeout: Double
    }

    let settings: Settings
    private(set) var records: [ID: Channel] = [:]
    /// Each device's route.
    private(set) var routes: [UUID: ID] = [:]
    /// The channels with an agents feed (watching or not), which the loop serves after every batch.
    private(set) var agentFeedChannels: Set<ID> = []
    private var homeLinkCount = 0
    /// The last id given: one count for both roads.
    private var lastID = 0

    init(settings: Settings) {
        self.settings = settings
    }

    subscript(id: ID) -> Channel? { records[id] }

    /// The I/O of `id` while it is open (not closing).
    func link(_ id: ID) -> Link? {
        guard let channel = records[id], channel.state != .closing else { return nil }
        return channel.link
    }

    /// The channel `device`'s sessions speak over.
    func route(of device: UUID) -> ID? { routes[device] }

    /// The devices of the home links (closing ones too).
    var homeDevices: Set<UUID> {
        Set(records.values.lazy.filter { $0.road == .home }.compactMap(\.device))
    }

    // MARK: - Opening

    /// `device`'s relay room admitted a connection: its channel, handshaking.
    mutating func openRelay(for device: UUID, link: Link, now: Double) -> ID {
        add(Channel(road: .relay(device: device), device: device, openedAt: now, link: link))
    }

    /// The home door admitted a connection: its channel, or nil when `maximumHomeLinks` are open.
    mutating func openHome(link: Link, now: Double) -> ID? {
        guard homeLinkCount < settings.maximumHomeLinks else { return nil }
        homeLinkCount += 1
        return add(Channel(road: .home, openedAt: now, link: link))
    }

    private mutating func add(_ channel: Channel) -> ID {
        lastID += 1
        let id = ID(value: lastID)
        records[id] = channel
        return id
    }

    /// Home link `id`'s first message matched `device`'s prologue.
    mutating func identify(_ id: ID, as device: UUID) {
        records[id]?.device = device
    }

    /// `id`'s handshake completed at `now` with its device's key: connected, heard from now.
    mutating func established(_ id: ID, now: Double) {
        guard records[id]?.state == .handshaking else { return }
        records[id]?.state = .connected
        records[id]?.liveness = PathLiveness(settings: settings.liveness, now: now)
    }

    /// Home links whose handshake outlasted `homeHandshakeTimeout` at `now`.
    func overdueHandshakes(now: Double) -> [ID] {
        records.compactMap { id, channel in
            let overdue = now - channel.openedAt > settings.homeHandshakeTimeout
            return channel.road == .home && channel.state == .handshaking && overdue ? id : nil
        }
    }

    // MARK: - Messages

    /// A message arrived on `id` at `now` (its device is heard): the device, when `id` is
    /// connected; nil before its handshake ended, when a message breaks the channel's rule.
    mutating func messageArrived(on id: ID, now: Double) -> UUID? {
        records[id]?.heard(now: now)
    }

    /// A session message from `device` on `id` at `now`: its sessions speak over `id` from now.
    /// Nil when they already did.
    mutating func routeSessions(of device: UUID, over id: ID, now: Double) -> Rerouting? {
        guard routes[device] != id else { return nil }
        let old = routes[device].flatMap { hangUp($0, now: now) }
        routes[device] = id
        return old.map { .moved(from: $0) } ?? .started
    }

    /// `{"pong":…}` on `id`.
    mutating func pong(_ ping: UInt32, on id: ID, now: Double) {
        records[id]?.liveness?.pong(ping, now: now)
    }

    // MARK: - Ending

    /// The agent hangs up `id` (a drop, a moved route): it carries nothing more and waits,
    /// closing, for its connection's end. Nil when it was closing already, or is unknown.
    mutating func hangUp(_ id: ID, now: Double) -> Ending? {
        guard let channel = records[id], channel.state != .closing else { return nil }
        records[id]?.close()
        agentFeedChannels.remove(id)
        return ending(of: channel, id, now: now)
    }

    /// `id`'s connection ended: its record goes. Its ending, unless the agent had hung it up
    /// (and said so) already.
    mutating func ended(_ id: ID, now: Double) -> Ending? {
        guard let channel = remove(id), channel.state != .closing else { return nil }
        return ending(of: channel, id, now: now)
    }

    /// A new connection of the device's opened a fresh handshake on relay channel `id`'s socket
    /// (the relay spliced it in the old one's place): `id` ends, and a channel with a new id
    /// takes its place over `link`, handshaking.
    mutating func restart(_ id: ID, link: Link, now: Double) -> (ended: Ending, id: ID)? {
        guard let channel = records[id], channel.state != .closing, case .relay(let device) = channel.road,
            let ended = ended(id, now: now)
        else { return nil }
        return (ended, openRelay(for: device, link: link, now: now))
    }

    /// `device` is no longer paired: every channel of its ends, its relay channel at once (its
    /// room goes, and with it the end that would come), its home links closing. Its route goes
    /// without its sessions waiting: they go with the device. The endings of those not closing
    /// already.
    mutating func forget(_ device: UUID, now: Double) -> [Ending] {
        routes[device] = nil
        var endings: [Ending] = []
        for (id, channel) in records where channel.device == device {
            if case .relay = channel.road {
                _ = remove(id)
            } else {
                records[id]?.close()
                agentFeedChannels.remove(id)
            }
            if channel.state != .closing { endings.append(ending(of: channel, id, now: now)) }
        }
        return endings
    }

    private mutating func remove(_ id: ID) -> Channel? {
        guard let channel = records.removeValue(forKey: id) else { return nil }
        if channel.road == .home { homeLinkCount -= 1 }
        agentFeedChannels.remove(id)
        return channel
    }

    /// `channel`'s ending, the device's route with it.
    private mutating func ending(of channel: Channel, _ id: ID, now: Double) -> Ending {
        var waitFrom: Double?
        if let device = channel.device, routes[device] == id {
            routes[device] = nil
            waitFrom = channel.liveness?.lastHeard ?? now
        }
        return Ending(
            id: id, road: channel.road, device: channel.device, wasConnected: channel.state == .connected,
            sessionsWaitFrom: waitFrom, link: channel.link)
    }

    // MARK: - Liveness

    /// Pings the connected channels that have been quiet; those that stayed so after a ping are
    /// to be dropped.
    mutating func checkLiveness(now: Double) -> [LivenessAction] {
        var actions: [LivenessAction] = []
        for id in Array(records.keys) {
            switch records[id]?.liveness?.tick(now: now) {
            case .ping(let ping): actions.append(.ping(id, ping))
            case .suspect(let silentFor): actions.append(.drop(id, silentFor: silentFor))
            case nil: break
            }
        }
        return actions
    }

    // MARK: - The agents board

    /// `{"agents":{"v":1,"watch":…}}` on `id` at `now`.
    mutating func setWatch(_ watch: Bool, on id: ID, now: Double) {
        guard records[id]?.state == .connected else { return }
        if records[id]?.agentFeed == nil {
            records[id]?.agentFeed = AgentBoardFeed()
            agentFeedChannels.insert(id)
        }
        if watch { records[id]?.agentFeed?.watch(now: now) } else { records[id]?.agentFeed?.unwatch() }
    }

    /// Whether a channel watches the board.
    var watchesAgents: Bool {
        agentFeedChannels.contains { records[$0]?.agentFeed?.isWatching == true }
    }

    /// The device whose frame budget a board message on `id` spends, when one is due at `now`.
    func agentMessageDue(on id: ID, _ board: CurrentAgentBoard, now: Double) -> UUID? {
        guard let channel = records[id], channel.agentFeed?.isDue(board, now: now) == true else { return nil }
        return channel.device
    }

    /// The board message to send on `id` at `now`, if one is due.
    mutating func nextAgentMessage(on id: ID, _ board: CurrentAgentBoard, now: Double) -> AgentBoardMessage? {
        records[id]?.agentFeed?.next(board, now: now)
    }
}
