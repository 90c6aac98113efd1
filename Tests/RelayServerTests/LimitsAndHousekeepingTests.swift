import RelayProtocol
import RelayServer
import RelayStorage
import Testing

/// Per-address limits, the idle TTL, keepalive, shutdown and the fail-closed attestation setting.
@Suite struct LimitsAndHousekeepingTests {
    // MARK: - Per client address

    @Test func oneHundredTwentyUpgradesPerMinutePerAddress() {
        let h = CoreHarness()
        for attempt in 1...120 {
            #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.1") == nil, "upgrade \(attempt)")
        }
        let refused = h.checkUpgrade(room: makeRoom(), address: "192.0.2.1")
        #expect(refused?.status == 429)
        #expect(refused.map { String(decoding: $0.body, as: UTF8.self) } == "rate limited")
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.2") == nil, "another address has its own budget")
        h.clock.advance(milliseconds: 59_999)
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.1")?.status == 429)
        h.clock.advance(milliseconds: 1)
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.1") == nil)
    }

    @Test func sixtyFourOpenSocketsPerAddress() throws {
        let h = CoreHarness()
        var ids: [ConnectionID] = []
        for index in 0..<64 {
            let room = makeRoom()
            #expect(h.checkUpgrade(room: room, address: "192.0.2.1") == nil, "socket \(index)")
            ids.append(h.open(room, address: "192.0.2.1"))
        }
        let refused = h.checkUpgrade(room: makeRoom(), address: "192.0.2.1")
        #expect(refused?.status == 429)
        #expect(refused.map { String(decoding: $0.body, as: UTF8.self) } == "too many connections")
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.2") == nil)
        // A socket the client closed frees a place, and so does one the relay closed.
        h.closed(ids[0])
        let room = makeRoom()
        #expect(h.checkUpgrade(room: room, address: "192.0.2.1") == nil)
        let again = h.open(room, address: "192.0.2.1")
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.1")?.status == 429)
        h.text("garbage", from: again)
        #expect(h.closes[again] != nil)
        #expect(h.checkUpgrade(room: makeRoom(), address: "192.0.2.1") == nil)
    }

    @Test func thirtyAttestRequestsPerMinutePerAddress() throws {
        let h = CoreHarness(attestationRequired: true)
        for index in 0..<30 {
            let room = makeRoom()
            let answer =
                index.isMultiple(of: 2)
                ? h.post("/attest/challenge", room: room, address: "192.0.2.1")
                : h.post(
                    "/attest", room: room, json: ["challenge": "AAAA", "attestationObject": "AAAA"],
                    address: "192.0.2.1")
            #expect(answer.status != 429, "request \(index)")
        }
        for path in ["/attest/challenge", "/attest"] {
            let answer = h.post(path, room: makeRoom(), json: [:], address: "192.0.2.1")
            #expect(answer.status == 429 && answer.error == "rate limited", "\(path)")
        }
        #expect(h.post("/attest/challenge", room: makeRoom(), address: "192.0.2.2").status == 200)
        // /register and /delete are not counted; any path starting /attest is, as upstream counts.
        #expect(h.post("/register", room: makeRoom(), json: [:], address: "192.0.2.1").status == 400)
        #expect(h.request("GET", "/attestations", room: makeRoom(), address: "192.0.2.1").status == 429)
        h.clock.advance(seconds: 60)
        #expect(h.post("/attest/challenge", room: makeRoom(), address: "192.0.2.1").status == 200)
    }

    /// Upstream's single-process caps: sockets and rooms in all (503 `capacity`).
    @Test func totalSocketsAndRoomsAreCapped() throws {
        let h = CoreHarness {
            $0.maximumSockets = 3
            $0.maximumRooms = 2
        }
        let first = makeRoom()
        let second = makeRoom()
        #expect(h.checkUpgrade(room: first, address: "192.0.2.1") == nil)
        _ = h.open(first, address: "192.0.2.1")
        _ = h.open(second, address: "192.0.2.2")
        let newRoom = h.checkUpgrade(room: makeRoom(), address: "192.0.2.3")
        #expect(newRoom?.status == 503 && newRoom.map { String(decoding: $0.body, as: UTF8.self) } == "capacity")
        #expect(h.post("/attest/challenge", room: makeRoom()).status == 503, "HTTP for a new room too")
        #expect(h.post("/attest/challenge", room: first).status == 200, "a room the relay holds is not new")
        #expect(h.checkUpgrade(room: first, address: "192.0.2.3") == nil)
        _ = h.open(first, address: "192.0.2.3")
        #expect(h.checkUpgrade(room: first, address: "192.0.2.4")?.status == 503, "three sockets in all")
    }

    // MARK: - The 30-day idle TTL

    static let thirtyDays: Int64 = 30 * 86_400

    @Test func anIdleRoomSurvivesThirtyDaysAndIsReapedAfter() throws {
        let h = CoreHarness { $0.maintenanceInterval = 1000 }
        let room = makeRoom()
        let (mac, phone) = try h.establish(room, key: makeKey())
        h.closed(phone)
        h.closed(mac)
        h.clock.advance(seconds: Self.thirtyDays - 1)
        h.tick()
        #expect(try h.store.room(named: room) != nil)
        h.clock.advance(seconds: 2)
        h.tick()
        #expect(try h.store.room(named: room) == nil)
    }

