import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

@Suite("HTTP endpoints against a real relay", .serialized)
struct RelayHTTPClientTests {
    @Test("healthz answers ok; a challenge is 32 fresh bytes")
    func challenge() throws {
        let relay = try TestRelay()
        try relay.http.healthz()
        let room = randomRoom()
        let first = try relay.http.attestChallenge(room: room)
        let second = try relay.http.attestChallenge(room: room)
        #expect(first.count == 32)
        #expect(second.count == 32)
        #expect(first != second)
    }

    @Test("register once with the phone's token; a second register is refused with the relay's words")
    func registerOnce() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try connect(relay, room: room, role: .computer)
        let phone = try connect(relay, room: room, role: .device)
        defer {
            mac.close()
            phone.close()
        }
        let token = try #require(phone.registrationToken)
        #expect(token.count == 24)
        #expect(mac.registrationToken == nil)
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        // A wrong token first: refused, and it does not burn the room.
        let wrong = try #require(throws: ConnectionError.self) {
            try relay.http.register(room: room, registrationToken: SecureRandom.bytes(24), verifier: key.verifier)
        }
        #expect(wrong.status == 403)
        #expect(wrong.serverError == "bad token")
        try relay.http.register(room: room, registrationToken: token, verifier: key.verifier)
        let again = try #require(throws: ConnectionError.self) {
            try relay.http.register(room: room, registrationToken: token, verifier: key.verifier)
        }
        #expect(again.kind == .httpStatus)
        #expect(again.status == 403)
        #expect(again.serverError == "already registered")
        #expect(again.message == "relay refused /register: 403 already registered")
    }

    @Test("delete with the join key closes the room's sockets with 1000 room deleted")
    func deleteRoom() throws {
        let relay = try TestRelay()
        let established = try EstablishedRoom(relay)
        established.close()
        let mac = try connect(relay, room: established.room, role: .computer, credential: .joinKey(established.joinKey))
        let phone = try connect(relay, room: established.room, role: .device, credential: .joinKey(established.joinKey))
        // A delete signed by another key is refused and changes nothing.
        let stranger = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let refused = try #require(throws: ConnectionError.self) {
            try relay.http.deleteRoom(room: established.room, joinKey: stranger)
        }
        #expect(refused.status == 403)
        #expect(refused.serverError == "bad signature")
        #expect(mac.end == nil)

        try relay.http.deleteRoom(room: established.room, joinKey: established.joinKey)
        #expect(try expectEnd(mac) == .closedByRelay(.roomDeleted))
        #expect(try expectEnd(phone) == .closedByRelay(.roomDeleted))
        let gone = try #require(throws: ConnectionError.self) {
            try relay.http.deleteRoom(room: established.room, joinKey: established.joinKey)
        }
        #expect(gone.serverError == "not established")
    }

    @Test("raw requests: a bad room is 400, an Origin header 403, an unknown path 501")
    func rawRequests() throws {
        let relay = try TestRelay()
        let badRoom = try relay.http.post("/attest/challenge", room: "ABC")
        #expect(badRoom.status == 400)
        #expect(badRoom.errorText == "bad room")
        let origin = try relay.http.post(
            "/attest/challenge", room: randomRoom(), extraHeaders: [("Origin", "https://evil.example")])
        #expect(origin.status == 403)
        #expect(origin.errorText == "forbidden")
        let unknown = try relay.http.post("/nope", room: randomRoom())
        #expect(unknown.status == 501)
    }

    @Test("a closed port is unreachable, quickly")
    func unreachable() throws {
        let port = try LoopbackSocket.closedPort()
        let endpoint = try RelayEndpoint(parsing: "http://127.0.0.1:\(port)")
        let error = try #require(throws: ConnectionError.self) {
            try RelayHTTPClient(endpoint: endpoint, timeout: 2).healthz()
        }
        #expect(error.kind == .unreachable)
        #expect(error.isUnreachable)
    }
}
