import Foundation
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport
import Testing

/// The real `RelayServer` (epoll shell + core) against an independent client: Python's
/// `websockets` and urllib, each scenario one peer process (`RelayPeerScript.swift`). Serialized:
/// each test starts its own relay, and the machine is small.
@Suite(.serialized) struct WebSocketPeerTests {
    /// Runs a scenario against `fixture`, requiring a clean exit.
    func run(
        _ scenario: String, on fixture: RelayFixture, room: String = makeRoom(), roomSecret: [UInt8]? = nil,
        environment: [String: String] = [:],
        onAsk: ([String: Any]) throws -> [String: Any] = PythonPeer.signer
    ) throws -> PeerReport {
        let report = try PythonPeer.run(
            scenario, port: fixture.port, room: room, roomSecret: roomSecret, environment: environment, onAsk: onAsk)
        #expect(report.status == 0, "\(scenario): \(report)")
        return report
    }

    @Test func parkJoinSpliceFramesAndPeerGone() throws {
        let fixture = try RelayFixture()
        let report = try run("splice", on: fixture)
        #expect(report["mac.result"] == "ok", "\(report)")
        #expect(report["phone.result"] == "ok token=24")
        #expect(report["phone.got"] == "to phone")
        #expect(report["mac.got"] == "to mac")
        #expect(report["phone.256KiB"] == "true", "a 256 KiB frame (the limit) is spliced")
        #expect(report["mac.256KiB"] == "true")
        #expect(report["phone.fragmented"] == "frag-one|frag-two|frag-three", "a fragmented message arrives as one")
        #expect(report["mac.fragmented256KiB"] == "262144")
        #expect(report["phone.text"] == "text after admission, \u{e9}\u{20ac}\u{1d11e}", "text is spliced, as text")
        #expect(report["mac.fragmentedText"] == "fr\u{e9}\u{20ac}|\u{1d11e}")
        #expect(report["phone.bigText"] == "true", "a 256 KiB text message (the limit) is spliced")
        #expect(report["mac.pong"] == "true" && report["phone.pong"] == "true")
        #expect(report["phone.oversizeText"] == "1009 frame too large", "text counts toward the size limit")
        #expect(report["mac.afterPhoneClosedByRelay"] == "1001 peer gone")
        #expect(report["mac.afterPhoneLeft"] == "1001 peer gone", "a phone leaving takes the parked Mac")
        #expect(report["phone2.result"] == "ok token=24")
        #expect(report["phone2.displaced"] == "1000 displaced")
        #expect(report["mac.afterDisplacement"] == "true", "a displacing phone leaves the Mac")
        #expect(report["mac.fromPhone3"] == "still spliced")
        #expect(report["phone3.afterMacLeft"] == "1001 peer gone")
    }

    /// A pong (or any frame of the relay's own) for a socket that a spliced frame is half-way to
    /// waits for that frame's end: inside it, it corrupted the frame and broke the stream (found
    /// as a 128 KiB frame with a pong's two bytes in it, RelayConnectionTests over TLS).
    @Test func aPongWaitsForTheFrameHalfWayToItsSocket() throws {
        let fixture = try RelayFixture()
        let report = try run("pongmidframe", on: fixture)
        #expect(report["mac.afterPing"] == "after the ping", "\(report)")
        #expect(report["phone.frameWhole"] == "true", "the frame arrived whole, no pong inside it")
        #expect(report["phone.pong"] == "true", "the pong came after the frame")
        #expect(report["phone.next"] == "and the stream goes on")
    }

    /// Upstream's open mode admits into a pairing room whatever the Proof carries.
    @Test func openModeAdmitsAnyProofAsTheClientSeesIt() throws {
        let fixture = try RelayFixture()
        let report = try run("openproof", on: fixture)
        #expect(report["mac.ticket"] == "ok", "\(report)")
        #expect(report["phone.sig"] == "ok token=24")
        #expect(report["mac.got"] == "hello over a signature nobody checked")
    }

