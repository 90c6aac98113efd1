import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// Two relay nodes on one Redis, as a cluster behind a balancer runs: what one node stores the
/// other knows, so a phone admitted by one node registers through the other once the first has
/// let the room go, and the room it established is joined, signed, on either.
@Suite("Relay nodes sharing one Redis", .serialized)
struct SharedStoreTests {
    @Test("a room paired through one node is established and joined through the other")
    func pairOnOneJoinOnTheOther() throws {
        let redis = try RedisServer()
        let first = try TestRelay(redisURL: redis.url())
        let second = try TestRelay(redisURL: redis.url())
        let room = randomRoom()
        let mac = try connect(first, room: room, role: .computer)
        let phone = try connect(first, room: room, role: .device)
        let token = try #require(phone.registrationToken)
        let joinKey = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        // While the first node splices the room it holds the room's lease: the second sends the
        // client back (421) rather than change a room whose sockets it does not have.
        let misdirected = try #require(throws: ConnectionError.self) {
            try second.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
        }
        #expect(misdirected.status == 421 && misdirected.serverError == "reshard", "\(misdirected)")
        mac.close()
        phone.close()
        mac.waitUntilEnded(timeout: 3)
        phone.waitUntilEnded(timeout: 3)
        // The sockets gone, the lease went with them; the token the first node minted is in Redis.
        try second.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)

        // Registered once, for the whole cluster: the first node refuses an unsigned Mac now.
        let unsigned = try #require(throws: ConnectionError.self) { try connect(first, room: room, role: .computer) }
        #expect(unsigned.serverError == "signature required")
        let signedMac = try connect(second, room: room, role: .computer, credential: .joinKey(joinKey))
        let signedPhone = try connect(second, room: room, role: .device, credential: .joinKey(joinKey))
        defer {
            signedMac.close()
            signedPhone.close()
        }
        try checkSplice(signedMac, signedPhone)
        // A second registration is refused by the node splicing the room, and sent back by the other.
        let again = try #require(throws: ConnectionError.self) {
            try second.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
        }
        #expect(again.status == 403 && again.serverError == "already registered", "\(again)")
        let elsewhere = try #require(throws: ConnectionError.self) {
            try first.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
        }
        #expect(elsewhere.status == 421, "\(elsewhere)")
    }

    /// A link sent back with 4421 `reshard` returns within half a second, the ordinary backoff
    /// untouched (it waits far longer here), and is admitted once the room is free.
    @Test("a link sent back with reshard comes back soon and is admitted once the room is free")
    func reshardIsRetriedSoon() throws {
        let redis = try RedisServer()
        let first = try TestRelay(redisURL: redis.url())
        let second = try TestRelay(redisURL: redis.url())
        let room = randomRoom()
        let holder = try connect(first, room: room, role: .computer)
        var options = RelayLink.Options()
        options.connection = quickOptions()
        options.backoff = RelayBackoff(initialDelay: 20, maximumDelay: 20)
        let link = RelayLink(
            endpoint: second.endpoint, room: room, role: .computer, credential: .none, options: options)
        defer {
            link.stop()
            link.waitUntilStopped(timeout: 5)
        }
        var waits: [(Double, String)] = []
        while waits.count < 3, let event = link.nextEvent(timeout: 5) {
            if case .waiting(let delay, let reason) = event { waits.append((delay, reason)) }
            if case .stopped(let reason) = event { Issue.record("the link stopped: \(reason)") }
        }
        #expect(waits.count == 3)
        for (delay, reason) in waits {
            #expect(delay <= 0.5 && reason.contains("4421") && reason.contains("reshard"), "\(delay) \(reason)")
        }
        holder.close()
        holder.waitUntilEnded(timeout: 3)
        let deadline = ContinuousClock.now + .seconds(10)
        var admitted = false
        while !admitted, ContinuousClock.now < deadline, let event = link.nextEvent(timeout: 5) {
            if case .admitted = event { admitted = true }
        }
        #expect(admitted)
    }
}
