import Foundation
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport
import Testing

/// The core on a real Redis that goes away and comes back: new admissions and HTTP calls are
/// refused with `store unavailable`, splices already running go on, an established room is never
/// mistaken for a pairing room, and everything works again once Redis answers.
@Suite struct StoreOutageTests {
    private func harness(_ server: RedisServer) throws -> CoreHarness {
        CoreHarness(store: try RedisRelayStore(address: RedisAddress(url: server.url()), retryMilliseconds: 0))
    }

    /// Ticks until the core finds its store again (the store reconnects on a thread of its own),
    /// at most 10 s.
    private func waitForRecovery(_ harness: CoreHarness) throws {
        for _ in 0..<1000 {
            if harness.core.checkStore() == nil { return }
            usleep(10_000)
        }
        throw FixtureError("the core did not find its store again: \(harness.core.storeOutage ?? "")")
    }

    @Test func admissionsAndRequestsAreRefusedUntilRedisIsBack() throws {
        let server = try RedisServer(appendOnly: true)
        let harness = try harness(server)
        let room = makeRoom()
        let key = try makeKey()
        let (mac, phone) = try harness.establish(room, key: key)
        harness.closed(phone)
        harness.closed(mac)
        #expect(harness.core.activeRoomCount == 0)

        server.stop()
        // The room comes into memory unread: a Mac offering no signature is not let in as if the
        // room were a pairing room; it is told the store is unavailable.
        let (blind, result) = harness.join(room, .computer)
        #expect(result == nil)
        #expect(harness.closes[blind] == .storeUnavailable)
        #expect(harness.core.storeOutage?.contains("Redis at unix://\(server.socketPath)") == true)
        // Now known to be down: upgrades and requests are refused before any work.
        #expect(harness.checkUpgrade(room: room)?.status == 503)
        #expect(
            harness.checkUpgrade(room: room).map { String(decoding: $0.body, as: UTF8.self) } == "store unavailable")
        let challenge = harness.post("/attest/challenge", room: room)
        #expect(challenge.status == 503 && challenge.error == "store unavailable")
        #expect(harness.request("GET", "/healthz", room: nil).status == 503)
        let metrics = harness.request("GET", "/metrics", room: nil, loopback: true)
        #expect(String(decoding: metrics.response.body, as: UTF8.self).contains("relay_store_up 0\n"))

        try server.start()
        try waitForRecovery(harness)
        #expect(harness.checkUpgrade(room: room) == nil)
        #expect(harness.request("GET", "/healthz", room: nil).status == 200)
        // The verifier outlived the restart (append-only file): a join must be signed.
        let (unsigned, refused) = harness.join(room, .computer)
        #expect(refused == .refused(AdmissionError.signatureRequired.rawValue))
        #expect(!harness.isLive(unsigned))
        let (signed, admitted) = try harness.signedJoin(room, .computer, key: key)
        #expect(admitted == .admitted(registrationToken: nil))
        #expect(harness.isLive(signed))
        let back = harness.request("GET", "/metrics", room: nil, loopback: true)
        #expect(String(decoding: back.response.body, as: UTF8.self).contains("relay_store_up 1\n"))
    }

    @Test func splicesGoOnThroughAnOutage() throws {
        let server = try RedisServer()
        let harness = try harness(server)
        let room = makeRoom()
        let (mac, phone) = try harness.establish(room, key: try makeKey())
        server.stop()
        #expect(harness.request("GET", "/healthz", room: nil).status == 503)
        for _ in 0..<20 {
            #expect(harness.binary(1000, from: mac) == phone)
            #expect(harness.binary(10, from: phone) == mac)
        }
        harness.tick()
        #expect(harness.isLive(mac) && harness.isLive(phone))
    }

    /// A registration during the outage is refused as unavailable, not as a bad token, and the
    /// same token registers once Redis is back.
    @Test func registrationWaitsOutTheOutage() throws {
        let server = try RedisServer(appendOnly: true)
        let harness = try harness(server)
        let room = makeRoom()
        _ = try harness.parkMac(room)
        let (_, token) = try harness.joinPhone(room)
        let key = try makeKey()
        let body = ["registrationToken": base64(token), "verifier": base64(key.verifier.raw)]
        server.stop()
        let refused = harness.post("/register", room: room, json: body)
        #expect(refused.status == 503 && refused.error == "store unavailable", "\(refused.json)")
        try server.start()
        try waitForRecovery(harness)
        let accepted = harness.post("/register", room: room, json: body)
        #expect(accepted.status == 200 && accepted.ok, "\(accepted.json)")
        #expect(try harness.store.room(named: room)?.verifier == key.verifier.raw)
    }
}
