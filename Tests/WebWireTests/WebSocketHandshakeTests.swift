import PeerGateListener
import Testing
import WebWire

/// The opening handshake on both sides, and the response-head parser the client reads it with.
@Suite struct WebSocketHandshakeTests {
    static let rfcKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// The RFC 6455 §1.2 request, with `changes` applied (nil value: field removed).
    static func request(_ changes: [String: String?] = [:], method: String = "GET", version: String = "HTTP/1.1")
        -> HTTPRequestHead
    {
        var headers: [(name: String, value: String)] = [
            ("Host", "server.example.com"), ("Upgrade", "websocket"), ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", rfcKey), ("Origin", "http://example.com"),
            ("Sec-WebSocket-Protocol", "chat, superchat"), ("Sec-WebSocket-Version", "13"),
        ]
        for (name, value) in changes {
            headers.removeAll { $0.name == name }
            if let value { headers.append((name, value)) }
        }
        return HTTPRequestHead(method: method, target: "/chat", version: version, headers: headers)
    }

    static func parseRequest(_ bytes: [UInt8]) -> HTTPRequestHead? {
        var parser = HTTPRequestHeadParser()
        parser.append(bytes)
        guard case .head(let head) = parser.next() else { return nil }
        return head
    }

    @Test func acceptValueRFCVector() {
        #expect(WebSocketHandshake.acceptValue(forKey: Self.rfcKey) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func validUpgrade() {
        #expect(WebSocketHandshake.validateUpgrade(Self.request()) == .success("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
        // Token lists and case-insensitive names and values.
        #expect(throws: Never.self) {
            try WebSocketHandshake.validateUpgrade(Self.request(["Connection": "keep-alive, Upgrade"])).get()
        }
        let lowercase = HTTPRequestHead(
            method: "GET", target: "/", version: "HTTP/1.1",
            headers: [
                ("host", "a"), ("upgrade", "WebSocket"), ("connection", "keep-alive,upgrade"),
                ("sec-websocket-key", Self.rfcKey), ("sec-websocket-version", "13"),
            ])
        #expect(WebSocketHandshake.validateUpgrade(lowercase) == .success("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="))
    }

    static func status(_ head: HTTPRequestHead) -> Int? {
        guard case .failure(let error) = WebSocketHandshake.validateUpgrade(head) else { return nil }
        return error.status
    }

    @Test func refusals() {
        #expect(Self.status(Self.request(["Sec-WebSocket-Key": nil])) == 400)
        // 15 bytes of base64, then not base64 at all.
        #expect(Self.status(Self.request(["Sec-WebSocket-Key": "AAECAwQFBgcICQoLDA0O"])) == 400)
        #expect(Self.status(Self.request(["Sec-WebSocket-Key": "not base64 at all!!!!!=="])) == 400)
        #expect(Self.status(Self.request(["Upgrade": nil])) == 400)
        #expect(Self.status(Self.request(["Upgrade": "h2c"])) == 400)
        #expect(Self.status(Self.request(["Connection": "keep-alive"])) == 400)
        #expect(Self.status(Self.request(method: "POST")) == 400)
        #expect(Self.status(Self.request(version: "HTTP/1.0")) == 400)
        var repeated = Self.request()
        repeated.headers.append(("sec-websocket-key", Self.rfcKey))
        #expect(Self.status(repeated) == 400)
        #expect(Self.status(Self.request(["Sec-WebSocket-Version": nil])) == 426)
    }

    @Test func oldVersionGets426WithTheVersionWeSpeak() {
        guard
            case .failure(let error) = WebSocketHandshake.validateUpgrade(Self.request(["Sec-WebSocket-Version": "8"]))
        else {
            Issue.record("version 8 accepted")
            return
        }
        #expect(error.status == 426)
        #expect(error.extraHeaders == ["Sec-WebSocket-Version: 13"])
        let wire = String(decoding: error.response.bytes, as: UTF8.self)
        #expect(wire.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
        #expect(wire.contains("\r\nSec-WebSocket-Version: 13\r\n"))
    }

    @Test func serverResponseBytes() {
        #expect(
            WebSocketHandshake.serverResponse(accept: "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
                == Array(
                    ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n").utf8))
    }

    @Test func madeKeysAreFreshAndValid() {
        let first = WebSocketHandshake.makeKey()
        let second = WebSocketHandshake.makeKey()
        #expect(first != second)
        #expect(first.utf8.count == 24 && first.hasSuffix("=="))
        #expect(throws: Never.self) {
            try WebSocketHandshake.validateUpgrade(Self.request(["Sec-WebSocket-Key": first])).get()
        }
    }

    @Test func clientAndServerRoundTrip() throws {
        let key = WebSocketHandshake.makeKey()
        let request = WebSocketHandshake.clientRequest(
            host: "relay.example:443", path: "/v1/room", key: key, extraHeaders: [("Origin", "https://app.example")])
        let head = try #require(Self.parseRequest(request))
        #expect(head.target == "/v1/room")
        #expect(head.headers.contains { $0.name == "Origin" && $0.value == "https://app.example" })
        let accept = try WebSocketHandshake.validateUpgrade(head).get()

        // The server's first frame rides right behind the 101.
        let firstFrame = WebSocketFrameEncoder.frame(.binary, [1, 2, 3], maskKey: nil)
        let wire = WebSocketHandshake.serverResponse(accept: accept) + firstFrame + hex("81 02 68")
        var parser = HTTPResponseHeadParser()
        parser.append(wire[..<20])
        #expect(try parser.next() == nil)
        parser.append(wire[20...])
        let (response, leftover) = try #require(try parser.next())
        #expect(response.status == 101 && response.reason == "Switching Protocols" && response.version == "HTTP/1.1")
        #expect(throws: Never.self) { try WebSocketHandshake.validateResponse(response, key: key).get() }
        #expect(leftover == firstFrame + hex("81 02 68"))

        var decoder = WebSocketMessageReader(role: .client, maximumMessageSize: 1024)
        decoder.append(leftover)
        #expect(try decoder.next() == .binary([1, 2, 3]))
        #expect(try decoder.next() == nil)
        decoder.append([0x69])
        #expect(try decoder.next() == .text("hi"))
    }

    @Test func clientRefusesBadResponses() throws {
        let key = Self.rfcKey
        func check(_ text: String) throws -> WebSocketHandshakeError? {
            var parser = HTTPResponseHeadParser()
            parser.append(Array(text.utf8))
            let head = try #require(try parser.next()).head
            guard case .failure(let error) = WebSocketHandshake.validateResponse(head, key: key) else { return nil }
            return error
        }
        let good = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        #expect(try check(good + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n") == nil)
        #expect(try check(good + "Sec-WebSocket-Accept: AAAAAAAAAAAAAAAAAAAAAAAAAAA=\r\n\r\n")?.status == 101)
        #expect(try check(good + "\r\n") != nil)
        #expect(
            try check(
                good
                    + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\nSec-WebSocket-Extensions: permessage-deflate\r\n\r\n"
            )
                != nil)
        #expect(
            try check(
                "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n"
            )
                != nil)
        #expect(try check("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")?.status == 403)
    }

    // MARK: HTTPResponseHeadParser

    @Test func responseParsedByteAtATime() throws {
        let text = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nX-Empty:\r\nX-Pad:  a b \t\r\n\r\n"
        var parser = HTTPResponseHeadParser()
        var result: (head: HTTPResponseHead, leftover: [UInt8])?
        var fed = 0
        for byte in text.utf8 where result == nil {
            parser.append([byte])
            fed += 1
            result = try parser.next()
        }
        #expect(fed == text.utf8.count)
        let (head, leftover) = try #require(result)
        #expect(head.headers.map(\.name) == ["Upgrade", "X-Empty", "X-Pad"])
        #expect(head.headers.map(\.value) == ["websocket", "", "a b"])
        #expect(leftover.isEmpty)
        // It answers once; later bytes belong to the frame decoder.
        parser.append([0x81, 0x00])
        #expect(try parser.next() == nil)
    }

    @Test func responseLeftoverIncludesEverythingAfterTheHead() throws {
        var parser = HTTPResponseHeadParser()
        parser.append(Array("HTTP/1.0 200\r\n\r\nbody".utf8))
        let (head, leftover) = try #require(try parser.next())
        #expect(head.status == 200 && head.reason == "" && head.version == "HTTP/1.0" && head.headers.isEmpty)
        #expect(leftover == Array("body".utf8))
    }

    @Test func malformedResponses() {
        for text in [
            "HTTP/2 101 Switching\r\n\r\n", "HTTP/1.1 10 Short\r\n\r\n", "HTTP/1.1 abc Letters\r\n\r\n",
            "HTTP/1.1 1011 Long\r\n\r\n", "HTTP/1.1 101 OK\nUpgrade: websocket\r\n\r\n", "ICY 200 OK\r\n\r\n",
            "HTTP/1.1 101 OK\r\nNo colon\r\n\r\n", "HTTP/1.1 101 OK\r\n folded: x\r\n\r\n",
            "HTTP/1.1 101 OK\r\nBad Name: x\r\n\r\n", "\r\n\r\n",
        ] {
            var parser = HTTPResponseHeadParser()
            parser.append(Array(text.utf8))
            #expect(throws: HTTPResponseHeadError.self, "\(text)") { try parser.next() }
        }
    }

    @Test func overLongResponseHead() throws {
        var parser = HTTPResponseHeadParser()
        parser.append(Array("HTTP/1.1 101 OK\r\n".utf8))
        #expect(try parser.next() == nil)
        let line = Array("X-Filler: \(String(repeating: "a", count: 100))\r\n".utf8)
        var thrown: HTTPResponseHeadError?
        for _ in 0..<100 where thrown == nil {
            parser.append(line)
            do { _ = try parser.next() } catch { thrown = error }
        }
        #expect(thrown?.kind == .tooLarge)
        // A head that ends, but past the limit, is refused too.
        var late = HTTPResponseHeadParser()
        late.append(Array("HTTP/1.1 101 OK\r\nX: \(String(repeating: "a", count: 9000))\r\n\r\n".utf8))
        #expect(throws: HTTPResponseHeadError(kind: .tooLarge, reason: "head longer than 8192 bytes")) {
            try late.next()
        }
    }
}
