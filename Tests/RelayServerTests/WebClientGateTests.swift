import Foundation
import HerdrCrypto
import PeerGateListener
import RelayProtocol
import RelayServer
import Testing
import WebClient

/// `--web-client` in the core, with an injected clock: the gate admitting the relay's own
/// `Origin` (the room in the query), the static files' rules and answers, and without it the
/// original's gate unchanged.
@Suite struct WebClientGateTests {
    static let index = Array("<!doctype html><script type=\"module\" src=\"js/app.js\"></script>\n".utf8)
    static let app = Array("export const answer = 42;\n".utf8)

    static func files() throws -> WebClientFiles {
        try WebClientFiles([
            ("index.html", index), ("js/app.js", app), ("style.css", Array("body{}".utf8)),
            ("app.webmanifest", Array("{}".utf8)), ("icons/icon-192.png", [0x89, 0x50, 0x4e, 0x47]),
        ])
    }

    static func harness(webClient: Bool = true) throws -> CoreHarness {
        let files = try files()
        return CoreHarness { if webClient { $0.webClient = files } }
    }

    static let ownOrigin: [(name: String, value: String)] = [("Origin", testOrigin)]

    static func upgrade(_ target: String, room: String? = nil, extra: [(name: String, value: String)] = [])
        -> HTTPRequestHead
    {
        var head = CoreHarness.upgradeHead(room: room, extra: extra)
        head.target = target
        return head
    }

    static func get(_ target: String, method: String = "GET", extra: [(name: String, value: String)] = [])
        -> HTTPRequestHead
    {
        HTTPRequestHead(method: method, target: target, version: "HTTP/1.1", headers: [("Host", "relay.test")] + extra)
    }

    /// What the shell does with a non-upgrade request: the head's checks, then the answer.
    static func answer(_ h: CoreHarness, _ head: HTTPRequestHead, body: [UInt8] = []) -> HTTPResponse {
        h.core.checkRequest(head, address: "198.51.100.7")
            ?? h.core.respond(to: head, body: body, address: "198.51.100.7", peerIsLoopback: false)
    }

    static func text(_ response: HTTPResponse?) -> String? { response.map { String(decoding: $0.body, as: UTF8.self) } }

    static func header(_ response: HTTPResponse, _ name: String) -> String? {
        response.extraHeaders.first { $0.lowercased().hasPrefix(name.lowercased() + ": ") }.map {
            String($0.dropFirst(name.count + 2))
        }
    }

    // MARK: - The gate with --web-client

    @Test func theRelaysOwnOriginIsAdmittedWithTheRoomInTheQuery() throws {
        let h = try Self.harness()
        let room = makeRoom()
        let head = Self.upgrade("/?room=\(room)", extra: Self.ownOrigin)
        #expect(h.core.checkUpgrade(head, address: "198.51.100.7") == nil)
        #expect(h.core.roomName(in: head) == room)
        // Other parameters around it, any path: the room is the parameter.
        let busy = Self.upgrade("/relay?v=1&room=\(room)&x", extra: Self.ownOrigin)
        #expect(h.core.roomName(in: busy) == room)
        // The header alone, or both when they agree.
        #expect(h.core.roomName(in: Self.upgrade("/", room: room, extra: Self.ownOrigin)) == room)
        #expect(h.core.roomName(in: Self.upgrade("/?room=\(room)", room: room, extra: Self.ownOrigin)) == room)
    }

    @Test(arguments: [
        "https://evil.example", "null", "https://relay.test:443", "https://relay.test/", "http://relay.test",
        "https://RELAY.test", "https://relay.test.evil.example", "",
    ])
    func anyOtherOriginIsForbidden(origin: String) throws {
        let h = try Self.harness()
        let room = makeRoom()
        let upgrade = h.core.checkUpgrade(
            Self.upgrade("/?room=\(room)", room: room, extra: [("Origin", origin)]), address: "198.51.100.7")
        #expect(upgrade?.status == 403 && Self.text(upgrade) == "forbidden", "\(origin)")
        let post = Self.answer(h, Self.get("/register?room=\(room)", method: "POST", extra: [("Origin", origin)]))
        #expect(post.status == 403 && Self.text(post) == "forbidden")
        let file = Self.answer(h, Self.get("/js/app.js", extra: [("Origin", origin)]))
        #expect(file.status == 403 && Self.text(file) == "forbidden", "a foreign page cannot read the files either")
    }

