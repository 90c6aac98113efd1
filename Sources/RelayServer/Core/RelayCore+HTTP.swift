import Foundation
import HerdrCrypto
import PeerGateListener
import RelayProtocol
import RelayStorage

extension RelayCore {
    /// The POST endpoints of interop-facts §5 plus `/healthz` and `/metrics`. `peerIsLoopback`
    /// gates `/metrics`. The shell answers `/status` itself (it owns the listener) and caps the
    /// body at `configuration.httpBodySize` (413) before calling.
    public func respond(to head: HTTPRequestHead, body: [UInt8], address: String, peerIsLoopback: Bool) -> HTTPResponse
    {
        let response = route(head, body: body, address: address, peerIsLoopback: peerIsLoopback)
        metrics.httpResponses[response.status, default: 0] += 1
        return response
    }

    private func route(_ head: HTTPRequestHead, body: [UInt8], address: String, peerIsLoopback: Bool) -> HTTPResponse {
        if !head.values(named: "origin").isEmpty { return RelayHTTP.error(403, "forbidden") }
        let path = String(head.path)
        switch path {
        case "/healthz":
            guard head.method == "GET" || head.method == "HEAD" else { return methodNotAllowed("GET, HEAD") }
            return RelayHTTP.ok()
        case "/metrics":
            guard peerIsLoopback else { return RelayHTTP.error(403, "forbidden") }
            guard head.method == "GET" else { return methodNotAllowed("GET") }
            let stored = try? store.roomCount()
            return HTTPResponse(
                status: 200, reason: "OK", contentType: "text/plain; version=0.0.4",
                body: Array(
                    metrics.render(openConnections: connections.count, activeRooms: rooms.count, storedRooms: stored)
                        .utf8))
        case "/attest/challenge", "/attest", "/register", "/delete":
            guard head.method == "POST" else { return methodNotAllowed("POST") }
            guard body.count <= configuration.httpBodySize else { return RelayHTTP.error(413, "body too large") }
            guard let room = roomName(in: head) else { return RelayHTTP.error(400, "bad room") }
            do {
                switch path {
                case "/attest/challenge": return try attestChallenge(room: room, address: address)
                case "/attest": return try attest(room: room, body: body, address: address)
                case "/register": return try register(room: room, body: body)
                default: return try delete(room: room, body: body)
                }
            } catch {
                log("store error on \(path): \(error)")
                return RelayHTTP.error(500, "internal error")
            }
        default:
            return RelayHTTP.error(501, "not implemented")
        }
    }

    private func methodNotAllowed(_ allow: String) -> HTTPResponse {
        var response = RelayHTTP.error(405, "method not allowed")
        response.extraHeaders = ["Allow: \(allow)"]
        return response
    }

    private func admitAttestRequest(_ address: String) -> Bool {
        var usage = addresses[address] ?? AddressUsage()
        defer { addresses[address] = usage }
        return usage.attestRequests.admit(
            at: clock.milliseconds, limit: configuration.attestRequestsPerMinute, length: 60_000)
    }

    /// `/attest/challenge`: a fresh 32-byte challenge, at most 16 outstanding per room.
    private func attestChallenge(room: String, address: String) throws(RelayStoreError) -> HTTPResponse {
        guard admitAttestRequest(address) else { return RelayHTTP.error(429, "rate limited") }
        let now = clock.unixSeconds
        guard try store.countSecrets(.challenge, room: room, now: now) < configuration.outstandingChallenges else {
            return RelayHTTP.error(429, "too many challenges")
        }
        let challenge = random(RelayLimits.nonceSize)
        try store.addSecret(
            .challenge, digest: SHA256.hash(challenge), room: room, expires: now + configuration.secretLifetime,
            attachment: [])
        return RelayHTTP.ok([("challenge", Data(challenge).base64EncodedString())])
    }

