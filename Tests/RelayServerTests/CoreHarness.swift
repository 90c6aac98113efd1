import AppAttest
import Foundation
import HerdrCrypto
import PeerGateListener
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport
import Testing

/// The origin every test relay believes it is.
let testOrigin = "https://relay.test"

/// A fresh random room name (64 lowercase hex).
func makeRoom() -> String { Hex.encode(SecureRandom.bytes(32)) }

func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }

/// The throwaway App Attest PKI of every attestation-required harness (openssl makes it once).
let attestFixture: AppAttestFixture = try! AppAttestFixture()

/// The policy a test relay under attestation has: the fixture's app id and root, production.
let testAppAttestPolicy = AppAttestPolicy(
    appID: AppAttestFixture.appID, environment: .production, root: try! X509Certificate(pem: attestFixture.rootPEM))

/// The lines a core logged.
final class LogLines {
    var lines: [String] = []
    func append(_ line: String) { lines.append(line) }
}

/// An HTTP answer decoded: status and JSON body.
struct HTTPAnswer {
    let status: Int
    let json: [String: Any]
    let response: HTTPResponse

    /// The JSON body's `error`, or the plain-text body of the relay's own refusals.
    var error: String? {
        json["error"] as? String ?? (json.isEmpty ? String(decoding: response.body, as: UTF8.self) : nil)
    }
    /// Whether the body is plain text (the gate's, rate limits', 501s), as upstream sends them.
    var isPlainText: Bool { response.contentType == "text/plain" }
    var ok: Bool { json["ok"] as? Bool == true }
    func bytes(_ field: String) -> [UInt8]? { RelayJSON.bytes(json[field]) }
}

/// A `RelayCore` driven by hand: a manual clock, a memory store, and every action it asks for
/// recorded per connection (texts sent, close, drop, pings).
final class CoreHarness {
    let clock: ManualRelayClock
    /// What the core logged (refusal reasons the client does not see).
    let logLines = LogLines()
    var logged: [String] { logLines.lines }
    let store: any RelayStore
    let core: RelayCore
    var texts: [ConnectionID: [String]] = [:]
    var closes: [ConnectionID: RelayClose] = [:]
    var dropped: Set<ConnectionID> = []
    var pings: [ConnectionID] = []
    var admittedLimits: [ConnectionID: Int] = [:]
    /// Every action in order, since the harness was made.
    var history: [RelayAction] = []

    init(
        attestationRequired: Bool = false, store: any RelayStore = MemoryRelayStore(),
        configure: (inout RelayConfiguration) -> Void = { _ in }
    ) {
        var configuration = RelayConfiguration(origin: testOrigin, attestationRequired: attestationRequired)
        configuration.appAttest = testAppAttestPolicy
        configure(&configuration)
        self.store = store
        // Under attestation the wall clock starts an hour ahead of real time: a certificate the
        // fixture makes during the test is valid from the second it is made (for a day).
        clock =
            attestationRequired
            ? ManualRelayClock(unixSeconds: Int64(Date().timeIntervalSince1970) + 3600) : ManualRelayClock()
        let lines = logLines
        core = RelayCore(
            configuration: configuration, store: store, clock: clock, log: { _, line in lines.append(line) })
    }

    /// Drains the core's actions into the records; returns them.
    @discardableResult
    func drain() -> [RelayAction] {
        let actions = core.takeActions()
        history += actions
        for action in actions {
            switch action {
            case .sendText(let id, let text): texts[id, default: []].append(text)
            case .admitted(let id, let limit): admittedLimits[id] = limit
            case .close(let id, let reason):
                #expect(closes[id] == nil, "connection \(id) closed twice")
                closes[id] = reason
            case .drop(let id): dropped.insert(id)
            case .ping(let id): pings.append(id)
            }
        }
        return actions
    }

    // MARK: - Sockets

