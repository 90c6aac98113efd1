import Foundation
import HerdrAgents
import Testing

@testable import HerdrHostAgent

/// The computer's channel table, the time passed in: one record per channel on either road, each
/// device's route following its last session message, the sessions waiting from the last thing
/// heard when their channel goes, liveness, the home door's limits, the agents feed. (The table
/// mutates: each call is made before the expectation that reads what it returned.)
@Suite struct HostChannelTableTests {
    typealias Table = HostChannelTable<String>

    static let settings = Table.Settings(
        liveness: HostAgent.deviceLiveness, maximumHomeLinks: 3, homeHandshakeTimeout: 10)

    let phone = UUID()
    let laptop = UUID()

    /// `device`'s relay channel, its handshake done at `now`.
    static func connectedRelay(_ table: inout Table, _ device: UUID, at now: Double) -> HostChannelID {
        let id = table.openRelay(for: device, link: "relay", now: now)
        table.established(id, now: now)
        return id
    }

    /// A home link, opened at `now`.
    static func openHome(_ table: inout Table, link: String = "home", at now: Double) throws -> HostChannelID {
        let opened = table.openHome(link: link, now: now)
        return try #require(opened)
    }

    /// A home link of `device`'s, its handshake done at `now`.
    static func connectedHome(_ table: inout Table, _ device: UUID, at now: Double) throws -> HostChannelID {
        let id = try openHome(&table, at: now)
        table.identify(id, as: device)
        table.established(id, now: now)
        return id
    }

    /// A session message from `device` on `id` at `now`.
    static func sessionMessage(
        _ table: inout Table, from device: UUID, on id: HostChannelID, at now: Double
    ) -> Table.Rerouting? {
        let heard = table.messageArrived(on: id, now: now)
        #expect(heard == device)
        return table.routeSessions(of: device, over: id, now: now)
    }

    @Test func channelsOfBothRoadsAreFoundByTheirID() throws {
        var table = Table(settings: Self.settings)
        let relay = table.openRelay(for: phone, link: "phone's room", now: 0)
        let home = try Self.openHome(&table, link: "a home link", at: 0)
        #expect(relay != home)
        #expect(table.link(relay) == "phone's room")
        #expect(table.link(home) == "a home link")
        #expect(table[relay]?.road == .relay(device: phone))
        #expect(table[relay]?.device == phone)
        #expect(table[home]?.road == .home)
        #expect(table[home]?.device == nil, "a home link's device is known once its first message matched one")
        table.identify(home, as: laptop)
        #expect(table[home]?.device == laptop)
        #expect(table[home]?.state == .handshaking)
        #expect(table.homeDevices == [laptop])
    }

    @Test func aMessageBeforeTheHandshakeEndedIsNotTheDevices() {
        var table = Table(settings: Self.settings)
        let relay = table.openRelay(for: phone, link: "relay", now: 0)
        let early = table.messageArrived(on: relay, now: 1)
        #expect(early == nil)
        table.established(relay, now: 2)
        let late = table.messageArrived(on: relay, now: 3)
        #expect(late == phone)
        #expect(table[relay]?.liveness?.lastHeard == 3)
    }

    @Test func theRouteMovesToTheChannelOfTheLastSessionMessageAndTheOldOneIsHungUp() throws {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 0)
        let home = try Self.connectedHome(&table, phone, at: 0)

        let first = Self.sessionMessage(&table, from: phone, on: relay, at: 4)
        guard case .started? = first else {
            Issue.record("the first session message starts the route")
            return
        }
        #expect(table.route(of: phone) == relay)
        let second = Self.sessionMessage(&table, from: phone, on: relay, at: 5)
        #expect(second == nil, "the route stays")

