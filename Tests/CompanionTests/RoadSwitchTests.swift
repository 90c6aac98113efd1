import HomeRoad
import Noise
import RelayClient
import RelayProtocol
import Testing

@testable import Companion

/// After a drop, the next attempt goes at once over the relay beside home only when the road
/// that dropped was home, had been up a while, and the relay may be taken; a dropped relay backs
/// off as before.
@Suite struct RoadSwitchTests {
    static func roads(relay: Bool, choice: DeviceRoads.Choice = .any) throws -> DeviceRoads {
        let computerKey = KeyPair.generate().publicKey
        let secret = RelayJoinKey.makeRoomSecret()
        let endpoint = try RelayEndpoint(parsing: "https://relay.test")
        let pairing = DeviceRelayConnection.Pairing(
            relay: endpoint, computerKey: computerKey, pairingID: "p1", roomSecret: secret, registered: false)
        let key = KeyPair.generate()
        let greeting = DeviceRoads.Greeting(
            pairingID: "p1", computerKey: computerKey,
            status: .init(name: "phone", roomSecret: secret, registered: false), staticKey: key)
        return DeviceRoads(
            greeting: greeting,
            relay: relay ? DeviceRelayConnection(pairing: pairing, deviceName: "phone", staticKey: key) : nil,
            home: [try HomeAddress(parsing: "[fd12::7]:4610")], choice: choice)
    }

    static let home = CompanionRoad.home(try! HomeAddress(parsing: "[fd12::7]:4610"))

    @Test func aDroppedHomeRoadGoesToTheRelayAtOnce() throws {
        #expect(
            CompanionTerminalConnection.switchesToRelayAtOnce(
                after: Self.home, upFor: 30, roads: try Self.roads(relay: true)))
    }

    @Test func aHomeRoadThatDropsAsSoonAsItIsUpBacksOff() throws {
        let roads = try Self.roads(relay: true)
        let steady = CompanionTerminalConnection.steadyRoad
        #expect(!CompanionTerminalConnection.switchesToRelayAtOnce(after: Self.home, upFor: 0, roads: roads))
        #expect(
            !CompanionTerminalConnection.switchesToRelayAtOnce(after: Self.home, upFor: steady - 0.001, roads: roads))
        #expect(CompanionTerminalConnection.switchesToRelayAtOnce(after: Self.home, upFor: steady, roads: roads))
    }

    @Test func aDroppedRelayBacksOff() throws {
        #expect(
            !CompanionTerminalConnection.switchesToRelayAtOnce(
                after: .relay(host: "relay.test"), upFor: 30, roads: try Self.roads(relay: true)))
    }

    @Test func withoutARelayRoadAHomeDropBacksOff() throws {
        #expect(
            !CompanionTerminalConnection.switchesToRelayAtOnce(
                after: Self.home, upFor: 30, roads: try Self.roads(relay: false)))
        #expect(
            !CompanionTerminalConnection.switchesToRelayAtOnce(
                after: Self.home, upFor: 30, roads: try Self.roads(relay: true, choice: .home)))
    }
}
