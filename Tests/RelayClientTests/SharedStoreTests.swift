import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// Two relay nodes on one Redis, as a cluster behind a balancer runs: what one node stores the
/// other knows, so a phone may be admitted by one node and register through the other, and the
/// room it established is joined, signed, on either.
@Suite("Relay nodes sharing one Redis", .serialized)
struct SharedStoreTests {
    @Test("a room paired through one node is established and joined through the other")
    func pairOnOneJoinOnTheOther() throws {
        let redis = try RedisServer()
        let first = try TestRelay(redisURL: redis.url())
        let second = try TestRelay(redisURL: redis.url())
        let room = randomRoom()
        let mac = try connect(first, room: room, role: .mac)
        let phone = try connect(first, room: room, role: .phone)
        let token = try #require(phone.registrationToken)
        let joinKey = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        // The token was minted by the first node; the second finds it in Redis.
        try second.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
        mac.close()
        phone.close()
        mac.waitUntilEnded(timeout: 3)
        phone.waitUntilEnded(timeout: 3)

        // Registered once, for the whole cluster: the first node refuses an unsigned Mac now.
        let unsigned = try #require(throws: RelayClientError.self) { try connect(first, room: room, role: .mac) }
        #expect(unsigned.serverError == "signature required")
        let signedMac = try connect(second, room: room, role: .mac, credential: .joinKey(joinKey))
        let signedPhone = try connect(second, room: room, role: .phone, credential: .joinKey(joinKey))
        defer {
            signedMac.close()
            signedPhone.close()
        }
        try checkSplice(signedMac, signedPhone)
        // A second registration through either node is refused.
        let again = try #require(throws: RelayClientError.self) {
            try first.http.register(room: room, registrationToken: token, verifier: joinKey.verifier)
        }
        #expect(again.status == 403)
    }
}