    /// A signed join refreshes the room's activity once its signature verifies, even when the
    /// phone is then refused for want of a parked Mac (as upstream, which stamps it first).
    @Test func aSignedJoinRefreshesActivity() throws {
        let h = CoreHarness { $0.maintenanceInterval = 1000 }
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try h.establish(room, key: key)
        h.closed(phone)
        h.closed(mac)
        h.clock.advance(seconds: 20 * 86_400)
        let join = try h.signedJoin(room, .device, key: key)
        #expect(join.result == .refused("mac offline"))
        h.clock.advance(seconds: 11 * 86_400)
        h.tick()
        #expect(try h.store.room(named: room) != nil, "used 11 days ago")
        h.clock.advance(seconds: 19 * 86_400 + 2)
        h.tick()
        #expect(try h.store.room(named: room) == nil)
    }

    @Test func aRoomInUseIsNeverReaped() throws {
        let h = CoreHarness { $0.maintenanceInterval = 1000 }
        let room = makeRoom()
        let key = try makeKey()
        let pairing = try h.establish(room, key: key)
        h.closed(pairing.phone)  // its Mac goes with it (peer gone)
        let mac = try h.signedJoin(room, .computer, key: key).id
        for _ in 0..<40 {
            h.clock.advance(seconds: 86_400)
            h.core.pong(from: mac)
            h.tick()
        }
        #expect(h.isLive(mac))
        #expect(try h.store.room(named: room) != nil)
    }

    @Test func reapingClosesTheRoomsLiveSocketsWithRoomExpired() throws {
        let h = CoreHarness { $0.maintenanceInterval = 1000 }
        let room = makeRoom()
        let (mac, phone) = try h.establish(room, key: makeKey())
        h.closed(phone)
        h.closed(mac)
        h.clock.advance(seconds: Self.thirtyDays + 1)
        // Sockets that came in before the maintenance pass noticed, still awaiting admission.
        let waiting = h.open(room)
        let greeted = h.open(room)
        h.hello(greeted, .device)
        let bystander = try h.parkMac(makeRoom())
        h.core.pong(from: bystander)
        h.tick()
        #expect(try h.store.room(named: room) == nil)
        let expired = RelayClose(code: 1000, reason: "room expired")
        #expect(h.closes[waiting] == expired && h.closes[greeted] == expired)
        #expect(h.isLive(bystander))
        // A device coming back finds a pairing room: nothing checks its signature (open mode
        // admits any proof there), and a phone may register a new verifier.
        #expect(
            h.join(room, .computer, proof: .signature([UInt8](repeating: 7, count: 64))).result
                == .admitted(registrationToken: nil))
        #expect(try h.store.room(named: room) == nil)
    }

    // MARK: - Keepalive

    @Test func relayPingsEveryThirtySecondsAndDropsWhoMissedAPong() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room).id
        h.clock.advance(milliseconds: 29_999)
        h.tick()
        #expect(h.pings.isEmpty)
        h.clock.advance(milliseconds: 1)
        h.tick()
        #expect(Set(h.pings) == [mac, phone] && h.pings.count == 2)
        h.core.pong(from: mac)
        h.clock.advance(seconds: 30)
        h.tick()
        #expect(h.dropped == [phone], "the phone missed its pong")
        #expect(h.closes[phone] == nil, "dropped, no close frame")
        #expect(h.closes[mac] == RelayClose(code: 1001, reason: "peer gone"), "its Mac learns the phone is gone")
        // The Mac misses one: dropped, and its phone gets `peer gone`.
        let mac2 = try h.parkMac(room)
        let phone2 = try h.joinPhone(room).id
        h.clock.advance(seconds: 30)
        h.tick()
        #expect(h.pings.filter { $0 == mac2 }.count == 1)
        h.core.pong(from: phone2)
        h.clock.advance(seconds: 30)
        h.tick()
        #expect(h.dropped.contains(mac2) && !h.dropped.contains(phone2))
        #expect(h.closes[phone2] == RelayClose(code: 1001, reason: "peer gone"))
        #expect(h.core.connectionCount == 0)
    }

    // MARK: - Shutdown

    @Test func shutdownClosesEverySocketWithServerShuttingDown() throws {
        let h = CoreHarness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        let phone = try h.joinPhone(room).id
        let pending = h.open(makeRoom())
        let lone = try h.parkMac(makeRoom())
        h.core.shutdown()
        h.drain()
        let shuttingDown = RelayClose(code: 1001, reason: "server shutting down")
        for id in [mac, phone, pending, lone] { #expect(h.closes[id] == shuttingDown, "connection \(id)") }
        #expect(h.core.connectionCount == 0 && h.core.activeRoomCount == 0)
        #expect(
            !h.history.contains { if case .close(_, let reason) = $0 { reason.reason == "peer gone" } else { false } })
    }

    // MARK: - ATTEST_REQUIRED

    @Test(arguments: [nil, "", "False", "FALSE", "0", "no", "off", " false", "false ", "true", "1"])
    func attestationIsRequiredUnlessExactlyFalse(value: String?) {
        #expect(RelayConfiguration.attestationRequired(setting: value))
    }

    @Test func exactlyFalseTurnsAttestationOff() {
        #expect(RelayConfiguration.attestationRequired(setting: "false") == false)
    }
}