    /// `/attest`: 400 `attestation disabled` in open mode, as upstream; otherwise the verifier
    /// decides and a ticket bound to the attested key and this room is issued.
    private func attest(room: String, body: [UInt8], address: String) throws(RelayStoreError) -> HTTPResponse {
        guard admitAttestRequest(address) else { return RelayHTTP.error(429, "rate limited") }
        guard configuration.attestationRequired else { return RelayHTTP.error(400, "attestation disabled") }
        guard let object = RelayJSON.object(body), let challenge = RelayJSON.bytes(object["challenge"]),
            let attestationObject = RelayJSON.bytes(object["attestationObject"])
        else { return RelayHTTP.error(400, "bad request") }
        let now = clock.unixSeconds
        guard try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: room, now: now) != nil else {
            return RelayHTTP.error(403, "bad challenge")
        }
        let clientDataHash = RelayTranscript.attestClientDataHash(challenge: challenge, origin: configuration.origin)
        switch attestation.verifyAttestation(attestationObject, clientDataHash: clientDataHash) {
        case .failure(let failure):
            log("attestation refused: \(failure.message)")
            return RelayHTTP.error(403, "bad attestation")
        case .success(let keyID):
            let ticket = random(RelayLimits.tokenSize)
            try store.addSecret(
                .ticket, digest: SHA256.hash(ticket), room: room, expires: now + configuration.secretLifetime,
                attachment: keyID)
            return RelayHTTP.ok([("ticket", Data(ticket).base64EncodedString())])
        }
    }

    /// `/register`: the room's first verifier, only with the registration token minted at phone
    /// admission (and, under attestation, an assertion by the key that attested).
    private func register(room name: String, body: [UInt8]) throws(RelayStoreError) -> HTTPResponse {
        guard let object = RelayJSON.object(body) else { return RelayHTTP.error(400, "bad request") }
        let now = clock.unixSeconds
        if try store.room(named: name)?.isEstablished == true { return RelayHTTP.error(403, "already registered") }
        guard let tokenValue = object["registrationToken"] else { return RelayHTTP.error(403, "token required") }
        guard let verifier = RelayJSON.bytes(object["verifier"]), verifier.count == Ed25519PublicKey.size,
            (try? Ed25519PublicKey(raw: verifier)) != nil
        else { return RelayHTTP.error(400, "bad verifier") }
        // The token is checked first and taken last: a registration refused for its assertion
        // leaves it usable for a retry with a fresh one.
        guard let token = RelayJSON.bytes(tokenValue) else { return RelayHTTP.error(403, "bad token") }
        let tokenDigest = SHA256.hash(token)
        guard let keyID = try store.peekSecret(.registrationToken, digest: tokenDigest, room: name, now: now) else {
            return RelayHTTP.error(403, "bad token")
        }
        if configuration.attestationRequired {
            guard let challenge = RelayJSON.bytes(object["challenge"]),
                let assertion = RelayJSON.bytes(object["assertion"]),
                try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: name, now: now) != nil
            else { return RelayHTTP.error(403, "bad assertion") }
            let clientDataHash = RelayTranscript.attestClientDataHash(
                challenge: challenge, origin: configuration.origin)
            if case .failure(let failure) = attestation.verifyAssertion(
                assertion, keyID: keyID, clientDataHash: clientDataHash)
            {
                log("assertion refused: \(failure.message)")
                return RelayHTTP.error(403, "bad assertion")
            }
        }
        guard try store.takeSecret(.registrationToken, digest: tokenDigest, room: name, now: now) != nil else {
            return RelayHTTP.error(403, "bad token")
        }
        guard try store.registerVerifier(verifier, room: name, now: now) else {
            return RelayHTTP.error(403, "already registered")
        }
        if let room = rooms[name] {
            room.record = try store.room(named: name)
            if let record = room.record {
                room.quotaDay = max(room.quotaDay, record.quotaDay)
            }
            room.quotaDirty = true
            flushQuota(room)
        }
        log("a room was established")
        return RelayHTTP.ok()
    }

    /// `/delete`: a signature by the room's join key over a fresh challenge wipes the room and
    /// closes its sockets with 1000 `room deleted`.
    private func delete(room name: String, body: [UInt8]) throws(RelayStoreError) -> HTTPResponse {
        guard let record = try store.room(named: name), let verifierBytes = record.verifier else {
            return RelayHTTP.error(403, "not established")
        }
        guard let object = RelayJSON.object(body), let challenge = RelayJSON.bytes(object["challenge"]),
            let signature = RelayJSON.bytes(object["signature"])
        else { return RelayHTTP.error(400, "bad request") }
        guard
            try store.takeSecret(.challenge, digest: SHA256.hash(challenge), room: name, now: clock.unixSeconds)
                != nil
        else { return RelayHTTP.error(403, "bad challenge") }
        let transcript = RelayTranscript.delete(challenge: challenge, room: name, origin: configuration.origin)
        guard let verifier = try? Ed25519PublicKey(raw: verifierBytes),
            verifier.isValidSignature(signature, for: transcript)
        else { return RelayHTTP.error(403, "bad signature") }
        try store.deleteRoom(named: name)
        if let room = rooms[name] {
            room.record = nil
            room.quotaDirty = false
            closeRoom(room, .roomDeleted)
        }
        log("a room was deleted")
        return RelayHTTP.ok()
    }
}
