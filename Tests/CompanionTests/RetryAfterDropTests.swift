import HomeRoad
import Noise
import RelayClient
import RelayProtocol
import Testing

@testable import Companion

/// The first retry after a drop goes at once when the road had been up a while; a dropped home
/// road then leaves for the relay beside the home addresses, without their head start.
@Suite struct RetryAfterDropTests {
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

    static func home() throws -> CompanionRoad { .home(try HomeAddress(parsing: "[fd12::7]:4610")) }
    static let relay = CompanionRoad.relay(host: "relay.test")

    @Test func aDroppedHomeRoadGoesToTheRelayAtOnce() throws {
        let retry = RetryAfterDrop.after(try Self.home(), upFor: 30, roads: try Self.roads(relay: true))
        #expect(retry == RetryAfterDrop(atOnce: true, homeFirst: false))
    }

    @Test func aDroppedRelayIsRetriedAtOnceWithHomeFirst() throws {
        let retry = RetryAfterDrop.after(Self.relay, upFor: 30, roads: try Self.roads(relay: true))
        #expect(retry == RetryAfterDrop(atOnce: true, homeFirst: true))
    }

    @Test func aRoadThatDropsAsSoonAsItIsUpBacksOff() throws {
        let roads = try Self.roads(relay: true)
        let steady = RetryAfterDrop.steadyRoad
        for road in [try Self.home(), Self.relay] {
            #expect(RetryAfterDrop.after(road, upFor: 0, roads: roads) == .backingOff)
            #expect(RetryAfterDrop.after(road, upFor: steady - 0.001, roads: roads) == .backingOff)
            #expect(RetryAfterDrop.after(road, upFor: steady, roads: roads).atOnce)
        }
        #expect(RetryAfterDrop.backingOff == RetryAfterDrop(atOnce: false, homeFirst: true))
    }

    @Test func withoutARelayToTakeAHomeDropRetriesHomeFirst() throws {
        let home = try Self.home()
        #expect(
            RetryAfterDrop.after(home, upFor: 30, roads: try Self.roads(relay: false))
                == RetryAfterDrop(atOnce: true, homeFirst: true))
        #expect(
            RetryAfterDrop.after(home, upFor: 30, roads: try Self.roads(relay: true, choice: .home))
                == RetryAfterDrop(atOnce: true, homeFirst: true))
    }
}
