import PeerGate
import PeerGateListener
import Testing

@Suite("HTTP request head parser and the /status endpoint")
struct StatusHTTPTests {
    static func parse(_ text: String) -> HTTPRequestHeadParser.Result? {
        var parser = HTTPRequestHeadParser()
        parser.append(Array(text.utf8))
        return parser.next()
    }

    @Test("a request head arriving a byte at a time")
    func incremental() throws {
        let request = Array(
            "GET /status?pretty HTTP/1.1\r\nHost: 127.0.0.1:4610\r\nUser-Agent:  curl/8 \r\n\r\nBODY".utf8)
        var parser = HTTPRequestHeadParser()
        var result: HTTPRequestHeadParser.Result?
        for (index, byte) in request.enumerated() {
            parser.append([byte])
            result = parser.next()
            if result != nil {
                #expect(index == request.count - 5, "answered at the blank line, not before or after")
                break
            }
        }
        guard case .head(let head) = result else {
            Issue.record("no head: \(String(describing: result))")
            return
        }
        #expect(head.method == "GET")
        #expect(head.target == "/status?pretty")
        #expect(head.path == "/status")
        #expect(head.version == "HTTP/1.1")
        #expect(head.headers.map(\.name) == ["Host", "User-Agent"])
        #expect(head.headers.map(\.value) == ["127.0.0.1:4610", "curl/8"])
        #expect(parser.next() == nil, "answers once")
    }

    @Test("malformed heads")
    func malformed() {
        let cases = [
            "GET /status\r\n\r\n",  // no version
            "GET  /status HTTP/1.1\r\nHost: a\r\n\r\n",  // double space
            "GET status HTTP/1.1\r\nHost: a\r\n\r\n",  // not origin form
            "G(T /status HTTP/1.1\r\nHost: a\r\n\r\n",  // method not a token
            "GET /status HTTP/1.1\r\n\r\n",  // HTTP/1.1 without Host
            "GET /status HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",  // two Hosts
            "GET /status HTTP/1.1\r\nHost a\r\n\r\n",  // header without colon
            "GET /status HTTP/1.1\r\nBad Name: x\r\nHost: a\r\n\r\n",  // space in a name
            "GET /status HTTP/1.1\nHost: a\r\n\r\n",  // bare LF
            "GET /status HTTP/1.1\r\nHost: a\rb\r\n\r\n",  // bare CR
            "GET /status HTTP/1.1\r\nHost: a\u{0}\r\n\r\n",  // NUL in a value
            "GET /status FTP/1.1\r\nHost: a\r\n\r\n",
        ]
        for text in cases {
            #expect(Self.parse(text) == .malformed, "\(text.debugDescription)")
        }
        #expect(Self.parse("GET /status HTTP/2.0\r\nHost: a\r\n\r\n") == .unsupportedVersion)
        #expect(Self.parse("GET /status HTTP/1.0\r\n\r\n") != .malformed, "HTTP/1.0 needs no Host")
        #expect(Self.parse("GET /status HTTP/1.1\r\nHost: a\r\n") == nil, "incomplete")
    }

    @Test("the head is bounded")
    func bounded() {
        let limit = HTTPRequestHeadParser.maximumHeadLength
        let filler = { (count: Int) in "X-Fill: " + String(repeating: "f", count: count) + "\r\n" }
        let base = "GET /status HTTP/1.1\r\nHost: a\r\n"
        let exact = base + filler(limit - base.utf8.count - 10 - 2) + "\r\n"
        #expect(exact.utf8.count == limit)
        if case .head = Self.parse(exact) {} else { Issue.record("a head of exactly the limit is accepted") }
        let over = base + filler(limit - base.utf8.count - 10 - 1) + "\r\n"
        #expect(Self.parse(over) == .tooLarge)
        var parser = HTTPRequestHeadParser()
        for _ in 0..<100 { parser.append([UInt8](repeating: 0x41, count: 1000)) }
        #expect(parser.next() == .tooLarge, "endless input without a blank line")
    }