    /// The request gate before method and path, and the plain-text refusals, over real HTTP.
    @Test func theRequestGateAsTheClientSeesIt() throws {
        let fixture = try RelayFixture()
        let report = try run("gate", on: fixture)
        #expect(report["getRoot.badRoom"] == "400 bad room (plain)", "\(report)")
        #expect(report["getRoot.noRoom"] == "400 bad room (plain)")
        #expect(report["getRoot.goodRoom"] == "501 not implemented (plain)")
        #expect(report["getRegister.goodRoom"] == "501 not implemented (plain)")
        #expect(report["postRoot.origin"] == "403 forbidden (plain)")
        #expect(report["register.noJson"] == "400 bad json")
        #expect(report["healthz.noRoom"] == "200 ok")
    }

    @Test func preAdmissionFramesAreCappedAt8KiB() throws {
        let fixture = try RelayFixture()
        let report = try run("preauth", on: fixture)
        #expect(report["hello8192"] == "true", "\(report)")
        #expect(report["proof8192"] == "ok")
        #expect(report["admitted9000.pong"] == "true", "after admission the limit is 256 KiB")
        #expect(report["hello8193"] == "1009 frame too large")
        #expect(report["proof8193"] == "1009 frame too large")
        #expect(report["binary8193"] == "1009 frame too large")
        #expect(report["binaryEarly"] == "0 frames, 1008 bad hello", "a binary frame for a Hello: no Result")
    }

    @Test func displacedAndSlotOccupiedAsTheClientSeesThem() throws {
        let fixture = try RelayFixture()
        let report = try run("displace", on: fixture)
        #expect(report["mac2.result"] == "ok", "\(report)")
        #expect(report["mac1"] == "1000 displaced")
        #expect(report["mac3.result"] == "refused slot occupied")
        #expect(report["mac3"] == "1008 slot occupied")
        #expect(report["mac2.byMac4"] == "1000 displaced")
        #expect(report["phone.got"] == "spliced to the newest mac")
    }

    @Test func badHelloAsTheClientSeesIt() throws {
        let fixture = try RelayFixture()
        let report = try run("badhello", on: fixture)
        for name in ["notJson", "v2", "vTrue", "tablet", "array", "number"] {
            #expect(report[name] == "0 frames, 1008 bad hello", "\(name): \(report)")
        }
        #expect(report["nonDisplacingYes"] == "true")
    }

    /// Signed joins made by Python (`cryptography`: an independent HKDF, transcript and Ed25519)
    /// or, without it, by Swift on request; both paths run when Python has `cryptography`.
    @Test(arguments: ["python", "swift"])
    func establishedRoomSignaturesAsTheClientSeesThem(signer: String) throws {
        if signer == "python" && !PythonPeer.hasCryptography { return }
        let fixture = try RelayFixture()
        let secret = RelayJoinKey.makeRoomSecret()
        let report = try run(
            "established", on: fixture, roomSecret: secret,
            environment: signer == "swift" ? ["PEER_NO_CRYPTOGRAPHY": "1"] : [:])
        #expect(report["signer"] == signer, "\(report)")
        #expect(report["verifier"] == base64(try RelayJoinKey(roomSecret: secret).verifier.raw))
        #expect(report["establish.register"] == "200 ok")
        #expect(report["signedMac.result"] == "ok")
        #expect(report["mac"] == "1000 displaced")
        #expect(report["signedPhone.result"] == "ok token=24")
        #expect(report["phone"] == "1000 displaced")
        #expect(report["register2"] == "403 already registered")
        #expect(report["unsigned.result"] == "refused signature required")
        #expect(report["unsigned"] == "1008 signature required")
        for name in ["zeroSig", "otherRoom", "otherOrigin"] {
            #expect(report["\(name).result"] == "refused bad signature", "\(name)")
            #expect(report[name] == "1008 bad signature", "\(name)")
        }
        #expect(report["phone.stillThere"] == "true")
        #expect(report["phone.got"] == "signed splice")
    }