    @Test func twoOriginHeadersAreForbiddenEvenWhenOneIsOurs() throws {
        let h = try Self.harness()
        let head = Self.upgrade("/?room=\(makeRoom())", extra: Self.ownOrigin + [("Origin", "https://evil.example")])
        #expect(h.core.checkUpgrade(head, address: "198.51.100.7")?.status == 403)
        let twice = Self.upgrade("/?room=\(makeRoom())", extra: Self.ownOrigin + Self.ownOrigin)
        #expect(h.core.checkUpgrade(twice, address: "198.51.100.7")?.status == 403)
    }

    @Test func aBadOrConflictingRoomIs400() throws {
        let h = try Self.harness()
        let (room, other) = (makeRoom(), makeRoom())
        let targets: [(String, String?)] = [
            ("/?room=\(other)", room),  // header and query differ
            ("/", nil),  // neither
            ("/?room=\(room)&room=\(room)", nil),  // repeated
            ("/?room=\(room.uppercased())", nil),
            ("/?room=\(room.dropLast())", nil),
            ("/?room=", nil), ("/?room", nil), ("/?rooms=\(room)", nil), ("/?ROOM=\(room)", nil),
            ("/?room=%61\(room.dropFirst())", nil),  // an escape is not hex
            ("/?room=\(room)&room=\(other)", room),
        ]
        for (target, header) in targets {
            let answer = h.core.checkUpgrade(Self.upgrade(target, room: header, extra: Self.ownOrigin), address: "a")
            #expect(answer?.status == 400 && Self.text(answer) == "bad room", "\(target) header \(header ?? "none")")
            let post = Self.answer(
                h,
                Self.get(
                    target.replacingOccurrences(of: "/?", with: "/register?"), method: "POST",
                    extra: Self.ownOrigin + (header.map { [(RelayLimits.roomHeader, $0)] } ?? [])))
            #expect(post.status == 400 && Self.text(post) == "bad room", "POST \(target)")
        }
    }

    /// A request without an `Origin` never has its query read: a native client is exactly as before.
    @Test func theQueryIsIgnoredWithoutAnOrigin() throws {
        let h = try Self.harness()
        let room = makeRoom()
        let upgrade = h.core.checkUpgrade(Self.upgrade("/?room=\(room)"), address: "198.51.100.7")
        #expect(upgrade?.status == 400 && Self.text(upgrade) == "bad room")
        let post = Self.answer(h, Self.get("/register?room=\(room)", method: "POST"))
        #expect(post.status == 400 && Self.text(post) == "bad room")
        // With the header a native request goes where it went, whatever the query says.
        #expect(h.core.roomName(in: Self.upgrade("/?room=\(makeRoom())", room: room)) == room)
        #expect(Self.answer(h, Self.get("/", extra: [(RelayLimits.roomHeader, room)])).status == 501)
    }

    /// A browser's pairing: the page parks nothing (the computer does), joins as the phone with
    /// the room in the query, and registers its verifier with `POST /register?room=`.
    @Test func aBrowserPhoneJoinsAndRegistersWithTheRoomInTheQuery() throws {
        let h = try Self.harness()
        let room = makeRoom()
        let mac = try h.parkMac(room)
        #expect(h.core.checkUpgrade(Self.upgrade("/?room=\(room)", extra: Self.ownOrigin), address: "a") == nil)
        let phone = h.open(try #require(h.core.roomName(in: Self.upgrade("/?room=\(room)", extra: Self.ownOrigin))))
        h.hello(phone, .device)
        guard case .admitted(let token?) = h.proof(phone, .empty) else {
            Issue.record("the browser's phone was not admitted")
            return
        }
        #expect(h.isLive(mac))
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let body = try JSONSerialization.data(withJSONObject: [
            "registrationToken": base64(token), "verifier": base64(key.verifier.raw),
        ])
        let answer = Self.answer(
            h, Self.get("/register?room=\(room)", method: "POST", extra: Self.ownOrigin), body: Array(body))
        #expect(answer.status == 200 && Self.text(answer) == "{\"ok\":true}", "\(Self.text(answer) ?? "")")
        #expect(
            Self.answer(h, Self.get("/attest/challenge?room=\(room)", method: "POST", extra: Self.ownOrigin))
                .status == 200)
    }

    // MARK: - Without --web-client: the original's gate