    static func upgradeHead(room: String?, extra: [(name: String, value: String)] = []) -> HTTPRequestHead {
        var headers: [(name: String, value: String)] = [
            ("Host", "relay.test"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="), ("Sec-WebSocket-Version", "13"),
            ("User-Agent", RelayLimits.userAgent),
        ]
        if let room { headers.append((RelayLimits.roomHeader, room)) }
        return HTTPRequestHead(method: "GET", target: "/", version: "HTTP/1.1", headers: headers + extra)
    }

    /// `checkUpgrade` for a well-formed upgrade to `room`.
    func checkUpgrade(room: String, address: String = "198.51.100.7") -> HTTPResponse? {
        core.checkUpgrade(Self.upgradeHead(room: room), address: address)
    }

    /// A socket upgraded into `room` (without the upgrade checks).
    func open(_ room: String, address: String = "198.51.100.7") -> ConnectionID {
        let id = core.open(room: room, address: address)
        drain()
        return id
    }

    func text(_ text: String, from id: ConnectionID) {
        core.text(text, from: id)
        drain()
    }

    /// A data message's first (or only) frame of `count` bytes; where it goes.
    func binary(_ count: Int, from id: ConnectionID) -> ConnectionID? {
        let target = core.frame(byteCount: count, startsMessage: true, from: id)
        drain()
        return target
    }

    /// A continuation frame of the message `id` is sending; where it goes.
    func continuation(_ count: Int, from id: ConnectionID) -> ConnectionID? {
        let target = core.frame(byteCount: count, startsMessage: false, from: id)
        drain()
        return target
    }

    func closed(_ id: ConnectionID) {
        core.closed(id)
        drain()
    }

    func tick() {
        core.tick()
        drain()
    }

    func lastText(_ id: ConnectionID) -> String? { texts[id]?.last }

    /// Sends Hello; returns the Challenge's nonce (nil if none came).
    @discardableResult
    func hello(_ id: ConnectionID, _ role: RelayRole, nonDisplacing: Bool = false) -> [UInt8]? {
        text(RelayHello(role: role, nonDisplacing: nonDisplacing).json, from: id)
        guard let last = lastText(id) else { return nil }
        return RelayChallenge.parse(last)?.nonce
    }

    /// Sends a Proof; returns the Result (nil if none came).
    @discardableResult
    func proof(_ id: ConnectionID, _ proof: RelayProof) -> RelayResult? {
        let before = texts[id]?.count ?? 0
        text(proof.json, from: id)
        guard let sent = texts[id], sent.count > before, let last = sent.last else { return nil }
        return RelayResult.parse(last)
    }

    /// Opens a socket and runs admission with `proof`; returns the id and the Result.
    func join(
        _ room: String, _ role: RelayRole, proof: RelayProof = .empty, nonDisplacing: Bool = false,
        address: String = "198.51.100.7"
    ) -> (id: ConnectionID, result: RelayResult?) {
        let id = open(room, address: address)
        hello(id, role, nonDisplacing: nonDisplacing)
        return (id, self.proof(id, proof))
    }

    /// A signed join with `key` (the signature made by `sign`, which may tamper with the inputs).
    func signedJoin(
        _ room: String, _ role: RelayRole, key: RelayJoinKey, nonDisplacing: Bool = false,
        sign: ((RelayJoinKey, [UInt8]) throws -> [UInt8])? = nil
    ) throws -> (id: ConnectionID, result: RelayResult?) {
        let id = open(room)
        let nonce = try #require(hello(id, role, nonDisplacing: nonDisplacing))
        let signature =
            try sign?(key, nonce) ?? key.signJoin(role: role, nonce: nonce, room: room, origin: testOrigin)
        return (id, proof(id, .signature(signature)))
    }

    /// A Mac parked in a pairing room (`{}`), checked.
    func parkMac(_ room: String) throws -> ConnectionID {
        let (id, result) = join(room, .computer)
        #expect(result == .admitted(registrationToken: nil))
        #expect(isLive(id))
        return id
    }

    /// A phone admitted to a pairing room in open mode; returns its id and registration token.
    func joinPhone(_ room: String, proof: RelayProof = .empty) throws -> (id: ConnectionID, token: [UInt8]) {
        let (id, result) = join(room, .device, proof: proof)
        guard case .admitted(let token?) = result else {
            throw HarnessError("phone not admitted: \(String(describing: result)), \(String(describing: closes[id]))")
        }
        return (id, token)
    }

    /// A room made established with `key`'s verifier, through a phone's registration token. The
    /// Mac and phone that made it are left connected; their ids are returned.
    func establish(_ room: String, key: RelayJoinKey) throws -> (mac: ConnectionID, phone: ConnectionID) {
        let mac = try parkMac(room)
        let (phone, token) = try joinPhone(room)
        let answer = post(
            "/register", room: room, json: ["registrationToken": base64(token), "verifier": base64(key.verifier.raw)])
        #expect(answer.status == 200 && answer.ok, "register: \(answer.json)")
        #expect(try store.room(named: room)?.verifier == key.verifier.raw)
        return (mac, phone)
    }

    /// True while the core knows the socket (no close or drop asked for).
    func isLive(_ id: ConnectionID) -> Bool { closes[id] == nil && !dropped.contains(id) }

    /// The refusal error of the last Result sent to `id`, if any.
    func refusal(_ id: ConnectionID) -> String? {
        guard let last = lastText(id), case .refused(let error)? = RelayResult.parse(last) else { return nil }
        return error
    }

    // MARK: - HTTP

    func request(
        _ method: String, _ path: String, room: String?, body: [UInt8] = [], address: String = "198.51.100.7",
        loopback: Bool = false, extra: [(name: String, value: String)] = []
    ) -> HTTPAnswer {
        var headers: [(name: String, value: String)] = [("Host", "relay.test"), ("User-Agent", RelayLimits.userAgent)]
        if let room { headers.append((RelayLimits.roomHeader, room)) }
        let head = HTTPRequestHead(method: method, target: path, version: "HTTP/1.1", headers: headers + extra)
        // As the shell does: the head's checks, then (the body read) the answer.
        let response =
            core.checkRequest(head, address: address)
            ?? core.respond(to: head, body: body, address: address, peerIsLoopback: loopback)
        drain()
        return HTTPAnswer(status: response.status, json: RelayJSON.object(response.body) ?? [:], response: response)
    }

    func post(_ path: String, room: String?, json: [String: String]? = nil, address: String = "198.51.100.7")
        -> HTTPAnswer
    {
        var body: [UInt8] = []
        if let json { body = (try? JSONSerialization.data(withJSONObject: json)).map { Array($0) } ?? [] }
        return request("POST", path, room: room, body: body, address: address)
    }

    /// A challenge from `/attest/challenge`.
    func challenge(_ room: String, address: String = "198.51.100.7") throws -> [UInt8] {
        let answer = post("/attest/challenge", room: room, address: address)
        #expect(answer.status == 200, "attest/challenge: \(answer.json)")
        let challenge = try #require(answer.bytes("challenge"))
        #expect(challenge.count == 32)
        return challenge
    }

    /// The phone's App Attest key (made on first use).
    lazy var device: AppAttestFixture.Device = try! attestFixture.makeDevice()
    /// The counter of the harness key's last assertion.
    var assertionCounter: UInt32 = 0

    /// The client data hash a phone attests or asserts over for `challenge` at this relay.
    func clientDataHash(_ challenge: [UInt8]) -> [UInt8] {
        RelayTranscript.attestClientDataHash(challenge: challenge, origin: testOrigin)
    }

    /// `/attest` with an attestation object by `device` (the harness's key) over a fresh challenge.
    func attest(
        _ room: String, _ attestation: AppAttestFixture.Attestation = .init(), by device: AppAttestFixture.Device? = nil
    ) throws -> HTTPAnswer {
        let challenge = try challenge(room)
        let object = try attestFixture.attestationObject(
            for: device ?? self.device, clientDataHash: clientDataHash(challenge), attestation)
        return post("/attest", room: room, json: ["challenge": base64(challenge), "attestationObject": base64(object)])
    }

    /// A ticket from `/attest` for the harness's key (attestation-required relays).
    func ticket(_ room: String) throws -> String {
        let answer = try attest(room)
        #expect(answer.status == 200, "attest: \(answer.json) \(logged)")
        return try #require(answer.json["ticket"] as? String)
    }

    /// `/register`'s `challenge` and `assertion`: a fresh challenge and an assertion over it by
    /// `device` (the harness's key) with the next counter, or `counter`.
    func assertionFields(_ room: String, counter: UInt32? = nil, by device: AppAttestFixture.Device? = nil) throws
        -> [String: String]
    {
        let challenge = try challenge(room)
        if counter == nil { assertionCounter += 1 }
        let assertion = try attestFixture.assertion(
            by: device ?? self.device, clientDataHash: clientDataHash(challenge), counter: counter ?? assertionCounter)
        return ["challenge": base64(challenge), "assertion": base64(assertion)]
    }

    /// Advances both clocks by a whole quota window (24 hours).
    func advancePastQuotaWindow() {
        clock.advance(seconds: 86_400)
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

func makeKey() throws -> RelayJoinKey { try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret()) }
