import Foundation
import HerdrCrypto
import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// The admission exchange of interop-facts §5 against the pure core: Hello, the uniform
/// Challenge, Proof, Result, and every refusal with its close.
@Suite struct AdmissionTests {
    /// `{"nonce":"<b64 of 32 bytes>"}` and nothing else.
    static func isUniformChallenge(_ text: String?) -> Bool {
        guard let text, let object = RelayJSON.object(text), Array(object.keys) == ["nonce"],
            RelayJSON.bytes(object["nonce"])?.count == 32
        else { return false }
        return text == "{\"nonce\":\"\(object["nonce"] as? String ?? "")\"}"
    }

    @Test func challengeIsTheSameShapeForAbsentPairingAndEstablishedRooms() throws {
        let h = CoreHarness()
        let absent = makeRoom()
        let pairing = makeRoom()
        let established = makeRoom()
        _ = try h.parkMac(pairing)
        _ = try h.establish(established, key: makeKey())
        var nonces: Set<[UInt8]> = []
        for room in [absent, pairing, established] {
            for role in RelayRole.allCases {
                for nonDisplacing in [false, true] {
                    let id = h.open(room)
                    let nonce = try #require(h.hello(id, role, nonDisplacing: nonDisplacing))
                    #expect(Self.isUniformChallenge(h.lastText(id)), "\(role) in a room: \(h.lastText(id) ?? "-")")
                    #expect(h.texts[id]?.count == 1)
                    nonces.insert(nonce)
                    h.closed(id)
                }
            }
        }
        #expect(nonces.count == 12, "every challenge carries a fresh nonce")
    }

    /// Upstream closes a malformed Hello with 1008 `bad hello` and sends nothing before it.
    @Test(arguments: [
        "not json", "", "[]", "5", "\"hello\"", "{\"v\":2,\"role\":\"mac\"}", "{\"v\":true,\"role\":\"mac\"}",
        "{\"v\":\"1\",\"role\":\"mac\"}", "{\"v\":1,\"role\":\"tablet\"}", "{\"v\":1}", "{\"role\":\"phone\"}",
        "{\"v\":1,\"role\":\"MAC\"}",
    ])
    func badHelloIsClosedWithNoResult(hello: String) {
        let h = CoreHarness()
        let id = h.open(makeRoom())
        h.text(hello, from: id)
        #expect(h.texts[id] == nil, "nothing is sent before the close")
        #expect(h.closes[id] == RelayClose(code: 1008, reason: "bad hello"))
    }

    /// Upstream's handler fails on a `null` Hello (it reads `null.v`): 1011 `internal error`.
    @Test func aNullHelloIsAnInternalError() {
        let h = CoreHarness()
        let id = h.open(makeRoom())
        h.text("null", from: id)
        #expect(h.texts[id] == nil)
        #expect(h.closes[id] == RelayClose(code: 1011, reason: "internal error"))
    }