    @Test func withoutTheFlagAnOriginIsForbiddenEvenOursWithARoom() throws {
        let h = try Self.harness(webClient: false)
        let room = makeRoom()
        let upgrade = h.core.checkUpgrade(
            Self.upgrade("/?room=\(room)", room: room, extra: Self.ownOrigin), address: "a")
        #expect(upgrade?.status == 403 && Self.text(upgrade) == "forbidden")
        let get = Self.answer(h, Self.get("/", extra: Self.ownOrigin))
        #expect(get.status == 403 && Self.text(get) == "forbidden")
        let plain = Self.answer(h, Self.get("/"))
        #expect(plain.status == 400 && Self.text(plain) == "bad room", "GET / is as the original answers it")
        let query = h.core.checkUpgrade(Self.upgrade("/?room=\(room)"), address: "a")
        #expect(query?.status == 400 && Self.text(query) == "bad room")
        #expect(Self.answer(h, Self.get("/index.html")).status == 400)
    }

    // MARK: - Static files

    @Test func filesAreServedWithTheirTypeAndHeaders() throws {
        let h = try Self.harness()
        let files = try Self.files()
        let cases: [(String, String, [UInt8])] = [
            ("/", "text/html; charset=utf-8", Self.index), ("/index.html", "text/html; charset=utf-8", Self.index),
            ("/js/app.js", "text/javascript; charset=utf-8", Self.app),
            ("/style.css", "text/css; charset=utf-8", Array("body{}".utf8)),
            ("/app.webmanifest", "application/manifest+json", Array("{}".utf8)),
            ("/icons/icon-192.png", "image/png", [0x89, 0x50, 0x4e, 0x47]),
            ("/js/app.js?v=3", "text/javascript; charset=utf-8", Self.app),
            ("/%6as/app.js", "text/javascript; charset=utf-8", Self.app),
        ]
        for (target, type, body) in cases {
            for origin in [[], Self.ownOrigin] {
                let response = Self.answer(h, Self.get(target, extra: origin))
                #expect(response.status == 200 && response.contentType == type && response.body == body, "\(target)")
                #expect(Self.header(response, "Content-Security-Policy") == WebClientFiles.contentSecurityPolicy)
                #expect(Self.header(response, "X-Content-Type-Options") == "nosniff")
                #expect(Self.header(response, "Referrer-Policy") == "no-referrer")
                #expect(response.cacheControl == "no-cache")
                let path =
                    target == "/"
                    ? "index.html"
                    : "\(target.dropFirst().prefix { $0 != "?" })"
                        .replacingOccurrences(of: "%6a", with: "j")
                #expect(Self.header(response, "ETag") == "\"\(Hex.encode(SHA256.hash(body)))\"")
                #expect(files.files[path]?.sha256 == Hex.encode(SHA256.hash(body)))
            }
        }
        let head = Self.answer(h, Self.get("/js/app.js", method: "HEAD"))
        #expect(head.status == 200 && head.omitsBody && head.body == Self.app)
        let wire = String(decoding: head.bytes, as: UTF8.self)
        #expect(wire.hasSuffix("\r\n\r\n") && wire.contains("Content-Length: \(Self.app.count)\r\n"))
        #expect(wire.contains("Cache-Control: no-cache\r\n") && !wire.contains("no-store"))
    }

    @Test func ifNoneMatchWithTheETagIs304() throws {
        let h = try Self.harness()
        let tag = "\"\(Hex.encode(SHA256.hash(Self.app)))\""
        for value in [tag, "W/\(tag)", "\"other\", \(tag)", "*"] {
            let response = Self.answer(h, Self.get("/js/app.js", extra: [("If-None-Match", value)]))
            #expect(response.status == 304 && response.omitsBody, "\(value)")
            #expect(Self.header(response, "ETag") == tag)
            let wire = String(decoding: response.bytes, as: UTF8.self)
            #expect(wire.hasPrefix("HTTP/1.1 304 Not Modified\r\n") && wire.hasSuffix("\r\n\r\n"))
        }
        let changed = Self.answer(h, Self.get("/js/app.js", extra: [("If-None-Match", "\"stale\"")]))
        #expect(changed.status == 200 && changed.body == Self.app)
    }

