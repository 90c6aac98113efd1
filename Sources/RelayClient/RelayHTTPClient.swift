import Foundation
import HerdrCrypto
import Plumbing
import RelayProtocol
import WebWire

/// One answer of the relay's HTTP side.
public struct RelayHTTPResponse: Hashable, Sendable {
    public let status: Int
    public let reason: String
    public let body: [UInt8]

    public init(status: Int, reason: String, body: [UInt8]) {
        self.status = status
        self.reason = reason
        self.body = body
    }

    /// The body as a JSON object, if it is one.
    public var json: [String: Any]? { RelayJSON.object(body) }
    /// `{"ok":true,…}` with status 200.
    public var isOK: Bool { status == 200 && RelayJSON.boolean(json?["ok"]) == true }
    /// The `error` of `{"ok":false,"error":X}`, or a short plain-text body (the relay's own
    /// refusals, `bad room` or `rate limited`, are plain text, as upstream's are).
    public var errorText: String? {
        if let json { return json["error"] as? String }
        guard !body.isEmpty, body.count <= 200, let text = String(validating: body, as: UTF8.self) else { return nil }
        let line = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return line.isEmpty || line.contains(where: { $0.isNewline }) ? nil : line
    }
    /// "403 already registered", or the status line's reason when the body says nothing.
    public var summary: String { "\(status) \(errorText ?? reason)" }
}

/// The relay's HTTP endpoints (interop-facts §5), one blocking request per call, each on a fresh
/// connection (`Connection: close`), the way the phone calls them: `User-Agent: iTerm2Companion`,
/// the room in `x-relay-room`, never an `Origin` header.
///
/// Every call blocks the calling thread for at most `timeout` seconds (plus name resolution):
/// call it from a thread of your own (or `Thread`/`BlockingCall`), not from Swift's cooperative pool.
public struct RelayHTTPClient: Sendable {
    public let endpoint: RelayEndpoint
    /// Seconds for each call: connect, TLS, request and the whole answer.
    public var timeout: Double
    /// Largest answer body read.
    public static let maximumBodySize = 1024 * 1024

    public init(endpoint: RelayEndpoint, timeout: Double = 10) {
        self.endpoint = endpoint
        self.timeout = timeout
    }

    // MARK: - Endpoints

    /// `GET /healthz`: throws unless the relay answers `{"ok":true}`.
    public func healthz() throws(ConnectionError) {
        let response = try request(method: "GET", path: "/healthz", room: nil, body: nil)
        try Self.expectOK(response, "/healthz")
    }

    /// `POST /attest/challenge`: a fresh 32-byte challenge for `room`.
    public func attestChallenge(room: String) throws(ConnectionError) -> [UInt8] {
        let response = try post("/attest/challenge", room: room)
        try Self.expectOK(response, "/attest/challenge")
        guard let challenge = RelayJSON.bytes(response.json?["challenge"]), challenge.count == RelayLimits.nonceSize
        else {
            throw ConnectionError(
                .protocolViolation, "relay answered /attest/challenge without a 32-byte challenge",
                status: response.status)
        }
        return challenge
    }

    /// `POST /register`: uploads the room's verifier V with the registration token a phone got
    /// at admission. Once per room; a second call fails with 403 `already registered`.
    public func register(room: String, registrationToken: [UInt8], verifier: Ed25519PublicKey)
        throws(ConnectionError)
    {
        let body =
            "{\"registrationToken\":\"\(Data(registrationToken).base64EncodedString())\",\"verifier\":\"\(Data(verifier.raw).base64EncodedString())\"}"
        let response = try post("/register", room: room, body: Array(body.utf8))
        try Self.expectOK(response, "/register")
    }

    /// Whether the room has a verifier, asked without changing anything: `/register` with our
    /// verifier and a token nobody was given. The relay answers `already registered` for an
    /// established room before it looks at the token (interop-facts §5 order), and `bad token`
    /// for a room with no verifier. A device uses it to tell "the computer is away" from "the
    /// pairing is gone" in open mode, where a room with no verifier admits any join.
    public func roomIsEstablished(room: String, verifier: Ed25519PublicKey) throws(ConnectionError) -> Bool {
        let body =
            "{\"registrationToken\":\"\(Data([UInt8](repeating: 0, count: RelayLimits.tokenSize)).base64EncodedString())\",\"verifier\":\"\(Data(verifier.raw).base64EncodedString())\"}"
        let response = try post("/register", room: room, body: Array(body.utf8))
        switch (response.status, response.errorText) {
        case (403, "already registered"): return true
        case (403, "bad token"): return false
        default:
            throw ConnectionError(
                .httpStatus, "relay answered the room check with \(response.summary)", status: response.status,
                serverError: response.errorText)
        }
    }