    /// Extra fields are ignored, and `nonDisplacing` counts only when it is exactly `true`.
    @Test(arguments: [
        "{\"v\":1,\"role\":\"mac\",\"future\":[1,2]}", "{\"v\":1.0,\"role\":\"mac\"}",
        "{\"v\":1,\"role\":\"phone\",\"nonDisplacing\":\"yes\"}", "{\"v\":1,\"role\":\"mac\",\"nonDisplacing\":1}",
    ])
    func helloIsReadAsUpstreamReadsIt(hello: String) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let holder = try h.parkMac(room)
        _ = try h.joinPhone(room)
        let id = h.open(room)
        h.text(hello, from: id)
        #expect(Self.isUniformChallenge(h.lastText(id)))
        h.text("{}", from: id)
        #expect(h.refusal(id) == nil, "not taken for a non-displacing Hello: \(String(describing: h.closes[id]))")
        #expect(h.isLive(id))
        _ = holder
    }

    @Test func binaryBeforeAdmissionIsRefused() {
        let h = CoreHarness()
        let room = makeRoom()
        let early = h.open(room)
        #expect(h.binary(10, from: early) == nil)
        #expect(h.texts[early] == nil, "in place of a Hello: closed as a bad Hello, with no Result")
        #expect(h.closes[early] == RelayClose(code: 1008, reason: "bad hello"))

        let afterHello = h.open(room)
        h.hello(afterHello, .computer)
        #expect(h.binary(10, from: afterHello) == nil)
        #expect(h.refusal(afterHello) == "bad proof")
        #expect(h.closes[afterHello] == RelayClose(code: 1008, reason: "bad proof"))
    }

    /// A Proof that is not JSON is `bad proof` with its Result, in any room.
    @Test(arguments: ["nope", "", "{"])
    func unparseableProofIsRefused(proof: String) throws {
        let h = CoreHarness()
        let id = h.open(makeRoom())
        h.hello(id, .computer)
        h.text(proof, from: id)
        #expect(h.refusal(id) == "bad proof")
        #expect(h.closes[id] == RelayClose(code: 1008, reason: "bad proof"))
    }

    /// In an established room a Proof without a string `sig` is `signature required`; a `sig`
    /// that is not base64 or not a valid signature is `bad signature`; `null` fails upstream's
    /// handler (`internal error`).
    @Test(arguments: [
        ("[]", "signature required"), ("5", "signature required"), ("{}", "signature required"),
        ("{\"sig\":5}", "signature required"), ("{\"ticket\":\"AAAA\"}", "signature required"),
        ("{\"sig\":\"!!!\"}", "bad signature"), ("{\"sig\":\"AA==\",\"ticket\":\"x\"}", "bad signature"),
    ])
    func establishedRoomsReadTheSignatureAsUpstream(proof: String, error: String) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        let id = h.open(room)
        h.hello(id, .computer)
        h.text(proof, from: id)
        #expect(h.refusal(id) == error, "\(proof)")
        #expect(h.closes[id] == RelayClose(code: 1008, reason: error))
        let null = h.open(room)
        h.hello(null, .computer)
        h.text("null", from: null)
        #expect(h.texts[null]?.count == 1, "only the Challenge")
        #expect(h.closes[null] == RelayClose(code: 1011, reason: "internal error"))
    }

    /// Text after admission is never handed to `text`: the shell streams it like binary. Should
    /// it come anyway, it is dropped.
    @Test func textHandedInAfterAdmissionIsDropped() throws {
        let h = CoreHarness()
        let mac = try h.parkMac(makeRoom())
        let sent = h.texts[mac]?.count
        h.text("{\"v\":1,\"role\":\"mac\"}", from: mac)
        #expect(h.texts[mac]?.count == sent)
        #expect(h.isLive(mac))
    }

    @Test func admittedRaisesTheFrameLimit() throws {
        let h = CoreHarness()
        let mac = try h.parkMac(makeRoom())
        #expect(h.admittedLimits[mac] == 256 * 1024)
        #expect(h.history.contains(.admitted(mac, frameLimit: 256 * 1024)))
    }

    // MARK: - Pending sockets and the deadline

    @Test func fourPendingAreKeptAndTheFifthDropsTheOldest() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let first = h.open(room)
        let others = (0..<3).map { _ in h.open(room) }
        h.hello(others[0], .device)  // awaiting proof counts as pending too
        #expect(([first] + others).allSatisfy(h.isLive))
        let fifth = h.open(room)
        #expect(h.closes[first] == RelayClose(code: 1008, reason: "too many pending"))
        #expect((others + [fifth]).allSatisfy(h.isLive))
        // The survivors carry on: a Mac parks, freeing a pending place.
        h.hello(fifth, .computer)
        #expect(h.proof(fifth, .empty) == .admitted(registrationToken: nil))
        let sixth = h.open(room)
        #expect((others + [fifth, sixth]).allSatisfy(h.isLive))
        let seventh = h.open(room)
        #expect(h.closes[others[0]] == RelayClose(code: 1008, reason: "too many pending"))
        #expect([others[1], others[2], fifth, sixth, seventh].allSatisfy(h.isLive))
    }

    @Test func pendingLimitIsPerRoom() {
        let h = CoreHarness()
        let ids = (0..<8).map { h.open($0 < 4 ? "a\(String(repeating: "0", count: 63))" : makeRoom()) }
        #expect(ids.allSatisfy(h.isLive))
    }

    @Test func admissionTimesOutAtFifteenSeconds() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let silent = h.open(room)
        let helloOnly = h.open(room)
        h.hello(helloOnly, .computer)
        let admitted = try h.parkMac(makeRoom())
        h.clock.advance(milliseconds: 14_999)
        h.tick()
        #expect(h.isLive(silent) && h.isLive(helloOnly))
        h.clock.advance(milliseconds: 1)
        h.tick()
        #expect(h.closes[silent] == RelayClose(code: 1008, reason: "admission timeout"))
        #expect(h.closes[helloOnly] == RelayClose(code: 1008, reason: "admission timeout"))
        #expect(h.isLive(admitted))
        // A later socket has its own deadline.
        let late = h.open(room)
        h.clock.advance(milliseconds: 14_999)
        h.tick()
        #expect(h.isLive(late))
        h.clock.advance(milliseconds: 1)
        h.tick()
        #expect(h.closes[late] == RelayClose(code: 1008, reason: "admission timeout"))
    }

    // MARK: - The per-room proof limiter

    @Test func fortyProofsPerTenSecondsThenRateLimitedUntilTheWindowReopens() throws {
        let h = CoreHarness()
        let room = makeRoom()
        for attempt in 1...40 {
            #expect(h.join(room, .computer).result == .admitted(registrationToken: nil), "attempt \(attempt)")
        }
        let (limited, result) = h.join(room, .computer)
        #expect(result == .refused("rate limited"))
        #expect(h.closes[limited] == RelayClose(code: 1008, reason: "rate limited"))
        // Refused proofs count too, and the window is fixed from its first proof.
        h.clock.advance(milliseconds: 9_999)
        #expect(h.join(room, .computer).result == .refused("rate limited"))
        h.clock.advance(milliseconds: 1)
        #expect(h.join(room, .computer).result == .admitted(registrationToken: nil))
        // Another room has its own window.
        #expect(h.join(makeRoom(), .computer).result == .admitted(registrationToken: nil))
    }

    @Test func failedProofsCountAgainstTheLimiter() throws {
        let h = CoreHarness()
        let room = makeRoom()
        _ = try h.establish(room, key: makeKey())  // 2 proofs
        for _ in 0..<38 {
            #expect(
                h.join(room, .device, proof: .signature([UInt8](repeating: 0, count: 64))).result
                    == .refused("bad signature"))
        }
        #expect(h.join(room, .device, proof: .empty).result == .refused("rate limited"))
    }

    // MARK: - Pairing rooms

    @Test func pairingRoomInOpenMode() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let early = h.join(room, .device)
        #expect(early.result == .refused("mac offline"))
        #expect(h.closes[early.id] == RelayClose(code: 1008, reason: "mac offline"))

        let mac = h.join(room, .computer)
        #expect(h.lastText(mac.id) == "{\"ok\":true}")
        let phone = h.join(room, .device)
        guard case .admitted(let token?) = phone.result else {
            Issue.record("phone not admitted: \(String(describing: phone.result))")
            return
        }
        #expect(token.count == 24)
        #expect(h.lastText(phone.id) == "{\"ok\":true,\"registrationToken\":\"\(base64(token))\"}")
        #expect(h.isLive(mac.id) && h.isLive(phone.id))
        #expect(h.binary(5, from: mac.id) == phone.id)
        #expect(h.binary(5, from: phone.id) == mac.id)
    }

    /// Upstream's open mode admits into a room with no verifier whatever the Proof carries (`{}`,
    /// a ticket, a `sig`, even `null` or a number), and the phone still gets its token.
    @Test(arguments: [
        RelayProof.empty.json, RelayProof.ticket("AAAA").json, RelayProof.ticket(base64(SecureRandom.bytes(24))).json,
        RelayProof.signature([UInt8](repeating: 1, count: 64)).json, "{\"sig\":\"!!!\"}", "null", "5", "[]",
    ])
    func openModeAdmitsAnyProofIntoAPairingRoom(proof: String) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = h.open(room)
        h.hello(mac, .computer)
        h.text(proof, from: mac)
        #expect(h.lastText(mac) == "{\"ok\":true}", "mac with \(proof)")
        let phone = h.open(room)
        h.hello(phone, .device)
        h.text(proof, from: phone)
        guard case .admitted(let token?)? = h.lastText(phone).flatMap(RelayResult.parse) else {
            Issue.record("phone with \(proof): \(String(describing: h.lastText(phone)))")
            return
        }
        #expect(token.count == 24)
    }

    /// Under attestation a pairing room's Mac parks whatever it presents (it cannot attest); the
    /// phone needs a string `ticket` (`ticket required`) that the relay issued (`bad ticket`).
    @Test func attestationPairingRoomsReadTheTicketAsUpstream() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        for proof in ["{}", "{\"sig\":\"AA==\"}", "null", "7"] {
            let mac = h.open(room)
            h.hello(mac, .computer)
            h.text(proof, from: mac)
            #expect(h.lastText(mac) == "{\"ok\":true}", "mac with \(proof)")
        }
        for (proof, error) in [
            ("{}", "ticket required"), ("{\"sig\":\"AA==\"}", "ticket required"), ("{\"ticket\":5}", "ticket required"),
            ("[]", "ticket required"), ("{\"ticket\":\"!!\"}", "bad ticket"), ("{\"ticket\":\"AAAA\"}", "bad ticket"),
        ] {
            let phone = h.open(room)
            h.hello(phone, .device)
            h.text(proof, from: phone)
            #expect(h.refusal(phone) == error, "phone with \(proof)")
        }
        let null = h.open(room)
        h.hello(null, .device)
        h.text("null", from: null)
        #expect(h.closes[null] == RelayClose(code: 1011, reason: "internal error"))
    }

    @Test func pairingRoomWithAttestationRequired() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        let ticket = try h.ticket(room)
        #expect(h.join(room, .device, proof: .ticket(ticket)).result == .refused("mac offline"))
        _ = try h.parkMac(room)
        let unticketed = h.join(room, .device)
        #expect(unticketed.result == .refused("ticket required"))
        #expect(h.closes[unticketed.id] == RelayClose(code: 1008, reason: "ticket required"))
        #expect(h.join(room, .device, proof: .ticket("not base64!")).result == .refused("bad ticket"))
        #expect(h.join(room, .device, proof: .ticket(base64(SecureRandom.bytes(24)))).result == .refused("bad ticket"))
        // A ticket for another room does not open this one.
        let other = makeRoom()
        let otherTicket = try h.ticket(other)
        #expect(h.join(room, .device, proof: .ticket(otherTicket)).result == .refused("bad ticket"))

        // `mac offline` did not use the ticket up (upstream's does): it is still good, and single use.
        let first = try h.joinPhone(room, proof: .ticket(ticket))
        #expect(first.token.count == 24)
        // Displacing a ticketed phone takes another ticket.
        #expect(h.join(room, .device).result == .refused("ticket required"))
        #expect(h.isLive(first.id))
        let reused = h.join(room, .device, proof: .ticket(ticket))
        #expect(reused.result == .refused("bad ticket"))
        #expect(h.closes[reused.id] == RelayClose(code: 1008, reason: "bad ticket"))
        #expect(h.isLive(first.id))

        // Registration under attestation needs an assertion by the attested key.
        let key = try makeKey()
        let answer = h.post(
            "/register", room: room,
            json: ["registrationToken": base64(first.token), "verifier": base64(key.verifier.raw)].merging(
                try h.assertionFields(room)
            ) { $1 })
        #expect(answer.status == 200 && answer.ok, "\(answer.json)")
        #expect(try h.store.room(named: room)?.verifier == key.verifier.raw)
        // Established: pairing-mode admission is closed for good, tickets or not.
        let late = try h.ticket(room)
        #expect(h.join(room, .device, proof: .ticket(late)).result == .refused("signature required"))
    }

    @Test func ticketsExpireAfterFiveMinutes() throws {
        let h = CoreHarness(attestationRequired: true)
        let fresh = makeRoom()
        let stale = makeRoom()
        let freshTicket = try h.ticket(fresh)
        let staleTicket = try h.ticket(stale)
        h.clock.advance(seconds: 299)
        _ = try h.parkMac(fresh)
        #expect(try h.joinPhone(fresh, proof: .ticket(freshTicket)).token.count == 24)
        h.clock.advance(seconds: 1)
        _ = try h.parkMac(stale)
        #expect(h.join(stale, .device, proof: .ticket(staleTicket)).result == .refused("bad ticket"))
    }

    @Test func attestRefusesBadEvidence() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        let challenge = try h.challenge(room)
        let bad = h.post(
            "/attest", room: room, json: ["challenge": base64(challenge), "attestationObject": base64([1, 2, 3])])
        #expect(bad.status == 403 && bad.error == "attestation rejected")
        // The challenge was used up by the failed attempt: a good object over it is refused.
        let good = try attestFixture.attestationObject(for: h.device, clientDataHash: h.clientDataHash(challenge))
        let reused = h.post(
            "/attest", room: room, json: ["challenge": base64(challenge), "attestationObject": base64(good)])
        #expect(reused.status == 403 && reused.error == "bad challenge")
        let unknown = h.post(
            "/attest", room: room,
            json: ["challenge": base64(SecureRandom.bytes(32)), "attestationObject": base64(good)])
        #expect(unknown.status == 403 && unknown.error == "bad challenge")
        #expect(h.post("/attest", room: room, json: ["challenge": "x"]).status == 400)
    }

    // MARK: - Established rooms

    @Test func establishedRoomNeedsAValidSignature() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        let (oldMac, oldPhone) = try h.establish(room, key: key)
        for role in RelayRole.allCases {
            let unsigned = h.join(room, role)
            #expect(unsigned.result == .refused("signature required"))
            #expect(h.closes[unsigned.id] == RelayClose(code: 1008, reason: "signature required"))
            #expect(h.join(room, role, proof: .ticket("AAAA")).result == .refused("signature required"))
            let zero = h.join(room, role, proof: .signature([UInt8](repeating: 0, count: 64)))
            #expect(zero.result == .refused("bad signature"))
            #expect(h.closes[zero.id] == RelayClose(code: 1008, reason: "bad signature"))
            #expect(h.join(room, role, proof: .signature([1, 2, 3])).result == .refused("bad signature"))
            let otherKey = try makeKey()
            #expect(try h.signedJoin(room, role, key: otherKey).result == .refused("bad signature"))
        }
        // Refusals displaced nobody.
        #expect(h.isLive(oldMac) && h.isLive(oldPhone))
        let mac = try h.signedJoin(room, .computer, key: key)
        #expect(mac.result == .admitted(registrationToken: nil))
        let phone = try h.signedJoin(room, .device, key: key)
        guard case .admitted(let token?) = phone.result else {
            Issue.record("signed phone not admitted")
            return
        }
        #expect(token.count == 24)
        #expect(h.closes[oldMac] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.closes[oldPhone] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.binary(100, from: mac.id) == phone.id)
        #expect(h.binary(100, from: phone.id) == mac.id)
    }

    @Test(arguments: [false, true])
    func signedDevicesNeedNoTicketButThePhoneAParkedMac(attestationRequired: Bool) throws {
        let h = CoreHarness(attestationRequired: attestationRequired)
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.store.registerVerifier(key.verifier.raw, room: room, now: h.clock.unixSeconds)
        // As upstream: a phone joins only while a Mac is parked, established room or not.
        let alone = try h.signedJoin(room, .device, key: key)
        #expect(alone.result == .refused("mac offline"))
        let mac = try h.signedJoin(room, .computer, key: key)
        #expect(mac.result == .admitted(registrationToken: nil))
        // No ticket in an established room: the signature is the credential.
        let phone = try h.signedJoin(room, .device, key: key)
        guard case .admitted(let token?) = phone.result else {
            Issue.record("signed phone not admitted: \(String(describing: phone.result))")
            return
        }
        #expect(token.count == 24)
        #expect(h.binary(1, from: mac.id) == phone.id)
    }

    @Test(arguments: ["another room", "another origin", "another role", "replayed nonce", "delete transcript"])
    func signatureBoundToItsTranscriptIsRefusedElsewhere(variant: String) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        for role in RelayRole.allCases {
            var earlier: [UInt8] = []
            if variant == "replayed nonce" {
                // A signature that was valid for an earlier challenge (of a socket that then left).
                let first = h.open(room)
                earlier = try #require(h.hello(first, role))
                h.closed(first)
            }
            let attempt = try h.signedJoin(room, role, key: key) { key, nonce in
                switch variant {
                case "another room": try key.signJoin(role: role, nonce: nonce, room: makeRoom(), origin: testOrigin)
                case "another origin":
                    try key.signJoin(role: role, nonce: nonce, room: room, origin: "https://relay.test:8443")
                case "another role":
                    try key.signJoin(
                        role: role == .computer ? .device : .computer, nonce: nonce, room: room, origin: testOrigin)
                case "replayed nonce": try key.signJoin(role: role, nonce: earlier, room: room, origin: testOrigin)
                default: try key.signDelete(challenge: nonce, room: room, origin: testOrigin)
                }
            }
            #expect(attempt.result == .refused("bad signature"), "\(variant), \(role)")
            #expect(h.closes[attempt.id] == RelayClose(code: 1008, reason: "bad signature"))
        }
    }

    // MARK: - Slots: newest wins, displacement is gated

    @Test func newestMacDisplacesTheParkedOne() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let first = try h.parkMac(room)
        let second = try h.parkMac(room)
        #expect(h.closes[first] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.isLive(second))
        // The displaced Mac's phone side does not get `peer gone`: the room still has a Mac.
        let phone = try h.joinPhone(room)
        let third = try h.parkMac(room)
        #expect(h.closes[second] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.isLive(phone.id))
        #expect(h.binary(1, from: phone.id) == third)
    }

    @Test func nonDisplacingIsRefusedWithSlotOccupied() throws {
        let h = CoreHarness()
        let room = makeRoom()
        // An empty slot is simply taken.
        let mac = h.join(room, .computer, nonDisplacing: true)
        #expect(mac.result == .admitted(registrationToken: nil))
        let second = h.join(room, .computer, nonDisplacing: true)
        #expect(second.result == .refused("slot occupied"))
        #expect(h.closes[second.id] == RelayClose(code: 1008, reason: "slot occupied"))
        #expect(h.isLive(mac.id))
        let phone = try h.joinPhone(room)
        let phone2 = h.join(room, .device, nonDisplacing: true)
        #expect(phone2.result == .refused("slot occupied"))
        #expect(h.isLive(phone.id))
    }

    @Test func phoneDisplacementInEstablishedRoomNeedsAValidSignature() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        _ = try h.establish(room, key: key)
        let phone = try h.signedJoin(room, .device, key: key)
        #expect(h.isLive(phone.id))
        #expect(h.join(room, .device).result == .refused("signature required"))
        #expect(h.join(room, .device, proof: .signature(SecureRandom.bytes(64))).result == .refused("bad signature"))
        #expect(try h.signedJoin(room, .device, key: try makeKey()).result == .refused("bad signature"))
        #expect(h.isLive(phone.id))
        let newer = try h.signedJoin(room, .device, key: key)
        #expect(h.closes[phone.id] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.isLive(newer.id))
        let polite = try h.signedJoin(room, .device, key: key, nonDisplacing: true)
        #expect(polite.result == .refused("slot occupied"))
        #expect(h.isLive(newer.id))
    }

    // MARK: - The pairing cycle cap

    @Test func eightPhoneTakesPerParkThenTheRoomIsClosed() throws {
        let h = CoreHarness()
        let room = makeRoom()
        var mac = try h.parkMac(room)
        var phones: [ConnectionID] = []
        for take in 1...8 {
            let phone = try h.joinPhone(room)
            #expect(h.isLive(phone.id), "take \(take)")
            phones.append(phone.id)
        }
        // A fresh park resets the budget.
        mac = try h.parkMac(room)
        let lastPhone = try #require(phones.last)
        #expect(h.isLive(lastPhone))
        phones = []
        for _ in 1...8 { phones.append(try h.joinPhone(room).id) }
        // In open mode each new phone displaces the last (displace-on-connect).
        #expect(h.closes[phones[0]] == RelayClose(code: 1000, reason: "displaced"))
        let pending = h.open(room)
        let ninth = h.join(room, .device)
        #expect(ninth.result == nil, "the ninth gets no Result, only the room's close")
        let cap = RelayClose(code: 1000, reason: "pairing cycle cap")
        #expect(h.closes[ninth.id] == cap)
        #expect(h.closes[mac] == cap)
        #expect(h.closes[try #require(phones.last)] == cap)
        #expect(h.closes[pending] == cap)
        // The room starts over from nothing.
        _ = try h.parkMac(room)
        for _ in 1...8 { _ = try h.joinPhone(room) }
        #expect(h.join(room, .device).result == nil)
    }

    @Test func phoneTakesInEstablishedRoomsAreNotCapped() throws {
        let h = CoreHarness { $0.proofsPerWindow = 100 }
        let room = makeRoom()
        let key = try makeKey()
        let (mac, _) = try h.establish(room, key: key)
        var last: ConnectionID = 0
        for _ in 1...12 { last = try h.signedJoin(room, .device, key: key).id }
        #expect(h.isLive(mac) && h.isLive(last))
    }

    static let peerGone = RelayClose(code: 1001, reason: "peer gone")

    /// As upstream: whichever admitted side goes, by closing or dying, the other is closed with
    /// 1001 `peer gone`, so a parked Mac re-parks and the next phone meets a fresh handshake.
    @Test(arguments: [false, true], [false, true])
    func eitherSideLeavingClosesTheOtherWithPeerGone(established: Bool, macLeaves: Bool) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        if established { _ = try h.establish(room, key: key) }
        let mac = established ? try h.signedJoin(room, .computer, key: key).id : try h.parkMac(room)
        let phone = established ? try h.signedJoin(room, .device, key: key).id : try h.joinPhone(room).id
        h.closed(macLeaves ? mac : phone)
        #expect(h.closes[macLeaves ? phone : mac] == Self.peerGone)
        #expect(h.closes[macLeaves ? mac : phone] == nil, "the side that left is not closed again")
        if !established {
            #expect(h.core.connectionCount == 0 && h.core.activeRoomCount == 0)
        }
    }

    /// A socket that was not admitted takes nobody with it; nor does a pending one in an
    /// occupied room.
    @Test func aSocketThatWasNotAdmittedTakesNobodyWithIt() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        let pending = h.open(room)
        h.hello(pending, .device)
        h.closed(pending)
        #expect(h.isLive(mac) && h.isLive(phone.id))
    }

    /// Displacement is not leaving: a reconnecting phone that displaces the old one keeps the
    /// Mac, and a new Mac displacing the old keeps the phone (upstream's rule: closing the peer
    /// on every retry would livelock a reconnect).
    @Test(arguments: [false, true])
    func displacementDoesNotCloseThePeer(established: Bool) throws {
        let h = CoreHarness()
        let room = makeRoom()
        let key = try makeKey()
        if established { _ = try h.establish(room, key: key) }
        func join(_ role: RelayRole) throws -> ConnectionID {
            if established { return try h.signedJoin(room, role, key: key).id }
            return role == .computer ? try h.parkMac(room) : try h.joinPhone(room).id
        }
        let mac = try join(.computer)
        let phone = try join(.device)
        let phone2 = try join(.device)
        #expect(h.closes[phone] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.isLive(mac), "the Mac stays when its phone is displaced")
        let mac2 = try join(.computer)
        #expect(h.closes[mac] == RelayClose(code: 1000, reason: "displaced"))
        #expect(h.isLive(phone2), "the phone stays when its Mac is displaced")
        #expect(h.binary(3, from: mac2) == phone2)
        // The displaced socket's own end, when the shell reports it, changes nothing.
        h.closed(phone)
        h.closed(mac)
        #expect(h.isLive(mac2) && h.isLive(phone2))
    }

    /// The relay closing an admitted side for a limit closes its peer too.
    @Test func aSideClosedForALimitTakesItsPeer() throws {
        let h = CoreHarness { $0.framesPerSecond = 3 }
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room)
        for _ in 0..<3 { #expect(h.binary(1, from: phone.id) == mac) }
        #expect(h.binary(1, from: phone.id) == nil)
        #expect(h.closes[phone.id] == RelayClose(code: 1008, reason: "frame rate exceeded"))
        #expect(h.closes[mac] == Self.peerGone)
    }
}