        let third = Self.sessionMessage(&table, from: phone, on: home, at: 6)
        guard case .moved(let old)? = third else {
            Issue.record("a session message on another channel moves the route")
            return
        }
        #expect(table.route(of: phone) == home)
        #expect(old.id == relay)
        #expect(old.link == "relay")
        #expect(old.wasConnected)
        #expect(old.sessionsWaitFrom == 5, "the sessions wait from the last thing heard on the old channel")
        #expect(table[relay]?.state == .closing)
        #expect(table.link(relay) == nil, "a channel hung up carries nothing more")
        let afterwards = table.messageArrived(on: relay, now: 7)
        #expect(afterwards == nil)
        // Its connection's end comes later: said already, it says nothing more.
        let end = table.ended(relay, now: 8)
        #expect(end == nil)
        #expect(table[relay] == nil)
        #expect(table.route(of: phone) == home)
    }

    @Test func aDroppedRouteLeavesTheSessionsWaitingFromTheLastThingHeard() throws {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 0)
        _ = Self.sessionMessage(&table, from: phone, on: relay, at: 3)
        let dropped = table.hangUp(relay, now: 20)
        #expect(dropped?.sessionsWaitFrom == 3)
        #expect(dropped?.wasConnected == true)
        #expect(dropped?.device == phone)
        #expect(table.route(of: phone) == nil)
        let again = table.hangUp(relay, now: 21)
        #expect(again == nil, "hung up once")
    }

    @Test func aChannelThatCarriedNoSessionsLeavesNoneWaiting() throws {
        var table = Table(settings: Self.settings)
        let home = try Self.connectedHome(&table, laptop, at: 0)
        let ended = table.ended(home, now: 30)
        #expect(ended?.wasConnected == true)
        #expect(ended != nil && ended?.sessionsWaitFrom == nil)
    }

    @Test func aRouteThatEndedUnheardWaitsFromItsHandshake() {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 40)
        _ = table.routeSessions(of: phone, over: relay, now: 40)
        let ended = table.ended(relay, now: 50)
        #expect(ended?.sessionsWaitFrom == 40)
    }

    @Test func aChannelWhoseHandshakeNeverEndedWasNoConnectionOfTheDevices() {
        var table = Table(settings: Self.settings)
        let parked = table.openRelay(for: phone, link: "relay", now: 60)
        let ended = table.ended(parked, now: 61)
        #expect(ended?.wasConnected == false)
    }

    @Test func aQuietChannelIsPingedAfterTenSecondsAndDroppedFifteenSecondsLater() {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 100)
        _ = table.openRelay(for: laptop, link: "parked", now: 100)
        var actions = table.checkLiveness(now: 109.9)
        #expect(actions.isEmpty)
        actions = table.checkLiveness(now: 110)
        #expect(actions == [.ping(relay, 1)], "the parked channel is not pinged")
        actions = table.checkLiveness(now: 124.9)
        #expect(actions.isEmpty)
        actions = table.checkLiveness(now: 125)
        #expect(actions == [.drop(relay, silentFor: 25)])
        actions = table.checkLiveness(now: 130)
        #expect(actions.isEmpty, "suspected once")
    }

    @Test func aPongKeepsTheChannel() {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 100)
        var actions = table.checkLiveness(now: 110)
        #expect(actions == [.ping(relay, 1)])
        table.pong(1, on: relay, now: 111)
        actions = table.checkLiveness(now: 120.9)
        #expect(actions.isEmpty)
        actions = table.checkLiveness(now: 121)
        #expect(actions == [.ping(relay, 2)], "quiet again from the pong on")
        _ = table.hangUp(relay, now: 122)
        actions = table.checkLiveness(now: 200)
        #expect(actions.isEmpty, "a channel hung up is not checked")
    }

    @Test func aRestartedHandshakeGetsANewIDAndEndsTheOldRoute() throws {
        var table = Table(settings: Self.settings)
        let old = Self.connectedRelay(&table, phone, at: 0)
        _ = Self.sessionMessage(&table, from: phone, on: old, at: 2)
        let restart = table.restart(old, link: "the same socket, a new handshake", now: 5)
        let restarted = try #require(restart)
        #expect(restarted.id != old)
        #expect(restarted.ended.id == old)
        #expect(restarted.ended.sessionsWaitFrom == 2)
        #expect(table.route(of: phone) == nil)
        #expect(table[old] == nil)
        #expect(table[restarted.id]?.road == .relay(device: phone))
        #expect(table[restarted.id]?.state == .handshaking)
        #expect(table.link(restarted.id) == "the same socket, a new handshake")

        let home = try Self.connectedHome(&table, phone, at: 0)
        let homeRestart = table.restart(home, link: "home", now: 6)
        #expect(homeRestart == nil, "only a relay socket is spliced to")
    }

    @Test func aForgottenDeviceEndsAllItsChannels() throws {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 0)
        let home = try Self.connectedHome(&table, phone, at: 0)
        let handshaking = try Self.openHome(&table, at: 0)
        table.identify(handshaking, as: phone)
        let laptops = try Self.connectedHome(&table, laptop, at: 0)
        _ = Self.sessionMessage(&table, from: phone, on: home, at: 1)

        let endings = table.forget(phone, now: 10)
        #expect(Set(endings.map(\.id)) == [relay, home, handshaking])
        #expect(endings.allSatisfy { $0.sessionsWaitFrom == nil }, "the sessions go with the device")
        #expect(endings.filter(\.wasConnected).count == 2)
        #expect(table.route(of: phone) == nil)
        #expect(table[relay] == nil, "its room goes, and no end comes for its channel")
        #expect(table[home]?.state == .closing, "a home link waits for its connection's end")
        let homeEnded = table.ended(home, now: 11)
        #expect(homeEnded == nil)
        #expect(table[laptops]?.state == .connected)
        let again = table.forget(phone, now: 12)
        #expect(again.isEmpty)
    }

    @Test func homeLinksAreLimitedUntilTheirConnectionsEnd() throws {
        var table = Table(settings: Self.settings)
        let first = try Self.openHome(&table, at: 0)
        _ = try Self.openHome(&table, at: 0)
        _ = try Self.openHome(&table, at: 0)
        var fourth = table.openHome(link: "4", now: 0)
        #expect(fourth == nil)
        _ = table.openRelay(for: phone, link: "relay", now: 0)  // the relay road has no such limit
        _ = table.hangUp(first, now: 1)
        fourth = table.openHome(link: "4", now: 1)
        #expect(fourth == nil, "a home link closing still counts")
        _ = table.ended(first, now: 2)
        fourth = table.openHome(link: "4", now: 2)
        #expect(fourth != nil)
    }

    @Test func aHomeHandshakeHasTenSeconds() throws {
        var table = Table(settings: Self.settings)
        let slow = try Self.openHome(&table, at: 0)
        _ = try Self.connectedHome(&table, phone, at: 1)
        _ = table.openRelay(for: laptop, link: "parked", now: 0)  // a parked room waits as long as it takes
        #expect(table.overdueHandshakes(now: 10).isEmpty)
        #expect(table.overdueHandshakes(now: 10.5) == [slow])
        _ = table.hangUp(slow, now: 11)
        #expect(table.overdueHandshakes(now: 12).isEmpty)
    }

    @Test func aWatchOfTheBoardLastsTheChannelsLife() throws {
        var table = Table(settings: Self.settings)
        let relay = Self.connectedRelay(&table, phone, at: 0)
        let parked = table.openRelay(for: laptop, link: "parked", now: 0)
        table.setWatch(true, on: parked, now: 1)
        #expect(table.agentFeedChannels.isEmpty, "only a connected channel watches")

        table.setWatch(true, on: relay, now: 1)
        #expect(table.watchesAgents)
        #expect(table.agentFeedChannels == [relay])
        let board = CurrentAgentBoard()  // herdr not read yet: the first board waits its while
        #expect(table.agentMessageDue(on: relay, board, now: 2) == nil)
        let due = 1 + AgentBoardFeed.firstBoardWait
        #expect(table.agentMessageDue(on: relay, board, now: due) == phone)
        let message = table.nextAgentMessage(on: relay, board, now: due)
        #expect(message != nil)

        table.setWatch(false, on: relay, now: 5)
        #expect(!table.watchesAgents)
        #expect(table.agentFeedChannels == [relay], "the feed stays, its seq with it")
        table.setWatch(true, on: relay, now: 6)
        _ = table.hangUp(relay, now: 7)
        #expect(!table.watchesAgents)
        #expect(table.agentFeedChannels.isEmpty)
    }

    @Test func aRoomsStateReadsAsTheStatusFileAlwaysSaid() {
        #expect(RoomState.connecting.description == "connecting")
        #expect(RoomState.parked.description == "parked")
        #expect(RoomState.connected.description == "connected")
        #expect(RoomState.reconnecting.description == "reconnecting")
        #expect(
            RoomState.waiting(reason: "relay closed", retryIn: 3).description == "waiting (relay closed); retry in 3 s")
        #expect(RoomState.displaced.description == "stopped: another herdr-host took the room")
        #expect(RoomState.refused("bad proof").description == "stopped: the relay refused to park (bad proof)")
    }
}