    /// `POST /delete`: fetches a challenge, signs the delete transcript with the join key and
    /// posts `{challenge, signature}`. The relay wipes the room and closes its sockets with 1000
    /// `room deleted`.
    public func deleteRoom(room: String, joinKey: RelayJoinKey) throws(ConnectionError) {
        let challenge = try attestChallenge(room: room)
        let signature: [UInt8]
        do {
            signature = try joinKey.signDelete(challenge: challenge, room: room, origin: endpoint.origin)
        } catch {
            throw ConnectionError(.protocolViolation, "signing the delete failed: \(error)")
        }
        let body =
            "{\"challenge\":\"\(Data(challenge).base64EncodedString())\",\"signature\":\"\(Data(signature).base64EncodedString())\"}"
        let response = try post("/delete", room: room, body: Array(body.utf8))
        try Self.expectOK(response, "/delete")
    }

    // MARK: - Raw requests

    /// A POST to `path` with `room` in `x-relay-room` and `body` as JSON. Any status is returned;
    /// only transport and framing failures throw. `extraHeaders` exist for probes (an `Origin`
    /// the relay must refuse).
    public func post(
        _ path: String, room: String, body: [UInt8] = [], extraHeaders: [(String, String)] = []
    ) throws(ConnectionError) -> RelayHTTPResponse {
        try request(method: "POST", path: path, room: room, body: body, extraHeaders: extraHeaders)
    }

    /// One request on a fresh connection; the answer whatever its status.
    public func request(
        method: String, path: String, room: String?, body: [UInt8]?, extraHeaders: [(String, String)] = []
    ) throws(ConnectionError) -> RelayHTTPResponse {
        var headers: [(String, String)] = [("Host", endpoint.authority), ("User-Agent", RelayLimits.userAgent)]
        if let room { headers.append((RelayLimits.roomHeader, room)) }
        if let body {
            headers.append(("Content-Type", "application/json"))
            headers.append(("Content-Length", String(body.count)))
        }
        headers.append(("Connection", "close"))
        headers += extraHeaders
        for (name, value) in headers + [(method, path)]
        where name.utf8.contains(where: { $0 < 0x20 }) || value.utf8.contains(where: { $0 < 0x20 }) {
            throw ConnectionError(.protocolViolation, "a request header may not contain control characters")
        }
        var text = "\(method) \(path) HTTP/1.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        text += "\r\n"
        let deadline = Deadline(seconds: timeout)
        let transport = try RelayTransport.open(endpoint, timeout: timeout)
        try transport.writeAll(Array(text.utf8) + (body ?? []), deadline: deadline, what: "\(method) \(path)")
        return try Self.readResponse(transport, deadline: deadline, what: "\(method) \(path)")
    }

    /// Reads a response head and its body (Content-Length, or up to the end of the stream).
    static func readResponse(_ transport: RelayTransport, deadline: Deadline, what: String)
        throws(ConnectionError) -> RelayHTTPResponse
    {
        var parser = HTTPResponseHeadParser()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 16)
        defer { buffer.deallocate() }
        var head: HTTPResponseHead?
        var body: [UInt8] = []
        while head == nil {
            let count = try transport.readSome(into: buffer, deadline: deadline, what: what)
            guard count > 0 else {
                throw ConnectionError(.connectionLost, "the relay closed the connection before answering \(what)")
            }
            parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            do {
                if let (parsed, leftover) = try parser.next() {
                    head = parsed
                    body = leftover
                }
            } catch {
                throw ConnectionError(.protocolViolation, "the relay's answer to \(what) is not HTTP: \(error.reason)")
            }
        }
        guard let head else { throw ConnectionError(.protocolViolation, "no answer to \(what)") }
        let lengths = head.headers.filter { $0.name.lowercased() == "content-length" }.map(\.value)
        var expected: Int?
        if let first = lengths.first {
            guard Set(lengths).count == 1, let length = Int(first), length >= 0 else {
                throw ConnectionError(.protocolViolation, "the relay's answer to \(what) has a bad Content-Length")
            }
            expected = length
        }
        if let expected, expected > maximumBodySize {
            throw ConnectionError(.protocolViolation, "the relay's answer to \(what) is too large")
        }
        while body.count < (expected ?? Int.max) {
            let count = try transport.readSome(into: buffer, deadline: deadline, what: what)
            if count == 0 {
                if expected == nil { break }
                throw ConnectionError(.connectionLost, "the relay's answer to \(what) ended early")
            }
            body.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            if body.count > maximumBodySize {
                throw ConnectionError(.protocolViolation, "the relay's answer to \(what) is too large")
            }
        }
        if let expected, body.count > expected { body.removeSubrange(expected...) }
        return RelayHTTPResponse(status: head.status, reason: head.reason, body: body)
    }

    static func expectOK(_ response: RelayHTTPResponse, _ path: String) throws(ConnectionError) {
        guard !response.isOK else { return }
        if response.status == 200 {
            throw ConnectionError(
                .protocolViolation, "relay answered \(path) with 200 but not {\"ok\":true}", status: 200)
        }
        throw ConnectionError(
            .httpStatus, "relay refused \(path): \(response.summary)", status: response.status,
            serverError: response.errorText)
    }
}