/// A refused attempt must not use up the single-use secret it presented.
struct SecretsSurviveRefusalsTests {
    /// A ticketed phone refused with `slot occupied` (it asked not to displace) keeps its ticket:
    /// the same ticket admits it once the slot is free, and only once.
    @Test func aTicketRefusedForAnOccupiedSlotStaysUsable() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        _ = try h.parkMac(room)
        _ = try h.joinPhone(room, proof: .ticket(try h.ticket(room)))
        let ticket = try h.ticket(room)
        #expect(h.join(room, .device, proof: .ticket(ticket), nonDisplacing: true).result == .refused("slot occupied"))
        #expect(try h.joinPhone(room, proof: .ticket(ticket)).token.count == 24)
        #expect(h.join(room, .device, proof: .ticket(ticket)).result == .refused("bad ticket"))
    }

    /// `/register` refused for its assertion leaves the registration token for a retry with a
    /// good assertion; a success uses it up.
    @Test func aTokenRefusedForItsAssertionStaysUsable() throws {
        let h = CoreHarness(attestationRequired: true)
        let room = makeRoom()
        _ = try h.parkMac(room)
        let phone = try h.joinPhone(room, proof: .ticket(try h.ticket(room)))
        let verifier = base64(try makeKey().verifier.raw)
        let token = base64(phone.token)
        let base = ["registrationToken": token, "verifier": verifier]
        var answer = h.post(
            "/register", room: room,
            json: base.merging(["challenge": base64(try h.challenge(room)), "assertion": base64(Array("forged".utf8))])
            {
                $1
            })
        #expect(
            answer.status == 403
                && (answer.json["error"] as? String ?? "").hasPrefix("assertion rejected: malformed assertion CBOR"))
        answer = h.post("/register", room: room, json: base.merging(try h.assertionFields(room)) { $1 })
        #expect(answer.status == 200)
        let elsewhere = makeRoom()
        answer = h.post("/register", room: elsewhere, json: base.merging(try h.assertionFields(elsewhere)) { $1 })
        #expect(answer.status == 403 && answer.error == "bad token")
    }
}
