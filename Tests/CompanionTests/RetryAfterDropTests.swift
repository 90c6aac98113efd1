import Noise
import PeerGate
import RelayProtocol
import Testing

@testable import CompanionDevice
@testable import NoiseRoads

/// The first retry after a drop goes at once when the road had been up a while; a dropped home
/// road then leaves for the relay beside the home addresses, without their head start.
@Suite struct RetryAfterDropTests {
    static func home() throws -> NoiseRoad { .home(try HomeAddress(parsing: "[fd12::7]:4610")) }
    static let relay = NoiseRoad.relay(host: "relay.test")

    @Test func aDroppedHomeRoadGoesToTheRelayAtOnce() throws {
        let retry = RetryAfterDrop.after(try Self.home(), upFor: 30, hasRelay: true, choice: .any)
        #expect(retry == RetryAfterDrop(atOnce: true, homeFirst: false))
    }

    @Test func aDroppedRelayIsRetriedAtOnceWithHomeFirst() throws {
        let retry = RetryAfterDrop.after(Self.relay, upFor: 30, hasRelay: true, choice: .any)
        #expect(retry == RetryAfterDrop(atOnce: true, homeFirst: true))
    }

    @Test func aRoadThatDropsAsSoonAsItIsUpBacksOff() throws {
        let steady = RetryAfterDrop.steadyRoad
        for road in [try Self.home(), Self.relay] {
            #expect(RetryAfterDrop.after(road, upFor: 0, hasRelay: true, choice: .any) == .backingOff)
            #expect(RetryAfterDrop.after(road, upFor: steady - 0.001, hasRelay: true, choice: .any) == .backingOff)
            #expect(RetryAfterDrop.after(road, upFor: steady, hasRelay: true, choice: .any).atOnce)
        }
        #expect(RetryAfterDrop.backingOff == RetryAfterDrop(atOnce: false, homeFirst: true))
    }

    @Test func withoutARelayToTakeAHomeDropRetriesHomeFirst() throws {
        let home = try Self.home()
        #expect(
            RetryAfterDrop.after(home, upFor: 30, hasRelay: false, choice: .any)
                == RetryAfterDrop(atOnce: true, homeFirst: true))
        #expect(
            RetryAfterDrop.after(home, upFor: 30, hasRelay: true, choice: .home)
                == RetryAfterDrop(atOnce: true, homeFirst: true))
    }
}
