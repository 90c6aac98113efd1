import AppAttest
import Foundation
import HerdrCrypto
import PeerGateListener
import RelayProtocol
import RelayStorage
import WebClient

extension RelayCore {
    /// The operator's endpoints, ours and upstream's `/metrics`: they carry no room and skip the
    /// client request gate. `/status` is answered by the shell (it owns the listener).
    public static let operatorPaths: Set<String> = ["/healthz", "/metrics", StatusEndpoint.path]

    /// True when a request reached the relay from this machine directly: a loopback peer and no
    /// header a reverse proxy adds, so a proxy on the same machine cannot expose local endpoints.
    public static func isLocal(_ head: HTTPRequestHead, peerIsLoopback: Bool) -> Bool {
        peerIsLoopback
            && ["x-forwarded-for", "cf-connecting-ip", "forwarded"].allSatisfy { head.values(named: $0).isEmpty }
    }

    /// The checks on a (non-upgrade) request's head, in upstream's order, before its body is read:
    /// the request gate (`gate`), the per-address `/attest*` rate (429), the relay's capacity for a
    /// new room (503). Operator endpoints skip them, and so do the web client's files once past
    /// the `Origin` check. Nil: read the body, then `respond`.
    public func checkRequest(_ head: HTTPRequestHead, address: String) -> HTTPResponse? {
        let path = String(head.path)
        if Self.operatorPaths.contains(path) { return nil }
        let name: String
        switch gate(head) {
        case .refused(let refusal): return refuseHTTP(refusal)
        case .webClientFile: return nil
        case .room(let room): name = room
        }
        if path.hasPrefix("/attest") {
            var usage = addresses[address] ?? AddressUsage()
            defer { addresses[address] = usage }
            guard
                usage.attestRequests.admit(
                    at: clock.milliseconds, limit: configuration.attestRequestsPerMinute, length: 60_000)
            else { return refuseHTTP(RelayHTTP.plain(429, "rate limited")) }
        }
        if rooms[name] == nil, rooms.count >= configuration.maximumRooms {
            return refuseHTTP(RelayHTTP.plain(503, "capacity"))
        }
        return nil
    }

    /// Answers a request whose head passed `checkRequest`: the POST endpoints of interop-facts §5,
    /// `/healthz` and `/metrics` (local peers only), the web client's files (with `--web-client`);
    /// anything else is 501. A body over `configuration.httpBodySize` is 413 (the shell refuses it
    /// from its Content-Length first).
    public func respond(to head: HTTPRequestHead, body: [UInt8], address: String, peerIsLoopback: Bool) -> HTTPResponse
    {
        let response =
            body.count > configuration.httpBodySize
            ? RelayHTTP.plain(413, "payload too large")
            : route(head, body: body, local: Self.isLocal(head, peerIsLoopback: peerIsLoopback))
        metrics.httpResponses[response.status, default: 0] += 1
        return response
    }

    private func route(_ head: HTTPRequestHead, body: [UInt8], local: Bool) -> HTTPResponse {
        let path = String(head.path)
        if !Self.operatorPaths.contains(path), let webClient = configuration.webClient {
            switch gate(head) {
            case .refused(let refusal): return refusal
            case .webClientFile: return webClient.response(to: head)
            case .room: break
            }
        }
        switch (head.method, path) {
        case (_, "/healthz"):
            guard head.method == "GET" || head.method == "HEAD" else { return methodNotAllowed("GET, HEAD") }
            // A node that cannot reach its store cannot admit anyone: a balancer should skip it.
            return checkStore() == nil ? RelayHTTP.ok() : RelayHTTP.plain(503, "store unavailable")
        case (_, "/metrics"):
            guard local else { return RelayHTTP.plain(403, "forbidden") }
            guard head.method == "GET" else { return methodNotAllowed("GET") }
            let stored = try? store.roomCount()
            return HTTPResponse(
                status: 200, reason: "OK", contentType: "text/plain; version=0.0.4",
                body: Array(
                    metrics.render(
                        openConnections: connections.count, activeRooms: rooms.count,
                        splicedRooms: rooms.values.count { $0.mac?.isAdmitted == true && $0.phone?.isAdmitted == true },
                        leasedRooms: leasedRoomCount, storedRooms: stored,
                        storeUp: storeOutage == nil
                    )
                    .utf8))
        case ("POST", "/attest/challenge"), ("POST", "/attest"), ("POST", "/register"), ("POST", "/delete"):
            // The gate passed, so there is exactly one well-formed room (a header, or a browser's query).
            guard let room = roomName(in: head) else { return RelayHTTP.plain(400, "bad room") }
            if storeOutage != nil, checkStore() != nil { return RelayHTTP.plain(503, "store unavailable") }
            do {
                // The node holding the room's sockets is the one to change it.
                if store.isShared, try store.leaseHolder(room: room, node: nodeID) != nil {
                    return RelayHTTP.error(421, "reshard")
                }
                let response: HTTPResponse
                switch path {
                case "/attest/challenge": response = try attestChallenge(room: room)
                case "/attest": response = try attest(room: room, body: body)
                case "/register": response = try register(room: room, body: body)
                default: response = try delete(room: room, body: body)
                }
                return response
            } catch {
                if error.isUnavailable {
                    noteStoreOutage(error)
                    return RelayHTTP.plain(503, "store unavailable")
                }
                log(.failure, "store error on \(path): \(error)")
                return RelayHTTP.plain(500, "internal error")
            }
        default:
            // Upstream answers every other method and path alike, so a client sees no 405.
            return RelayHTTP.plain(501, "not implemented")
        }
    }