    /// Fuzzing (http-request-head) showed each `next()` searched the whole buffer again, so a
    /// head sent a byte at a time cost the listener a quadratic search (about 33 million byte
    /// comparisons for 8 KiB); the search now resumes where it stopped.
    @Test("a head dribbled a byte at a time is searched once: same verdicts as all at once")
    func byteAtATimeIsLinear() {
        let limit = HTTPRequestHeadParser.maximumHeadLength
        let base = "GET /status HTTP/1.1\r\nHost: a\r\nX-Fill: "
        // A blank line whose CRLF CRLF straddles appends, at exactly the limit.
        let exact = Array((base + String(repeating: "f", count: limit - base.utf8.count - 4) + "\r\n\r\n").utf8)
        #expect(exact.count == limit)
        var parser = HTTPRequestHeadParser()
        var verdict: HTTPRequestHeadParser.Result?
        for byte in exact where verdict == nil {
            parser.append([byte])
            verdict = parser.next()
        }
        #expect(verdict == Self.parse(String(decoding: exact, as: UTF8.self)))
        if case .head = verdict {} else { Issue.record("no head: \(String(describing: verdict))") }
        #expect(parser.headLength == limit)
        var endless = HTTPRequestHeadParser()
        var answer: HTTPRequestHeadParser.Result?
        var sent = 0
        while answer == nil && sent < 2 * limit {
            endless.append([0x41])
            sent += 1
            answer = endless.next()
        }
        #expect(answer == .tooLarge)
        #expect(sent == limit + 1, "refused at the first byte past the limit")
    }

    @Test("responses: 200 with the document, HEAD, 404, 405, 400, 431, 505")
    func responses() throws {
        var status = PeerGateStatus(rules: PeerGateRules(policy: .homeOnly))
        status.record(PeerPolicy.homeOnly.decide("100.64.77.2"), interface: nil, at: .init(timeIntervalSince1970: 0))
        let document = status.json()

        let ok = HTTPRequestHeadParser.Result.head(
            .init(method: "GET", target: "/status", version: "HTTP/1.1", headers: [("Host", "x")]))
        let okBytes = StatusEndpoint.response(to: ok, status: status).bytes
        let expected =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(document.count)\r\n"
            + "Cache-Control: no-store\r\nConnection: close\r\n\r\n"
        #expect(okBytes == Array(expected.utf8) + document)

        let head = HTTPRequestHeadParser.Result.head(
            .init(method: "HEAD", target: "/status", version: "HTTP/1.1", headers: [("Host", "x")]))
        #expect(StatusEndpoint.response(to: head, status: status).bytes == Array(expected.utf8))

        func statusLine(_ result: HTTPRequestHeadParser.Result) -> String {
            let bytes = StatusEndpoint.response(to: result, status: status).bytes
            return String(decoding: bytes.prefix { $0 != 0x0d }, as: UTF8.self)
        }
        #expect(
            statusLine(.head(.init(method: "GET", target: "/", version: "HTTP/1.1", headers: [("Host", "x")])))
                == "HTTP/1.1 404 Not Found")
        #expect(
            statusLine(.head(.init(method: "POST", target: "/status", version: "HTTP/1.1", headers: [("Host", "x")])))
                == "HTTP/1.1 405 Method Not Allowed")
        #expect(statusLine(.malformed) == "HTTP/1.1 400 Bad Request")
        #expect(statusLine(.tooLarge) == "HTTP/1.1 431 Request Header Fields Too Large")
        #expect(statusLine(.unsupportedVersion) == "HTTP/1.1 505 HTTP Version Not Supported")
        let notFound = StatusEndpoint.response(to: HTTPRequestHeadParser.Result.malformed, status: status)
        #expect(String(decoding: notFound.bytes, as: UTF8.self).contains("Content-Length: \(notFound.body.count)\r\n"))
        let headOther = HTTPRequestHead(method: "HEAD", target: "/x", version: "HTTP/1.1", headers: [("Host", "x")])
        let headMissing = StatusEndpoint.response(to: .head(headOther), status: status)
        #expect(headMissing.status == 404)
        #expect(headMissing.bytes.suffix(4) == Array("\r\n\r\n".utf8), "a HEAD answer carries no body")
        let other = HTTPRequestHead(method: "GET", target: "/other", version: "HTTP/1.1", headers: [])
        #expect(StatusEndpoint.response(to: other, status: status) == nil, "other paths are the caller's")
    }
}
