import Foundation
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// A real herdr-relay with attestation on, trusting a throwaway App Attest root made by openssl:
/// a phone with an attested key pairs (challenge, attest, ticketed join, register with an
/// assertion) and nothing else does.
@Suite(.serialized) struct AttestedPairingTests {
    static let origin = "https://relay.test"
    static let fixture: AppAttestFixture = try! AppAttestFixture()

    let relay: RelayProcess
    let endpoint: RelayEndpoint
    var http: RelayHTTPClient { RelayHTTPClient(endpoint: endpoint, timeout: 10) }

    init() throws {
        relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:", "--log"],
            environment: [
                "ATTEST_REQUIRED": "true", "APP_ID": AppAttestFixture.appID, "APPATTEST_ROOT_PEM": Self.fixture.rootPEM,
            ])
        endpoint = try RelayEndpoint(parsing: Self.origin).connecting(toHost: "127.0.0.1", port: relay.port, tls: false)
    }

    static func options() -> RelayConnection.Options {
        var options = RelayConnection.Options()
        options.connectTimeout = 5
        options.admissionTimeout = 5
        return options
    }

    func clientDataHash(_ challenge: [UInt8]) -> [UInt8] {
        RelayTranscript.attestClientDataHash(challenge: challenge, origin: Self.origin)
    }

    /// POSTs `fields` as JSON; the status and the `error` or `ticket`.
    func post(_ path: String, room: String, _ fields: [String: String]) throws -> (Int, [String: Any]) {
        let body = try JSONSerialization.data(withJSONObject: fields)
        let response = try http.post(path, room: room, body: Array(body))
        let json = (try? JSONSerialization.jsonObject(with: Data(response.body))) as? [String: Any] ?? [:]
        return (response.status, json)
    }

    func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

    @Test("an attested phone pairs: challenge, attest, ticketed join, register with an assertion, established")
    func anAttestedPhonePairs() throws {
        let room = Hex.encode(SecureRandom.bytes(32))
        let mac = try RelayConnection.connect(
            to: endpoint, room: room, role: .computer, credential: .none, options: Self.options())
        defer { mac.close() }
        // Without a ticket the phone is refused, as the relay's probe reports it.
        #expect(throws: ConnectionError.self) {
            let phone = try RelayConnection.connect(
                to: endpoint, room: room, role: .device, credential: .none, options: Self.options())
            phone.close()
        }
        let device = try Self.fixture.makeDevice()
        let challenge = try http.attestChallenge(room: room)
        let object = try Self.fixture.attestationObject(for: device, clientDataHash: clientDataHash(challenge))
        let (status, answer) = try post(
            "/attest", room: room, ["challenge": base64(challenge), "attestationObject": base64(object)])
        #expect(status == 200, "\(answer) \(relay.stderrText())")
        let ticket = try #require(answer["ticket"] as? String)
        #expect(Data(base64Encoded: ticket)?.count == 24)

        let phone = try RelayConnection.connect(
            to: endpoint, room: room, role: .device, credential: .ticket(ticket), options: Self.options())
        defer { phone.close() }
        let token = try #require(phone.registrationToken)
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        // Without an assertion the token is not enough.
        var (registered, refusal) = try post(
            "/register", room: room, ["registrationToken": base64(token), "verifier": base64(key.verifier.raw)])
        #expect(registered == 403 && refusal["error"] as? String == "assertion required")
        let assertChallenge = try http.attestChallenge(room: room)
        let assertion = try Self.fixture.assertion(
            by: device, clientDataHash: clientDataHash(assertChallenge), counter: 1)
        (registered, refusal) = try post(
            "/register", room: room,
            [
                "registrationToken": base64(token), "verifier": base64(key.verifier.raw),
                "challenge": base64(assertChallenge), "assertion": base64(assertion),
            ])
        #expect(registered == 200, "\(refusal)")
        #expect(try http.roomIsEstablished(room: room, verifier: key.verifier))
        // The ticket was single use.
        #expect(throws: ConnectionError.self) {
            let again = try RelayConnection.connect(
                to: endpoint, room: room, role: .device, credential: .ticket(ticket), options: Self.options())
            again.close()
        }
        #expect(
            relay.stderrText().contains(
                "attestation required (App Attest: \(AppAttestFixture.appID), production, root SHA256:"))
    }

    @Test("evidence from a key Apple's production environment did not make, or for another relay, is refused")
    func refusedEvidenceNamesItsReasonOnlyInTheLog() throws {
        let room = Hex.encode(SecureRandom.bytes(32))
        let device = try Self.fixture.makeDevice()
        var development = AppAttestFixture.Attestation()
        development.aaguid = Array("appattestdevelop".utf8)
        var challenge = try http.attestChallenge(room: room)
        var object = try Self.fixture.attestationObject(
            for: device, clientDataHash: clientDataHash(challenge), development)
        var (status, answer) = try post(
            "/attest", room: room, ["challenge": base64(challenge), "attestationObject": base64(object)])
        #expect(status == 403 && answer["error"] as? String == "attestation rejected")
        // Bound to another relay's origin: the cross-relay forwarding defence.
        challenge = try http.attestChallenge(room: room)
        object = try Self.fixture.attestationObject(
            for: device,
            clientDataHash: RelayTranscript.attestClientDataHash(challenge: challenge, origin: "https://evil.example"))
        (status, answer) = try post(
            "/attest", room: room, ["challenge": base64(challenge), "attestationObject": base64(object)])
        #expect(status == 403 && answer["error"] as? String == "attestation rejected")
        // The challenge is used up by the attempt.
        object = try Self.fixture.attestationObject(for: device, clientDataHash: clientDataHash(challenge))
        (status, answer) = try post(
            "/attest", room: room, ["challenge": base64(challenge), "attestationObject": base64(object)])
        #expect(status == 403 && answer["error"] as? String == "bad challenge")
        let log = relay.stderrText()
        #expect(log.contains("attestation refused: AAGUID/environment mismatch"), "\(log)")
        #expect(log.contains("attestation refused: nonce mismatch"), "\(log)")
    }
}
