import HerdrCrypto
import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// The attacks the design names, each against the core with what the attacker can actually hold.
/// (The fifth pre-auth socket, the over-size frame and the browser Origin run against the real
/// server in `WebSocketPeerTests`.)
@Suite struct AttackTests {
    @Test func displacementWithoutACredential() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        let phone = try h.signedJoin(room, .device, key: key)
        let mac = try h.signedJoin(room, .computer, key: key)
        // The attacker knows the room name, nothing else.
        #expect(h.join(room, .device).result == .refused("signature required"))
        #expect(h.join(room, .device, proof: .signature(SecureRandom.bytes(64))).result == .refused("bad signature"))
        #expect(h.join(room, .device, proof: .ticket("AAAA")).result == .refused("signature required"))
        #expect(h.join(room, .computer).result == .refused("signature required"))
        #expect(h.isLive(phone.id) && h.isLive(mac.id))
        #expect(h.binary(10, from: phone.id) == mac.id)
    }

    @Test func replayedJoinSignature() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        // The attacker captured a complete, successful join: its nonce and signature.
        let victim = h.open(room)
        let nonce = try #require(h.hello(victim, .device))
        let captured = try key.signJoin(role: .device, nonce: nonce, room: room, origin: testOrigin)
        #expect(h.proof(victim, .signature(captured)) != .refused("bad signature"))
        #expect(h.isLive(victim))
        for role in RelayRole.allCases {
            let replay = h.join(room, role, proof: .signature(captured))
            #expect(replay.result == .refused("bad signature"), "\(role)")
        }
        #expect(h.isLive(victim))
    }

    @Test func signatureForAnotherRoomOrOrigin() throws {
        let h = CoreHarness()
        let key = try makeKey()
        // Even were the same join key registered for two rooms, a join for one opens neither the
        // other nor this relay when made for another origin (a hostile relay harvesting joins).
        let roomA = makeRoom()
        let roomB = makeRoom()
        _ = try h.establish(roomA, key: key)
        _ = try h.establish(roomB, key: key)
        for role in RelayRole.allCases {
            let crossRoom = try h.signedJoin(roomB, role, key: key) { key, nonce in
                try key.signJoin(role: role, nonce: nonce, room: roomA, origin: testOrigin)
            }
            #expect(crossRoom.result == .refused("bad signature"))
            let crossOrigin = try h.signedJoin(roomA, role, key: key) { key, nonce in
                try key.signJoin(role: role, nonce: nonce, room: roomA, origin: "https://evil.example")
            }
            #expect(crossOrigin.result == .refused("bad signature"))
        }
    }

    @Test func secondRegistration() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let real = try makeKey()
        let attacker = try makeKey()
        _ = try h.parkMac(room)
        // An open-mode attacker who knows the room joins as a phone too and gets a token…
        let attackerToken = try h.joinPhone(room).token
        let realToken = try h.joinPhone(room).token
        #expect(
            h.post(
                "/register", room: room,
                json: ["registrationToken": base64(realToken), "verifier": base64(real.verifier.raw)]
            )
            .status == 200)
        // …but registration accepts only the first V: the room cannot be taken over.
        let answer = h.post(
            "/register", room: room,
            json: ["registrationToken": base64(attackerToken), "verifier": base64(attacker.verifier.raw)])
        #expect(answer.status == 403 && answer.error == "already registered")
        #expect(try h.store.room(named: room)?.verifier == real.verifier.raw)
        #expect(try h.signedJoin(room, .computer, key: attacker).result == .refused("bad signature"))
        #expect(try h.signedJoin(room, .computer, key: real).result == .admitted(registrationToken: nil))
    }

    @Test func grindingBeyondFortyAttempts() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)  // two proofs
        for attempt in 3...40 {
            #expect(
                h.join(room, .computer, proof: .signature(SecureRandom.bytes(64))).result == .refused("bad signature"),
                "\(attempt)")
        }
        // Past the limit even the right signature waits for the window: grinding gains nothing.
        for _ in 0..<20 {
            #expect(
                h.join(room, .computer, proof: .signature(SecureRandom.bytes(64))).result == .refused("rate limited"))
        }
        #expect(try h.signedJoin(room, .computer, key: key).result == .refused("rate limited"))
        h.clock.advance(seconds: 10)
        #expect(try h.signedJoin(room, .computer, key: key).result == .admitted(registrationToken: nil))
    }

    @Test func qrPhotoSquatterOnTheMacSlot() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let realMac = try h.parkMac(room)
        // The squatter parks as the Mac: newest wins.
        let squatter = try h.parkMac(room)
        #expect(h.closes[realMac] == RelayClose(code: 1000, reason: "displaced"))
        // The real Mac re-parks and the squatter is displaced in turn.
        let realMac2 = try h.parkMac(room)
        #expect(h.closes[squatter] == RelayClose(code: 1000, reason: "displaced"))
        let phone = try h.joinPhone(room)
        #expect(h.binary(10, from: phone.id) == realMac2)
        // Flapping back: the squatter's park gets a fresh budget, but phone turnover under any
        // one park is still bounded by the cycle cap, which kills the room.
        let squatter2 = try h.parkMac(room)
        for _ in 1...8 { _ = try h.joinPhone(room) }
        let ninth = h.join(room, .device)
        #expect(h.closes[ninth.id] == RelayClose(code: 1000, reason: "pairing cycle cap"))
        #expect(h.closes[squatter2] == RelayClose(code: 1000, reason: "pairing cycle cap"))
        #expect(h.core.activeRoomCount == 0)
    }
}