    private func methodNotAllowed(_ allow: String) -> HTTPResponse {
        var response = RelayHTTP.plain(405, "method not allowed")
        response.extraHeaders = ["Allow: \(allow)"]
        return response
    }

    /// A request body's JSON object as upstream destructures it: not JSON is 400 `bad json`; the
    /// JSON `null` fails upstream's handler (500 `internal error`); any other value has no fields.
    private func bodyObject(_ body: [UInt8]) -> Result<[String: Any], HTTPBodyRefusal> {
        switch RelayJSON.value(body) {
        case .invalid: .failure(HTTPBodyRefusal(response: RelayHTTP.error(400, "bad json")))
        case .null: .failure(HTTPBodyRefusal(response: RelayHTTP.plain(500, "internal error")))
        case .other: .success([:])
        case .object(let object): .success(object)
        }
    }

    /// `/attest/challenge`: a fresh 32-byte challenge, at most 16 outstanding per room.
    private func attestChallenge(room: String) throws(RelayStoreError) -> HTTPResponse {
        let now = clock.unixSeconds
        guard try store.countSecrets(.challenge, room: room, now: now) < configuration.outstandingChallenges else {
            return RelayHTTP.error(429, "too many outstanding challenges")
        }
        let challenge = random(RelayLimits.nonceSize)
        try store.addSecret(
            .challenge, digest: SHA256.hash(challenge), room: room, expires: now + configuration.secretLifetime,
            attachment: [], now: now)
        return RelayHTTP.ok([("challenge", Data(challenge).base64EncodedString())])
    }

