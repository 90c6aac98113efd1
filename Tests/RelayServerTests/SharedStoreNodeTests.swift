import Foundation
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport
import Testing

/// Two relay cores on one real Redis, as two nodes of a cluster: a room is spliced by one node
/// at a time (the other closes 4421 `reshard`, HTTP 421), its quota and attempt limit are one
/// count for both, and a node that goes gives its rooms up.
@Suite struct SharedStoreNodeTests {
    private func node(_ server: RedisServer, configure: (inout RelayConfiguration) -> Void = { _ in }) throws
        -> CoreHarness
    {
        CoreHarness(
            store: try RedisRelayStore(address: RedisAddress(url: server.url()), retryMilliseconds: 0),
            configure: configure)
    }

    @Test func aRoomIsSplicedByOneNodeAtATime() throws {
        let server = try RedisServer()
        let first = try node(server)
        let second = try node(server)
        #expect(first.core.nodeID != second.core.nodeID)
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try first.establish(room, key: key)
        #expect(first.core.leasedRoomCount == 1)
        // The second node is handed a socket for the room while the first splices it.
        let (stray, result) = try second.signedJoin(room, .computer, key: key)
        #expect(result == nil)
        #expect(second.closes[stray] == .reshard)
        #expect(second.closes[stray]?.code == 4421)
        let delete = second.post("/attest/challenge", room: room)
        #expect(delete.status == 421 && delete.error == "reshard", "\(delete.json)")
        #expect(first.isLive(mac) && first.isLive(phone))
        // The first node's sockets go: the room is the second's to take.
        first.closed(mac)
        #expect(first.core.leasedRoomCount == 0)
        let (moved, admitted) = try second.signedJoin(room, .computer, key: key)
        #expect(admitted == .admitted(registrationToken: nil))
        #expect(second.isLive(moved))
        #expect(second.core.leasedRoomCount == 1)
        let (back, _) = try first.signedJoin(room, .device, key: key)
        #expect(first.closes[back] == .reshard)
    }

    /// Traffic that moved between nodes is one quota: what the first node spliced is flushed to
    /// Redis within a second, and the second node closes the room where the sum crosses it.
    @Test func aQuotaCrossedOnAnotherNodeStillClosesTheRoom() throws {
        let server = try RedisServer()
        let first = try node(server) { $0.bytesPerDay = 10_000 }
        let second = try node(server) { $0.bytesPerDay = 10_000 }
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try first.establish(room, key: key)
        for _ in 0..<6 { #expect(first.binary(1000, from: mac) == phone) }
        first.clock.advance(milliseconds: first.core.configuration.sharedQuotaFlushInterval)
        first.tick()
        #expect(try first.store.room(named: room)?.quotaBytes == 6000)
        // The first node dies without another word (its sockets simply vanish from Redis' view
        // once its heartbeat lapses); here it lets the room go and the clients rejoin elsewhere.
        first.closed(mac)
        let (macThere, _) = try second.signedJoin(room, .computer, key: key)
        let (phoneThere, _) = try second.signedJoin(room, .device, key: key)
        for _ in 0..<4 { #expect(second.binary(1000, from: macThere) == phoneThere) }
        #expect(second.binary(1, from: phoneThere) == nil)
        #expect(second.closes[macThere] == .dailyQuotaExceeded && second.closes[phoneThere] == .dailyQuotaExceeded)
        #expect(try second.store.room(named: room)?.quotaBytes == 10_001)
    }

    @Test func theAttemptLimitIsOneWindowForEveryNode() throws {
        let server = try RedisServer()
        let first = try node(server) { $0.proofsPerWindow = 3 }
        let second = try node(server) { $0.proofsPerWindow = 3 }
        let room = makeRoom()
        let key = try makeKey()
        _ = try first.establish(room, key: key)  // a Mac's and a phone's proofs: two
        let (one, _) = try second.signedJoin(room, .device, key: key)
        #expect(second.closes[one] == .reshard, "the third attempt counted, then resharded")
        let (two, _) = try second.signedJoin(room, .device, key: key)
        #expect(second.refusal(two) == AdmissionError.rateLimited.rawValue)
        let (three, _) = try first.signedJoin(room, .device, key: key)
        #expect(first.refusal(three) == AdmissionError.rateLimited.rawValue)
    }

    /// A node that stops closes its rooms and gives their leases back at once.
    @Test func aNodeShuttingDownGivesItsRoomsBack() throws {
        let server = try RedisServer()
        let first = try node(server)
        let second = try node(server)
        let room = makeRoom()
        let key = try makeKey()
        _ = try first.establish(room, key: key)
        first.core.shutdown()
        first.drain()
        #expect(first.core.leasedRoomCount == 0)
        let (mac, result) = try second.signedJoin(room, .computer, key: key)
        #expect(result == .admitted(registrationToken: nil))
        #expect(second.isLive(mac))
    }

    /// A socket resharded away asks the holder to let the room go: at its next heartbeat the
    /// holder closes the room's sockets with 4421, and they follow the balancer to the new node.
    @Test func theHolderLetsARoomGoWhenItsSocketsArriveElsewhere() throws {
        let server = try RedisServer()
        let first = try node(server)
        let second = try node(server)
        let room = makeRoom()
        let key = try makeKey()
        let (pairingMac, pairingPhone) = try first.establish(room, key: key)
        first.closed(pairingPhone)  // its Mac goes with it (peer gone); the computer parks again:
        #expect(first.closes[pairingMac] == .peerGone)
        let (mac, _) = try first.signedJoin(room, .computer, key: key)
        #expect(first.isLive(mac))
        let (stray, _) = try second.signedJoin(room, .device, key: key)
        #expect(second.closes[stray] == .reshard)
        first.clock.advance(milliseconds: first.core.configuration.leaseLifetime)
        first.tick()
        #expect(first.closes[mac] == .reshard)
        #expect(first.core.leasedRoomCount == 0)
        let (macMoved, macResult) = try second.signedJoin(room, .computer, key: key)
        let (phoneMoved, phoneResult) = try second.signedJoin(room, .device, key: key)
        #expect(macResult == .admitted(registrationToken: nil) && phoneResult != nil)
        #expect(second.binary(5, from: macMoved) == phoneMoved)
        // Asked once, moved once: a later heartbeat finds nothing more to do.
        first.clock.advance(milliseconds: first.core.configuration.leaseLifetime)
        first.tick()
        #expect(second.isLive(macMoved))
    }
}