    @Test(arguments: [
        "/../index.html", "/js/../index.html", "/%2e%2e/index.html", "/%2E%2E/etc/passwd", "/js/%2e%2e/index.html",
        "/./index.html", "/js%2fapp.js", "/js%2Fapp.js", "/js%5capp.js", "/index.html%00.js", "//index.html",
        "/js/", "/js", "/icons", "/test/x.test.js", "/.git/config", "/.env", "/js/app.js/", "/missing.js",
        "/README.md", "/index.html%", "/index.html%zz", "/%ff.js", "/" + String(repeating: "a/", count: 600) + "b.js",
    ])
    func pathsThatNameNoServedFileAre404(target: String) throws {
        let h = try Self.harness()
        let response = Self.answer(h, Self.get(target))
        #expect(response.status == 404 && Self.text(response) == "not found", "\(target)")
    }

    /// Anything but GET and HEAD without a room goes on as before (a POST is 400 `bad room`), and
    /// the operator endpoints are still theirs.
    @Test func otherMethodsAndTheOperatorEndpointsAreAsBefore() throws {
        let h = try Self.harness()
        for method in ["POST", "PUT", "DELETE", "OPTIONS"] {
            let response = Self.answer(h, Self.get("/index.html", method: method))
            #expect(response.status == 400 && Self.text(response) == "bad room", "\(method)")
        }
        #expect(Self.answer(h, Self.get("/healthz")).status == 200)
        #expect(Self.answer(h, Self.get("/metrics")).status == 403)
    }

    // MARK: - The files' rules

    @Test func whatMayBeServed() {
        for path in [
            "index.html", "js/app.js", "a/b/c/d/e/f/g/h/x.css", "icon@2x.png", "v1.0~rc+1.txt", "m.webmanifest",
        ] {
            #expect(WebClientFiles.contentType(servablePath: path) != nil, "\(path)")
        }
        for path in [
            "", "/index.html", "js//app.js", ".env", "js/.hidden.js", ".git/x.js", "test/x.js", "js/test/x.js",
            "test-support/s.js", "bench/b.js", "node_modules/m.js", "README.md", "app.JS", "app", "a b.js", "ü.js",
            "../x.js", "js/../x.js", "a/b/c/d/e/f/g/h/i/x.css", String(repeating: "a", count: 253) + ".js",
            "tsconfig", "x.js\0",
        ] {
            #expect(WebClientFiles.contentType(servablePath: path) == nil, "\(path)")
        }
    }

    @Test func theBoundsAndTheIndexAreChecked() throws {
        #expect(throws: WebClientFilesError.self) { try WebClientFiles([("js/app.js", Self.app)]) }
        #expect((try? WebClientFiles([("index.html", [])]))?.files.count == 1)
        let big = [UInt8](repeating: 0x20, count: WebClientFiles.maximumTotalBytes)
        #expect((try? WebClientFiles([("index.html", big)])) != nil, "8 MiB exactly")
        do {
            _ = try WebClientFiles([("index.html", big), ("a.js", [0])])
            Issue.record("over 8 MiB accepted")
        } catch {
            #expect(error.kind == .tooLarge)
        }
        let many = (0...WebClientFiles.maximumFileCount).map { ("f\($0).js", [UInt8]()) } + [("index.html", [])]
        do {
            _ = try WebClientFiles(many)
            Issue.record("too many files accepted")
        } catch {
            #expect(error.kind == .tooMany)
        }
        do {
            _ = try WebClientFiles([("index.html", []), ("test/x.js", [])])
            Issue.record("a test file accepted")
        } catch {
            #expect(error.kind == .badPath)
        }
    }

    /// The manifest hash as docs/relay.md states it: SHA-256 over `path NUL sha256hex LF` lines in
    /// bytewise path order (`Z` before `a`, `a` before `a/…`, `a-` before `a/`).
    @Test func theManifestHashFollowsTheDocumentedRule() throws {
        let entries: [(String, [UInt8])] = [("index.html", [1]), ("a-b.js", [2]), ("a/b.js", [3]), ("Z.js", [4])]
        let files = try WebClientFiles(entries)
        var lines: [UInt8] = []
        for (path, bytes) in [("Z.js", [4]), ("a-b.js", [2]), ("a/b.js", [3]), ("index.html", [1])]
            as [(String, [UInt8])]
        {
            lines += Array("\(path)\0\(Hex.encode(SHA256.hash(bytes)))\n".utf8)
        }
        #expect(files.manifestSHA256 == Hex.encode(SHA256.hash(lines)))
        #expect(files.sortedFiles.map(\.path) == ["Z.js", "a-b.js", "a/b.js", "index.html"])
    }
}
