import Foundation
import HerdrCrypto
import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// The HTTP side of the core: the upgrade checks and the POST endpoints, every status.
@Suite struct HTTPEndpointTests {
    // MARK: - /attest/challenge and /attest

    @Test func sixteenOutstandingChallengesThenTooManyUntilOneExpires() throws {
        let h = CoreHarness()
        let room = makeRoom()
        var challenges: Set<[UInt8]> = []
        for _ in 0..<16 { challenges.insert(try h.challenge(room)) }
        #expect(challenges.count == 16)
        let refused = h.post("/attest/challenge", room: room)
        #expect(refused.status == 429 && refused.error == "too many outstanding challenges")
        #expect(refused.response.reason == "Too Many Requests")
        // Another room has its own cap.
        _ = try h.challenge(makeRoom())
        h.clock.advance(seconds: 299)
        #expect(h.post("/attest/challenge", room: room).status == 429)
        h.clock.advance(seconds: 1)
        #expect(h.post("/attest/challenge", room: room).status == 200, "challenges live 5 minutes")
    }

    @Test func attestIsDisabledInOpenMode() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let challenge = try h.challenge(room)
        let answer = h.post(
            "/attest", room: room, json: ["challenge": base64(challenge), "attestationObject": base64([0xA0])])
        #expect(answer.status == 400 && answer.error == "attestation disabled")
        #expect(
            String(decoding: answer.response.body, as: UTF8.self) == "{\"ok\":false,\"error\":\"attestation disabled\"}"
        )
    }

    @Test func attestIssuesATicketUnderAttestation() throws {
        let h = CoreHarness(attestationRequired: true)
        let ticket = try h.ticket(makeRoom())
        #expect(RelayJSON.bytes(ticket)?.count == 24)
    }

    // MARK: - /register

    @Test func registerChecksTokenAndVerifier() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        let verifier = base64(key.verifier.raw)
        _ = try h.parkMac(room)
        let token = try h.joinPhone(room).token

        var answer = h.post("/register", room: room, json: ["verifier": verifier])
        #expect(answer.status == 403 && answer.error == "token required")
        answer = h.post(
            "/register", room: room, json: ["registrationToken": base64(SecureRandom.bytes(24)), "verifier": verifier])
        #expect(answer.status == 403 && answer.error == "bad token")
        answer = h.post("/register", room: room, json: ["registrationToken": "%%%", "verifier": verifier])
        #expect(answer.status == 403 && answer.error == "bad token")
        for bad in ["", "%%%", base64(Array(key.verifier.raw.prefix(31))), base64(key.verifier.raw + [0])] {
            answer = h.post("/register", room: room, json: ["registrationToken": base64(token), "verifier": bad])
            #expect(answer.status == 400 && answer.error == "bad verifier", "verifier \(bad)")
        }
        answer = h.post("/register", room: room, json: ["registrationToken": base64(token)])
        #expect(answer.status == 400 && answer.error == "missing verifier")
        answer = h.request("POST", "/register", room: room, body: Array("not json".utf8))
        #expect(answer.status == 400 && answer.error == "bad json")
        answer = h.request("POST", "/register", room: room, body: [])
        #expect(answer.status == 400 && answer.error == "bad json", "an empty body is not JSON")
        // A JSON value that is no object has no fields; `null` fails upstream's handler.
        answer = h.request("POST", "/register", room: room, body: Array("[1]".utf8))
        #expect(answer.status == 400 && answer.error == "missing verifier")
        answer = h.request("POST", "/register", room: room, body: Array("null".utf8))
        #expect(answer.status == 500 && answer.error == "internal error" && answer.isPlainText)
        #expect(try h.store.room(named: room)?.verifier == nil)

        // None of that used the token up.
        answer = h.post("/register", room: room, json: ["registrationToken": base64(token), "verifier": verifier])
        #expect(answer.status == 200 && answer.ok)
        #expect(String(decoding: answer.response.body, as: UTF8.self) == "{\"ok\":true}")
        #expect(try h.store.room(named: room)?.verifier == key.verifier.raw)
        // Single use: the token is gone from the store.
        #expect(
            try h.store.takeSecret(.registrationToken, digest: SHA256.hash(token), room: room, now: h.clock.unixSeconds)
                == nil)
    }

    @Test func onlyTheFirstRegistrationCounts() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        // A signed phone is minted a token too; it cannot replace V.
        let phone = try h.signedJoin(room, .device, key: key)
        guard case .admitted(let token?) = phone.result else {
            Issue.record("signed phone not admitted")
            return
        }
        let intruder = try makeKey()
        let answer = h.post(
            "/register", room: room,
            json: ["registrationToken": base64(token), "verifier": base64(intruder.verifier.raw)])
        #expect(answer.status == 403 && answer.error == "already registered")
        let tokenless = h.post("/register", room: room, json: ["verifier": base64(intruder.verifier.raw)])
        #expect(tokenless.status == 403 && tokenless.error == "already registered")
        #expect(try h.store.room(named: room)?.verifier == key.verifier.raw)
    }

    @Test func tokensAreBoundToTheirRoomAndExpireAfterFiveMinutes() throws {
        let h = CoreHarness()
        let key = try makeKey()
        let rooms = (0..<3).map { _ in makeRoom() }
        var tokens: [[UInt8]] = []
        for room in rooms {
            _ = try h.parkMac(room)
            tokens.append(try h.joinPhone(room).token)
        }
        func register(_ index: Int, in room: String) -> HTTPAnswer {
            h.post(
                "/register", room: room,
                json: ["registrationToken": base64(tokens[index]), "verifier": base64(key.verifier.raw)])
        }
        let crossed = register(0, in: rooms[1])
        #expect(crossed.status == 403 && crossed.error == "bad token")
        h.clock.advance(seconds: 299)
        #expect(register(0, in: rooms[0]).status == 200)
        h.clock.advance(seconds: 1)
        let expired = register(1, in: rooms[1])
        #expect(expired.status == 403 && expired.error == "bad token")
        #expect(try h.store.room(named: rooms[1])?.verifier == nil)
    }

    /// Under attestation `/register` also needs a fresh challenge and an assertion by the attested
    /// key. Refusals for the assertion leave the token usable (it is taken only on success); the
    /// success uses it up.
    @Test func registrationUnderAttestationNeedsAnAssertion() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.parkMac(room)
        let token = try h.joinPhone(room, proof: .ticket(try h.ticket(room))).token
        let base = ["registrationToken": base64(token), "verifier": base64(key.verifier.raw)]
        // No assertion.
        var answer = h.post("/register", room: room, json: base)
        #expect(answer.status == 403 && answer.error == "assertion required", "\(answer.json)")
        // A wrong assertion.
        answer = h.post(
            "/register", room: room,
            json: base.merging(["challenge": base64(try h.challenge(room)), "assertion": base64([9, 9])]) { $1 })
        #expect(answer.status == 403 && (answer.error ?? "").hasPrefix("assertion rejected: malformed assertion CBOR"))
        // A challenge the relay never issued.
        var fields = try h.assertionFields(room)
        fields["challenge"] = base64(SecureRandom.bytes(32))
        answer = h.post("/register", room: room, json: base.merging(fields) { $1 })
        #expect(answer.status == 403 && answer.error == "bad challenge")
        // An assertion by another key than the one the ticket attested.
        answer = h.post(
            "/register", room: room,
            json: base.merging(try h.assertionFields(room, by: try attestFixture.makeDevice())) { $1 })
        #expect(answer.status == 403 && answer.error == "assertion rejected: assertion signature invalid")
        // An assertion over this challenge bound to another relay's origin.
        let challenge = try h.challenge(room)
        let foreign = try attestFixture.assertion(
            by: h.device,
            clientDataHash: RelayTranscript.attestClientDataHash(challenge: challenge, origin: "https://other.example"),
            counter: 40)
        answer = h.post(
            "/register", room: room,
            json: base.merging(["challenge": base64(challenge), "assertion": base64(foreign)]) { $1 })
        #expect(answer.status == 403 && answer.error == "assertion rejected: assertion signature invalid")
        // The counter starts at the attestation's 0 and must grow: an accepted assertion refused
        // later for its verifier still counts, so the same counter again is stale.
        answer = h.post("/register", room: room, json: base.merging(try h.assertionFields(room, counter: 0)) { $1 })
        #expect(answer.status == 403 && answer.error == "stale assertion")
        answer = h.post(
            "/register", room: room,
            json: base.merging(try h.assertionFields(room, counter: 5)) { $1 }.merging(["verifier": base64([1])]) { $1 }
        )
        #expect(answer.status == 400 && answer.error == "bad verifier")
        for counter: UInt32 in [5, 4] {
            answer = h.post(
                "/register", room: room, json: base.merging(try h.assertionFields(room, counter: counter)) { $1 })
            #expect(answer.status == 403 && answer.error == "stale assertion", "counter \(counter)")
        }
        h.assertionCounter = 5
        // A token minted without attestation (an open-mode phone's) cannot register here.
        let openRoom = makeRoom()
        let open = CoreHarness(store: h.store)
        _ = try open.parkMac(openRoom)
        let unattested = try open.joinPhone(openRoom).token
        answer = h.post(
            "/register", room: openRoom,
            json: ["registrationToken": base64(unattested), "verifier": base64(key.verifier.raw)])
        #expect(answer.status == 403 && answer.error == "token not attested")
        #expect(try h.store.room(named: room)?.verifier == nil)
        // The same token with a good assertion: registered.
        answer = h.post("/register", room: room, json: base.merging(try h.assertionFields(room)) { $1 })
        #expect(answer.status == 200)
        #expect(try h.store.room(named: room)?.verifier == key.verifier.raw)
        #expect(
            try h.store.peekSecret(.registrationToken, digest: SHA256.hash(token), room: room, now: h.clock.unixSeconds)
                == nil)
    }

    // MARK: - /delete

    @Test func deleteNeedsAnEstablishedRoomAFreshChallengeAndTheRoomsSignature() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        func delete(_ challenge: [UInt8], _ signature: [UInt8]) -> HTTPAnswer {
            h.post("/delete", room: room, json: ["challenge": base64(challenge), "signature": base64(signature)])
        }
        var challenge = try h.challenge(room)
        var answer = delete(challenge, try key.signDelete(challenge: challenge, room: room, origin: testOrigin))
        #expect(answer.status == 403 && answer.error == "not established")
        _ = try h.parkMac(room)
        answer = delete(challenge, try key.signDelete(challenge: challenge, room: room, origin: testOrigin))
        #expect(answer.status == 403 && answer.error == "not established")

        let (mac, phone) = try h.establish(room, key: key)
        let pending = h.open(room)
        answer = h.post("/delete", room: room, json: ["challenge": base64(challenge)])
        #expect(answer.status == 403 && answer.error == "signature required")
        answer = h.request("POST", "/delete", room: room, body: Array("{".utf8))
        #expect(answer.status == 400 && answer.error == "bad json")
        let random = SecureRandom.bytes(32)
        answer = delete(random, try key.signDelete(challenge: random, room: room, origin: testOrigin))
        #expect(answer.status == 403 && answer.error == "bad challenge")
        let elsewhere = try h.challenge(makeRoom())
        answer = delete(elsewhere, try key.signDelete(challenge: elsewhere, room: room, origin: testOrigin))
        #expect(answer.status == 403 && answer.error == "bad challenge")

        let forgeries: [(String, ([UInt8]) throws -> [UInt8])] = [
            ("zero", { _ in [UInt8](repeating: 0, count: 64) }),
            ("other key", { try makeKey().signDelete(challenge: $0, room: room, origin: testOrigin) }),
            ("other origin", { try key.signDelete(challenge: $0, room: room, origin: "https://evil.example") }),
            ("other room", { try key.signDelete(challenge: $0, room: makeRoom(), origin: testOrigin) }),
            ("join transcript", { try key.signJoin(role: .computer, nonce: $0, room: room, origin: testOrigin) }),
        ]
        for (name, forge) in forgeries {
            challenge = try h.challenge(room)
            answer = delete(challenge, try forge(challenge))
            #expect(answer.status == 403 && answer.error == "bad signature", "\(name)")
            // The challenge was spent: a captured one cannot be retried.
            answer = delete(challenge, try key.signDelete(challenge: challenge, room: room, origin: testOrigin))
            #expect(answer.status == 403 && answer.error == "bad challenge", "\(name) retry")
        }
        #expect(try h.store.room(named: room)?.verifier == key.verifier.raw)
        #expect(h.isLive(mac) && h.isLive(phone) && h.isLive(pending))

        challenge = try h.challenge(room)
        answer = delete(challenge, try key.signDelete(challenge: challenge, room: room, origin: testOrigin))
        #expect(answer.status == 200 && answer.ok)
        #expect(try h.store.room(named: room) == nil)
        let deleted = RelayClose(code: 1000, reason: "room deleted")
        #expect(h.closes[mac] == deleted && h.closes[phone] == deleted && h.closes[pending] == deleted)
        // The name is a pairing room again; deleting it twice is refused.
        _ = try h.parkMac(room)
        challenge = try h.challenge(room)
        answer = delete(challenge, try key.signDelete(challenge: challenge, room: room, origin: testOrigin))
        #expect(answer.status == 403 && answer.error == "not established")
    }

    // MARK: - Requests the relay refuses outright

    /// Upstream's entry gate runs first on every client request, before the method or path is
    /// looked at: an `Origin` header is 403 `forbidden`, as plain text. Operator endpoints carry no
    /// room and skip it.
    @Test func anOriginHeaderIsForbiddenOnEveryClientRequest() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let origin: [(name: String, value: String)] = [("Origin", "https://evil.example")]
        let upgrade = h.core.checkUpgrade(CoreHarness.upgradeHead(room: room, extra: origin), address: "198.51.100.7")
        #expect(upgrade?.status == 403)
        #expect(upgrade.map { String(decoding: $0.body, as: UTF8.self) } == "forbidden")
        let null = h.core.checkUpgrade(
            CoreHarness.upgradeHead(room: room, extra: [("origin", "null")]), address: "198.51.100.7")
        #expect(null?.status == 403)
        for (method, path) in [
            ("POST", "/attest/challenge"), ("POST", "/attest"), ("POST", "/register"), ("POST", "/delete"),
            ("POST", "/elsewhere"), ("GET", "/"), ("GET", "/register"), ("DELETE", "/rooms"),
        ] {
            for withRoom in [true, false] {
                let answer = h.request(method, path, room: withRoom ? room : nil, extra: origin)
                #expect(answer.status == 403 && answer.error == "forbidden", "\(method) \(path)")
                #expect(answer.isPlainText)
            }
        }
        #expect(h.request("GET", "/healthz", room: nil, extra: origin).status == 200)
        // Without one, the same upgrade passes.
        #expect(h.checkUpgrade(room: room) == nil)
    }

    static let badRooms: [[String]] = [
        [], [String(repeating: "a", count: 63)], [String(repeating: "a", count: 65)],
        [String(repeating: "A", count: 64)], [String(repeating: "a", count: 63) + "F"],
        [String(repeating: "g", count: 64)], [" " + String(repeating: "a", count: 63)],
        [String(repeating: "a", count: 64), String(repeating: "a", count: 64)],
        [String(repeating: "a", count: 64), String(repeating: "b", count: 64)],
    ]

    /// Then a missing or malformed room is 400 `bad room`, whatever the method and path: an
    /// unknown path with a bad room is 400, not 501.
    @Test(arguments: badRooms)
    func aBadRoomHeaderIs400BeforeMethodOrPath(values: [String]) {
        let h = CoreHarness()
        let extra = values.map { (name: RelayLimits.roomHeader, value: $0) }
        let upgrade = h.core.checkUpgrade(CoreHarness.upgradeHead(room: nil, extra: extra), address: "198.51.100.7")
        #expect(upgrade?.status == 400)
        #expect(upgrade.map { String(decoding: $0.body, as: UTF8.self) } == "bad room")
        for (method, path) in [
            ("POST", "/attest/challenge"), ("POST", "/attest"), ("POST", "/register"), ("POST", "/delete"),
            ("GET", "/"), ("POST", "/"), ("GET", "/register"), ("PUT", "/anything"),
        ] {
            let answer = h.request(method, path, room: nil, extra: extra)
            #expect(answer.status == 400 && answer.error == "bad room" && answer.isPlainText, "\(method) \(path)")
        }
    }

    @Test func theRoomHeaderNameIsCaseInsensitive() {
        let h = CoreHarness()
        let head = CoreHarness.upgradeHead(room: nil, extra: [("X-Relay-Room", makeRoom())])
        #expect(h.core.checkUpgrade(head, address: "198.51.100.7") == nil)
    }

    /// Past the gate, anything but a POST to one of the four endpoints is 501 `not implemented`
    /// (upstream has no 405); only the operator endpoints know methods.
    @Test func everyOtherMethodAndPathIs501() {
        let h = CoreHarness()
        let room = makeRoom()
        for (method, path) in [
            ("POST", "/"), ("GET", "/"), ("POST", "/register/"), ("POST", "/attest/"), ("DELETE", "/rooms"),
            ("GET", "/register"), ("PUT", "/delete"), ("GET", "/attest/challenge"), ("GET", "/attest"),
        ] {
            let answer = h.request(method, path, room: room)
            #expect(
                answer.status == 501 && answer.error == "not implemented" && answer.isPlainText, "\(method) \(path)")
        }
        for (method, path, allow) in [("POST", "/healthz", "GET, HEAD"), ("POST", "/metrics", "GET")] {
            let answer = h.request(method, path, room: nil, loopback: true)
            #expect(answer.status == 405, "\(method) \(path)")
            #expect(answer.response.extraHeaders == ["Allow: \(allow)"], "\(method) \(path)")
        }
        #expect(h.request("GET", "/healthz", room: nil).status == 200)
        #expect(h.request("HEAD", "/healthz", room: nil).status == 200)
    }

    @Test func bodiesOver64KiBAre413() {
        let h = CoreHarness()
        let room = makeRoom()
        let limit = h.request("POST", "/register", room: room, body: [UInt8](repeating: 0x20, count: 65_536))
        #expect(limit.status == 400 && limit.error == "bad json", "64 KiB exactly is read (and is not JSON)")
        let over = h.request("POST", "/register", room: room, body: [UInt8](repeating: 0x20, count: 65_537))
        #expect(over.status == 413 && over.error == "payload too large" && over.isPlainText)
    }

    @Test func metricsAreLoopbackOnlyAndNameNoRoom() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        _ = h.join(room, .device)  // a refusal
        _ = h.post("/attest/challenge", room: room)
        _ = h.open(makeRoom(), address: "203.0.113.99")
        let remote = h.request("GET", "/metrics", room: nil, loopback: false)
        #expect(remote.status == 403 && remote.error == "forbidden")
        // Through a reverse proxy on this machine the peer is loopback, but the request is not local.
        for header in ["X-Forwarded-For", "CF-Connecting-IP", "Forwarded"] {
            let proxied = h.request("GET", "/metrics", room: nil, loopback: true, extra: [(header, "203.0.113.5")])
            #expect(proxied.status == 403, "\(header)")
        }
        let local = h.request("GET", "/metrics", room: nil, loopback: true)
        #expect(local.status == 200)
        let text = String(decoding: local.response.body, as: UTF8.self)
        #expect(text.contains("relay_connections_open 3"))
        #expect(text.contains("relay_rooms_stored 1"))
        #expect(text.contains("relay_admissions_total{result=\"signature required\"} 1"))
        #expect(!text.contains(room) && !text.contains(String(room.prefix(12))))
        #expect(!text.contains("203.0.113.99") && !text.contains("198.51.100.7"))
    }
}
