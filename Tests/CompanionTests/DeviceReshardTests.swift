import Foundation
import HerdrCrypto
import Noise
import NoiseRoads
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// A device reaching a relay cluster at the node that does not hold its room is told the room
/// is moving (4421 `reshard`), which the terminal session retries within half a second instead
/// of failing its first attempt as unreachable.
@Suite(.serialized) struct DeviceReshardTests {
    @Test func aReshardedJoinIsAMoveNotAnOutage() throws {
        let redis = try RedisServer()
        let origin = "https://relay.test"
        let nodes = try (0..<2).map { _ in
            try RelayProcess(
                ["--origin", origin, "--listen", "127.0.0.1:0", "--store", redis.url()],
                environment: ["ATTEST_REQUIRED": "false"])
        }
        let endpoints = try nodes.map {
            try RelayEndpoint(parsing: origin).connecting(toHost: "127.0.0.1", port: $0.port, tls: false)
        }
        let pairing = RelayRoad.Pairing(
            relay: endpoints[1], computerKey: KeyPair.generate().publicKey, pairingID: "p1",
            roomSecret: RelayJoinKey.makeRoomSecret(), registered: false)
        // The computer is parked on the first node, which holds the room's lease.
        let computer = try RelayConnection.connect(
            to: endpoints[0], room: pairing.room, role: .computer, credential: .none)
        defer { computer.close() }
        let device = RelayRoad(pairing: pairing, deviceName: "test", staticKey: KeyPair.generate())
        let failure = #expect(throws: RoadFailure.self) { try device.connect() }
        #expect(failure == .resharding(relay: endpoints[1].host), "\(String(describing: failure))")
        #expect(failure?.description.contains("moving this room to another of its nodes") == true)
    }
}