    /// `/attest`: 400 `attestation disabled` in open mode, as upstream; otherwise the verifier
    /// decides and a ticket bound to the attested key and this room is issued.
    private func attest(room: String, body: [UInt8]) throws(RelayStoreError) -> HTTPResponse {
        guard configuration.attestationRequired else { return RelayHTTP.error(400, "attestation disabled") }
        let object: [String: Any]
        switch bodyObject(body) {
        case .failure(let refusal): return refusal.response
        case .success(let value): object = value
        }
        guard let challengeText = object["challenge"] as? String,
            let objectText = object["attestationObject"] as? String
        else { return RelayHTTP.error(400, "missing fields") }
        let now = clock.unixSeconds
        guard let challenge = RelayJSON.bytes(challengeText),
            try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: room, now: now) != nil
        else { return RelayHTTP.error(403, "bad challenge") }
        let clientDataHash = RelayTranscript.attestClientDataHash(challenge: challenge, origin: configuration.origin)
        guard let attestationObject = RelayJSON.bytes(objectText) else {
            return RelayHTTP.error(403, "attestation rejected")
        }
        let key: AttestedKey
        do {
            key = try attestation.verifyAttestation(attestationObject, clientDataHash: clientDataHash, now: now)
        } catch {
            // The reason is the operator's: the phone can do nothing with it, as upstream.
            log(.event, "attestation refused: \(error.message)")
            return RelayHTTP.error(403, "attestation rejected")
        }
        let ticket = random(RelayLimits.tokenSize)
        try store.addSecret(
            .ticket, digest: SHA256.hash(ticket), room: room, expires: now + configuration.secretLifetime,
            attachment: key.attachment, now: now)
        return RelayHTTP.ok([("ticket", Data(ticket).base64EncodedString())])
    }

    /// `/register`: the room's first verifier, only with the registration token minted at phone
    /// admission (and, under attestation, an assertion by the key that attested). Upstream's
    /// refusals in upstream's order; then ours: a verifier that is no Ed25519 public key would
    /// leave the room unjoinable for good, so it is refused (400 `bad verifier`).
    private func register(room name: String, body: [UInt8]) throws(RelayStoreError) -> HTTPResponse {
        let object: [String: Any]
        switch bodyObject(body) {
        case .failure(let refusal): return refusal.response
        case .success(let value): object = value
        }
        guard let verifierText = object["verifier"] as? String else { return RelayHTTP.error(400, "missing verifier") }
        let now = clock.unixSeconds
        if try store.room(named: name)?.isEstablished == true { return RelayHTTP.error(403, "already registered") }
        guard let tokenText = object["registrationToken"] as? String else {
            return RelayHTTP.error(403, "token required")
        }
        // The token is checked first and taken last: a registration refused for its assertion
        // leaves it usable for a retry with a fresh one.
        guard let token = RelayJSON.bytes(tokenText) else { return RelayHTTP.error(403, "bad token") }
        let tokenDigest = SHA256.hash(token)
        guard let attachment = try store.peekSecret(.registrationToken, digest: tokenDigest, room: name, now: now)
        else {
            return RelayHTTP.error(403, "bad token")
        }
        if configuration.attestationRequired {
            guard let key = AttestedKey(attachment: attachment) else {
                return RelayHTTP.error(403, "token not attested")
            }
            guard let challengeText = object["challenge"] as? String, let assertionText = object["assertion"] as? String
            else { return RelayHTTP.error(403, "assertion required") }
            guard let challenge = RelayJSON.bytes(challengeText),
                try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: name, now: now) != nil
            else { return RelayHTTP.error(403, "bad challenge") }
            let clientDataHash = RelayTranscript.attestClientDataHash(
                challenge: challenge, origin: configuration.origin)
            let counter: UInt32
            do throws(AppAttestFailure) {
                guard let assertion = RelayJSON.bytes(assertionText) else {
                    throw AppAttestFailure("the assertion is not base64")
                }
                counter = try attestation.verifyAssertion(
                    assertion, publicKey: key.publicKey, clientDataHash: clientDataHash)
            } catch {
                log(.event, "assertion refused: \(error.message)")
                return RelayHTTP.error(403, "assertion rejected: \(error.message)")
            }
            // Strictly increasing per key, from the attestation's 0: a counter that did not grow is
            // an assertion made before, and the phone retries with a fresh one.
            let counterDigest = SHA256.hash(key.keyID)
            let last =
                try store.peekSecret(.assertionCounter, digest: counterDigest, room: name, now: now)
                .flatMap(Self.counter(from:)) ?? 0
            guard counter > last else { return RelayHTTP.error(403, "stale assertion") }
            try store.addSecret(
                .assertionCounter, digest: counterDigest, room: name, expires: now + configuration.secretLifetime,
                attachment: withUnsafeBytes(of: counter.bigEndian, Array.init), now: now)
        }
        guard let verifier = RelayJSON.bytes(verifierText), verifier.count == Ed25519PublicKey.size,
            (try? Ed25519PublicKey(raw: verifier)) != nil
        else { return RelayHTTP.error(400, "bad verifier") }
        guard try store.takeSecret(.registrationToken, digest: tokenDigest, room: name, now: now) != nil else {
            return RelayHTTP.error(403, "bad token")
        }
        guard try store.registerVerifier(verifier, room: name, now: now) else {
            return RelayHTTP.error(403, "already registered")
        }
        if let room = rooms[name] {
            room.record = try store.room(named: name)
            // The bytes the pairing room counted become the new record's.
            room.unflushedBytes = room.quotaBytes
            flushQuota(room)
        }
        log(.event, "a room was established")
        return RelayHTTP.ok()
    }

    /// A stored assertion counter (4 bytes, big-endian).
    private static func counter(from attachment: [UInt8]) -> UInt32? {
        guard attachment.count == 4 else { return nil }
        return attachment.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// `/delete`: a signature by the room's join key over a fresh challenge wipes the room and
    /// closes its sockets with 1000 `room deleted`.
    private func delete(room name: String, body: [UInt8]) throws(RelayStoreError) -> HTTPResponse {
        let object: [String: Any]
        switch bodyObject(body) {
        case .failure(let refusal): return refusal.response
        case .success(let value): object = value
        }
        guard let record = try store.room(named: name), let verifierBytes = record.verifier else {
            return RelayHTTP.error(403, "not established")
        }
        guard let challengeText = object["challenge"] as? String, let signatureText = object["signature"] as? String
        else { return RelayHTTP.error(403, "signature required") }
        guard let challenge = RelayJSON.bytes(challengeText),
            try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: name, now: clock.unixSeconds)
                != nil
        else { return RelayHTTP.error(403, "bad challenge") }
        let transcript = RelayTranscript.delete(challenge: challenge, room: name, origin: configuration.origin)
        guard let signature = RelayJSON.bytes(signatureText), let verifier = try? Ed25519PublicKey(raw: verifierBytes),
            verifier.isValidSignature(signature, for: transcript)
        else { return RelayHTTP.error(403, "bad signature") }
        try store.deleteRoom(named: name)
        if let room = rooms[name] {
            room.record = nil
            room.unflushedBytes = 0
            closeRoom(room, .roomDeleted)
        }
        log(.event, "a room was deleted")
        return RelayHTTP.ok()
    }
}

/// A request body refused before its fields are read.
private struct HTTPBodyRefusal: Error {
    let response: HTTPResponse
}