    @Test func dailyQuotaAsTheClientSeesIt() throws {
        let fixture = try RelayFixture { $0.bytesPerDay = 100_000 }
        let report = try run("quota", on: fixture, roomSecret: RelayJoinKey.makeRoomSecret())
        #expect(report["establish.register"] == "200 ok", "\(report)")
        #expect(report["phone.got"] == "60000")
        #expect(report["mac.got"] == "40000")
        #expect(report["phone"] == "1008 daily quota exceeded")
        #expect(report["mac"] == "1008 daily quota exceeded")
        #expect(report["again.result"] == "ok", "admitted, as upstream")
        #expect(report["again"] == "1008 daily quota exceeded", "and closed at its first frame")
    }

    @Test func serverShutdownAsTheClientSeesIt() throws {
        let fixture = try RelayFixture()
        let report = try run("shutdown", on: fixture) { ask in
            guard ask["shutdown"] as? Bool == true else { throw FixtureError("unexpected ask \(ask)") }
            fixture.server.shutdown()
            return [:]
        }
        #expect(report["mac"] == "1001 server shutting down", "\(report)")
        #expect(report["phone"] == "1001 server shutting down")
        #expect(report["pending"] == "1001 server shutting down")
    }

    // MARK: - Attacks against the real server

    @Test func attackFifthPreAuthSocket() throws {
        let fixture = try RelayFixture()
        let report = try run("fifth", on: fixture)
        #expect(report["first"] == "1008 too many pending", "\(report)")
        for index in 2...5 { #expect(report["socket\(index).challenge"] == "true", "socket \(index)") }
    }

    @Test func attackOverSizeFrame() throws {
        let fixture = try RelayFixture()
        let report = try run("oversize", on: fixture)
        #expect(report["mac"] == "1009 frame too large", "\(report)")
        #expect(report["phone"] == "1001 peer gone", "the Mac's phone loses its peer")
    }

    @Test func attackBrowserOrigin() throws {
        let fixture = try RelayFixture()
        let report = try run("origin", on: fixture)
        #expect(report["originUpgrade"] == "403 forbidden (plain)", "\(report)")
        #expect(report["goodUpgrade"] == "101")
        #expect(report["originPost"] == "403 forbidden (plain)")
        for name in ["badRoom.63", "badRoom.upper", "badRoom.two", "badRoom.none", "badRoom.post"] {
            #expect(report[name] == "400 bad room (plain)", "\(name)")
        }
        #expect(report["attest"] == "400 attestation disabled")
    }

    // MARK: - Restart with state

    @Test func anEstablishedRoomSurvivesARestart() throws {
        let directory = try TemporaryDirectory(prefix: "relay-restart-")
        let database = directory.file("relay.db").path
        let room = makeRoom()
        let secret = RelayJoinKey.makeRoomSecret()
        do {
            let fixture = try RelayFixture(databasePath: database)
            let report = try run("establish", on: fixture, room: room, roomSecret: secret)
            #expect(report["establish.register"] == "200 ok", "\(report)")
            #expect(report["phone.got"] == "before restart")
            fixture.server.shutdown()
        }
        let fixture = try RelayFixture(databasePath: database)
        let report = try run("rejoin", on: fixture, room: room, roomSecret: secret)
        #expect(report["unsignedMac.result"] == "refused signature required", "\(report)")
        #expect(report["unsignedMac"] == "1008 signature required")
        #expect(report["mac.result"] == "ok")
        #expect(report["phone.result"] == "ok token=24")
        #expect(report["unsignedPhone.result"] == "refused signature required")
        #expect(report["unsignedPhone"] == "1008 signature required")
        #expect(report["phone.got"] == "after restart")
        #expect(report["mac.got"] == "and back")
        #expect(report["register"] == "403 already registered")
    }
}
