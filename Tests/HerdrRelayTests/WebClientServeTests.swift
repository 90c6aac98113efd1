import Foundation
import Glibc
import HerdrCrypto
import RelayProtocol
import TestSupport
import Testing

/// `herdr-relay serve --web-client` as a person runs it: the real binary serving a web root of
/// the test's own, checked by an independent client (Python's http.client and PyPI `websockets`,
/// the browser's side with its `Origin` and `?room=`) against a native peer of the same room.
@Suite(.serialized) struct WebClientServeTests {
    /// A loopback origin, as a browser would send it for a relay reached at 127.0.0.1.
    static let origin = "http://127.0.0.1:8787"
    static let index = "<!doctype html>\n<title>herdr</title>\n<script type=\"module\" src=\"js/app.js\"></script>\n"
    static let app = "export const relay = location.origin;\n"

    /// A web root as `make install` lays it out, plus what must never be served.
    static func webRoot() throws -> TemporaryDirectory {
        let root = try TemporaryDirectory(prefix: "web-root-")
        try write(index, to: root.appending("index.html"))
        try write(app, to: root.appending("js/app.js"))
        try write("body { margin: 0 }\n", to: root.appending("style.css"))
        return root
    }

    /// The same root with a test directory, dotfiles, other files and a link out of it beside.
    static func crowdedWebRoot() throws -> TemporaryDirectory {
        let root = try webRoot()
        try write("import 'node:test';\n", to: root.appending("test/x.test.js"))
        try write("TOKEN=1\n", to: root.appending(".env"))
        try write("[core]\n", to: root.appending(".git/config"))
        try write("# notes\n", to: root.appending("README.md"))
        try write("{\"private\":true}\n", to: root.appending("js/.secret.json"))
        try FileManager.default.createSymbolicLink(
            atPath: root.appending("js/passwd.txt").path, withDestinationPath: "/etc/passwd")
        return root
    }

    static func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    static func relay(_ extra: [String], environment: [String: String] = [:]) throws -> RelayProcess {
        try RelayProcess(
            ["--origin", origin, "--listen", "127.0.0.1:0", "--db", ":memory:"] + extra,
            environment: ["ATTEST_REQUIRED": "false"].merging(environment) { $1 })
    }

    static func sha256(_ text: String) -> String { Hex.encode(SHA256.hash(Array(text.utf8))) }

    // MARK: - The files

    /// A page fetches its modules by the dozen: one connection carries them (kept alive, and
    /// pipelined), until the client says `Connection: close` or speaks HTTP/1.0; the POST
    /// endpoints still close after their answer, as the original relay's do.
    @Test func oneConnectionCarriesThePagesFiles() throws {
        let root = try Self.webRoot()
        let relay = try Self.relay(["--web-client", "--web-root", root.path])
        let report = try Self.runPeer("keepalive", port: relay.port)
        #expect(
            report["sequential"]
                == "200 keep-alive \(Self.index.utf8.count), 200 keep-alive \(Self.app.utf8.count), 404 keep-alive 9, 200 keep-alive 19",
            "\(report)")
        #expect(report["sameSocket"] == "True")
        #expect(report["asksClose"] == "200 close True")
        #expect(report["pipelined"] == "2 responses, last True")
        #expect(report["http10"] == "closed True")
        #expect(report["post"] == "close")
    }

    @Test func servesTheFilesWithTheirHeadersAndNothingElse() throws {
        let root = try Self.crowdedWebRoot()
        let relay = try Self.relay(["--web-client", "--web-root", root.path])
        let report = try Self.runPeer("static", port: relay.port)
        #expect(report["root"] == "200 text/html; charset=utf-8 \(Self.sha256(Self.index))", "\(report)")
        #expect(report["app"] == "200 text/javascript; charset=utf-8 \(Self.sha256(Self.app))")
        #expect(report["appFromThePage"] == "200 text/javascript; charset=utf-8 \(Self.sha256(Self.app))")
        #expect(report["css"] == "200 text/css; charset=utf-8 \(Self.sha256("body { margin: 0 }\n"))")
        #expect(
            report["app.csp"]
                == "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        #expect(report["app.nosniff"] == "nosniff" && report["app.referrer"] == "no-referrer")
        #expect(report["app.cache"] == "no-cache")
        #expect(report["app.etag"] == "\"\(Self.sha256(Self.app))\"")
        #expect(report["app.304"] == "304 0 bytes")
        #expect(report["app.head"] == "200 0 bytes, length \(Self.app.utf8.count)")
        for path in [
            "/../index.html", "/js/../index.html", "/%2e%2e/index.html", "/%2E%2E/%2E%2E/etc/passwd", "/js%2fapp.js",
            "/test/x.test.js", "/.env", "/.git/config", "/js/.secret.json", "/README.md", "/js/passwd.txt", "/js/",
            "/js", "/test/", "/index.html%00",
        ] {
            #expect(report["404 \(path)"] == "404 not found", "\(path): \(report)")
        }
        #expect(report["foreignOrigin"] == "403 forbidden")
        #expect(report["post"] == "400 bad room", "a POST without a room is as before")
        #expect(report["healthz"] == "200")
        #expect(relay.terminate() == 0)
        let log = relay.stderrText()
        #expect(log.contains("skipped js/passwd.txt: a symbolic link out of"), "\(log)")
        #expect(log.contains("web client file index.html sha256 \(Self.sha256(Self.index)) ("), "\(log)")
        #expect(log.contains("web client file js/app.js sha256 \(Self.sha256(Self.app)) ("))
        #expect(log.contains("web client on: 3 files"), "only the three files are served: \(log)")
    }

    /// The manifest hash the relay logs is what the shell recipe of docs/relay.md computes with
    /// sha256sum over the same tree (the recipe read from the document itself).
    @Test func theLoggedManifestIsTheDocumentedRecipes() throws {
        let root = try Self.webRoot()
        try Self.write("{\"name\":\"herdr\"}\n", to: root.appending("app.webmanifest"))
        try Self.write("x", to: root.appending("js/a-b.js"))
        try Self.write("y", to: root.appending("js/a/b.js"))
        try Self.write("z", to: root.appending("Z.txt"))
        let relay = try Self.relay(["--web-client", "--web-root", root.path])
        #expect(relay.terminate() == 0)
        let log = relay.stderrText()
        let marker = try #require(log.range(of: ", manifest sha256 "), "\(log)")
        let logged = String(log[marker.upperBound...].prefix(64))

        let document = try String(
            contentsOf: Self.repository.appendingPathComponent("docs/relay.md"), encoding: .utf8)
        let section = try #require(document.range(of: "**The manifest hash**"))
        let rest = document[section.upperBound...]
        let start = try #require(rest.range(of: "```sh\n"))
        let end = try #require(rest[start.upperBound...].range(of: "```"))
        let recipe = String(rest[start.upperBound..<end.lowerBound])
        #expect(recipe.hasPrefix("cd /usr/local/share/herdr-remote/web\n"), "\(recipe)")
        let script = recipe.replacingOccurrences(of: "/usr/local/share/herdr-remote/web", with: "'\(root.path)'")
        let result = try ProcessRunner.run("/bin/bash", ["-euo", "pipefail", "-c", script], check: true)
        #expect(result.stdout == "\(logged)  -\n", "\(recipe)")
    }

    // MARK: - Browsers and native clients

    /// A browser's WebSocket (its `Origin`, the room in the query) parks and a native phone (the
    /// room in its header) joins it: the splice carries bytes both ways. A browser phone joins a
    /// native Mac's room and registers with `POST /register?room=`. Foreign origins and a room
    /// said two ways are refused.
    @Test func aBrowserAndANativePeerMeetInOneRoom() throws {
        let root = try Self.webRoot()
        let relay = try Self.relay(["--web-client", "--web-root", root.path])
        let verifier = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret()).verifier.raw
        let report = try Self.runPeer("browser", port: relay.port, verifier: verifier)
        #expect(report["browserMac"] == "ok", "\(report)")
        #expect(report["nativePhone"] == "ok token")
        #expect(report["toNative"] == "binary from the browser")
        #expect(report["toBrowser"] == "binary from the native phone")
        #expect(report["textToNative"] == "text from the browser")
        #expect(report["browserPhone"] == "ok token")
        #expect(report["browserPhoneGot"] == "from the native mac")
        #expect(report["register"] == "200 {\"ok\":true}")
        #expect(report["registerAgain"] == "403 {\"ok\":false,\"error\":\"already registered\"}")
        #expect(report["challenge"] == "200 challenge")
        #expect(report["foreignUpgrade"] == "403 forbidden")
        #expect(report["nullUpgrade"] == "403 forbidden")
        #expect(report["foreignPost"] == "403 forbidden")
        #expect(report["mismatch"] == "400 bad room")
        #expect(report["queryWithoutOrigin"] == "400 bad room")
        #expect(relay.terminate() == 0)
    }

    /// Without the flag nothing changes: the relay's own origin is refused like any other, a query
    /// room without an Origin is not read, `GET /` is 400 `bad room`.
    @Test func withoutTheFlagTheOriginalsGateStands() throws {
        let relay = try Self.relay([], environment: ["RELAY_WEB_ROOT": "/nonexistent"])
        let report = try Self.runPeer("noflag", port: relay.port)
        #expect(report["originUpgrade"] == "403 forbidden", "\(report)")
        #expect(report["originPost"] == "403 forbidden")
        #expect(report["originGet"] == "403 forbidden")
        #expect(report["queryWithoutOrigin"] == "400 bad room")
        #expect(report["getRoot"] == "400 bad room")
        #expect(report["nativeSplice"] == "ok")
        #expect(relay.terminate() == 0)
        #expect(!relay.stderrText().contains("web client"), "RELAY_WEB_ROOT alone turns nothing on")
    }

    /// `RELAY_WEB_CLIENT` and `RELAY_WEB_ROOT` in place of the flags, as an env file sets them.
    @Test(arguments: ["true", "1"])
    func theEnvironmentTurnsItOn(value: String) throws {
        let root = try Self.webRoot()
        let relay = try Self.relay([], environment: ["RELAY_WEB_CLIENT": value, "RELAY_WEB_ROOT": root.path])
        let report = try Self.runPeer("static", port: relay.port)
        #expect(report["root"] == "200 text/html; charset=utf-8 \(Self.sha256(Self.index))", "\(report)")
        #expect(relay.terminate() == 0)
    }

    // MARK: - Start-up errors

    /// Everything that stops a start with the web client: exit 64 and a message naming the
    /// directory and the option.
    @Test func aWebClientThatCannotBeServedStopsTheStart() throws {
        let base = try TemporaryDirectory(prefix: "web-errors-")
        let noIndex = base.appending("no-index")
        try Self.write(Self.app, to: noIndex.appendingPathComponent("js/app.js"))
        let large = base.appending("large")
        try Self.write(Self.index, to: large.appendingPathComponent("index.html"))
        try Data(count: 8 * 1024 * 1024).write(to: large.appendingPathComponent("big.js"))
        let many = base.appending("many")
        try Self.write(Self.index, to: many.appendingPathComponent("index.html"))
        for index in 0..<512 { try Self.write("", to: many.appendingPathComponent("js/m\(index).js")) }
        let notADirectory = base.appending("file.html")
        try Self.write(Self.index, to: notADirectory)
        let defaultRoot = URL(fileURLWithPath: RelayProcess.executable).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("share/herdr-remote/web").path
        #expect(!FileManager.default.fileExists(atPath: defaultRoot))

        let cases: [([String], [String: String], String)] = [
            (
                ["--web-client"], [:],
                "error: --web-client: no web client at \(defaultRoot), the default beside this program (make install puts it there); give its directory with --web-root DIR (RELAY_WEB_ROOT)"
            ),
            (
                ["--web-client", "--web-root", base.appending("missing").path], [:],
                "error: --web-root (RELAY_WEB_ROOT): \(base.appending("missing").path) does not exist"
            ),
            (
                [], ["RELAY_WEB_CLIENT": "true", "RELAY_WEB_ROOT": notADirectory.path],
                "error: --web-root (RELAY_WEB_ROOT): \(notADirectory.path) is not a directory"
            ),
            (
                ["--web-client", "--web-root", noIndex.path], [:],
                "error: --web-client: the web client in \(noIndex.path) cannot be served: no index.html, the page served at /"
            ),
            (
                ["--web-client", "--web-root", large.path], [:],
                "error: --web-client: the web client in \(large.path) cannot be served: the files under \(large.path) the relay would serve come to more than 8388608 bytes (8 MiB)"
            ),
            (
                ["--web-client", "--web-root", many.path], [:],
                "error: --web-client: the web client in \(many.path) cannot be served: \(many.path) holds more than 512 files the relay would serve"
            ),
            (["--web-root", large.path], [:], "--web-root needs --web-client (or RELAY_WEB_CLIENT=true)"),
            ([], ["RELAY_WEB_CLIENT": "yes"], "RELAY_WEB_CLIENT must be true or false, got \"yes\""),
        ]
        for (arguments, variables, message) in cases {
            var environment = ProcessInfo.processInfo.environment
            environment["ATTEST_REQUIRED"] = "false"
            for (name, value) in variables { environment[name] = value }
            let result = try ProcessRunner.run(
                RelayProcess.executable,
                ["serve", "--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:"] + arguments,
                environment: environment, timeout: 20)
            #expect(result.status == 64, "\(arguments) \(variables): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(arguments) \(variables): \(result.stderr)")
            #expect(!result.stdout.contains("listening"), "it never listened")
        }
    }

    // MARK: - The peer

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func runPeer(
        _ scenario: String, port: UInt16, rooms: Int = 0, verifier: [UInt8] = [], origin: String = origin
    ) throws -> [String: String] {
        let directory = try TemporaryDirectory()
        let script = directory.appending("peer.py").path
        try Data(peerScript.utf8).write(to: URL(fileURLWithPath: script))
        let result = try ProcessRunner.run(
            "python3",
            [
                script, String(port), origin, scenario, Data(verifier).base64EncodedString(), String(rooms),
            ], timeout: 120)
        guard result.status == 0 else { throw RelayProcessError("peer failed: \(result.stderr) \(result.stdout)") }
        var report: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            report[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return report
    }

    /// The browser's side and the native side of a relay, in Python: http.client for the files
    /// and the POSTs (paths sent as written), `websockets` for the sockets. A browser sends its
    /// `Origin` and a browser's User-Agent and puts the room in the query; a native client sends
    /// `x-relay-room` and iTerm2Companion, as interop-facts §5 has it.
    static let peerScript = #"""
        import base64, hashlib, http.client, json, os, sys
        from websockets.sync.client import connect
        from websockets.exceptions import InvalidStatus

        port, origin, scenario, verifier, room_count = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
        BROWSER_UA = "Mozilla/5.0 (Linux; Android 14) Mobile Safari/537.36"

        def report(key, value):
            print("%s=%s" % (key, value), flush=True)

        def new_room():
            return os.urandom(32).hex()

        def request(method, path, headers=None, body=None):
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            data = response.read()
            connection.close()
            return response, data

        def browser(room, query=None, header=None, page_origin=None):
            target = "ws://127.0.0.1:%d/?room=%s" % (port, query if query is not None else room)
            headers = [("x-relay-room", header)] if header else []
            return connect(target, origin=page_origin or origin, additional_headers=headers, user_agent_header=BROWSER_UA,
                           open_timeout=10, close_timeout=3, ping_interval=None)

        def native(room):
            return connect("ws://127.0.0.1:%d/" % port, additional_headers=[("x-relay-room", room)],
                           user_agent_header="iTerm2Companion", open_timeout=10, close_timeout=3, ping_interval=None)

        def admit(ws, role):
            ws.send(json.dumps({"v": 1, "role": role}))
            assert len(json.loads(ws.recv(timeout=10))["nonce"]) == 44
            ws.send("{}")
            result = json.loads(ws.recv(timeout=10))
            if result.get("ok") is not True:
                return "refused %s" % result.get("error"), None
            token = result.get("registrationToken")
            return ("ok token" if token else "ok"), token

        def refusal(make):
            try:
                ws = make()
            except InvalidStatus as error:
                return "%d %s" % (error.response.status_code, error.response.body.decode())
            ws.close()
            return "101"

        if scenario == "keepalive":
            # One connection carries the page's files, pipelined too; `Connection: close` and
            # HTTP/1.0 end it, and the POST endpoints close as upstream's do.
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            answers = []
            for path in ["/", "/js/app.js", "/missing.js", "/style.css"]:
                connection.request("GET", path)
                response = connection.getresponse()
                data = response.read()
                answers.append("%d %s %d" % (response.status, response.getheader("Connection"), len(data)))
                if path == "/":
                    first = connection.sock
            report("sequential", ", ".join(answers))
            report("sameSocket", connection.sock is first)
            connection.request("GET", "/js/app.js", headers={"Connection": "close"})
            response = connection.getresponse()
            response.read()
            report("asksClose", "%d %s %s" % (response.status, response.getheader("Connection"), response.will_close))
            import socket

            def until_closed(request):
                # Sends the raw request bytes; everything the relay answers, up to its close.
                with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
                    raw.sendall(request)
                    received = b""
                    while chunk := raw.recv(65536):
                        received += chunk
                    return received

            received = until_closed(b"GET /js/app.js HTTP/1.1\r\nHost: x\r\n\r\nGET /style.css HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            report("pipelined", "%d responses, last %s" % (received.count(b"HTTP/1.1 200 OK"), b"body { margin: 0 }" in received))
            report("http10", "closed %s" % (b"Connection: close" in until_closed(b"GET / HTTP/1.0\r\n\r\n")))
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            connection.request("POST", "/register", body=b"{}", headers={"x-relay-room": new_room()})
            response = connection.getresponse()
            response.read()
            report("post", "%s" % response.getheader("Connection"))

        if scenario == "static":
            response, data = request("GET", "/")
            report("root", "%d %s %s" % (response.status, response.getheader("Content-Type"), hashlib.sha256(data).hexdigest()))
            response, data = request("GET", "/js/app.js")
            report("app", "%d %s %s" % (response.status, response.getheader("Content-Type"), hashlib.sha256(data).hexdigest()))
            report("app.csp", response.getheader("Content-Security-Policy"))
            report("app.nosniff", response.getheader("X-Content-Type-Options"))
            report("app.referrer", response.getheader("Referrer-Policy"))
            report("app.cache", response.getheader("Cache-Control"))
            etag = response.getheader("ETag")
            report("app.etag", etag)
            # A module script's request from the page carries the page's Origin.
            response, data = request("GET", "/js/app.js", {"Origin": origin, "User-Agent": BROWSER_UA})
            report("appFromThePage", "%d %s %s" % (response.status, response.getheader("Content-Type"), hashlib.sha256(data).hexdigest()))
            response, data = request("GET", "/js/app.js", {"If-None-Match": etag})
            report("app.304", "%d %d bytes" % (response.status, len(data)))
            response, data = request("HEAD", "/js/app.js")
            report("app.head", "%d %d bytes, length %s" % (response.status, len(data), response.getheader("Content-Length")))
            response, data = request("GET", "/style.css")
            report("css", "%d %s %s" % (response.status, response.getheader("Content-Type"), hashlib.sha256(data).hexdigest()))
            for path in ["/../index.html", "/js/../index.html", "/%2e%2e/index.html", "/%2E%2E/%2E%2E/etc/passwd",
                         "/js%2fapp.js", "/test/x.test.js", "/.env", "/.git/config", "/js/.secret.json", "/README.md",
                         "/js/passwd.txt", "/js/", "/js", "/test/", "/index.html%00"]:
                response, data = request("GET", path)
                report("404 " + path, "%d %s" % (response.status, data.decode()))
            response, data = request("GET", "/", {"Origin": "https://evil.example"})
            report("foreignOrigin", "%d %s" % (response.status, data.decode()))
            response, data = request("POST", "/register", {"Origin": origin}, b"{}")
            report("post", "%d %s" % (response.status, data.decode()))
            response, data = request("GET", "/healthz")
            report("healthz", response.status)

        elif scenario == "browser":
            # A browser parks as the Mac (room in the query), a native phone joins with the header.
            room = new_room()
            mac = browser(room)
            report("browserMac", admit(mac, "mac")[0])
            phone = native(room)
            report("nativePhone", admit(phone, "phone")[0])
            mac.send(b"binary from the browser")
            report("toNative", phone.recv(timeout=10).decode())
            phone.send(b"binary from the native phone")
            report("toBrowser", mac.recv(timeout=10).decode())
            mac.send("text from the browser")
            report("textToNative", phone.recv(timeout=10))
            mac.close()
            phone.close()
            # A native Mac parks; a browser phone joins, then registers its verifier.
            room = new_room()
            mac = native(room)
            admit(mac, "mac")
            phone = browser(room)
            result, token = admit(phone, "phone")
            report("browserPhone", result)
            mac.send(b"from the native mac")
            report("browserPhoneGot", phone.recv(timeout=10).decode())
            body = json.dumps({"registrationToken": token, "verifier": verifier}).encode()
            headers = {"Origin": origin, "Content-Type": "application/json", "User-Agent": BROWSER_UA}
            response, data = request("POST", "/register?room=" + room, headers, body)
            report("register", "%d %s" % (response.status, data.decode()))
            response, data = request("POST", "/register?room=" + room, headers, body)
            report("registerAgain", "%d %s" % (response.status, data.decode()))
            response, data = request("POST", "/attest/challenge?room=" + room, headers)
            report("challenge", "%d %s" % (response.status, "challenge" if "challenge" in json.loads(data) else data))
            response, data = request("POST", "/register?room=" + room, dict(headers, Origin="https://evil.example"), body)
            report("foreignPost", "%d %s" % (response.status, data.decode()))
            mac.close()
            phone.close()
            report("foreignUpgrade", refusal(lambda: browser(new_room(), page_origin="https://evil.example")))
            report("nullUpgrade", refusal(lambda: browser(new_room(), page_origin="null")))
            report("mismatch", refusal(lambda: browser(new_room(), header=new_room())))
            def query_only():
                return connect("ws://127.0.0.1:%d/?room=%s" % (port, new_room()), user_agent_header="iTerm2Companion",
                               open_timeout=10, ping_interval=None)
            report("queryWithoutOrigin", refusal(query_only))

        elif scenario == "noflag":
            room = new_room()
            report("originUpgrade", refusal(lambda: browser(room, header=room)))
            response, data = request("POST", "/register?room=" + room, {"Origin": origin, "x-relay-room": room}, b"{}")
            report("originPost", "%d %s" % (response.status, data.decode()))
            response, data = request("GET", "/", {"Origin": origin})
            report("originGet", "%d %s" % (response.status, data.decode()))
            def query_only():
                return connect("ws://127.0.0.1:%d/?room=%s" % (port, room), user_agent_header="iTerm2Companion",
                               open_timeout=10, ping_interval=None)
            report("queryWithoutOrigin", refusal(query_only))
            response, data = request("GET", "/")
            report("getRoot", "%d %s" % (response.status, data.decode()))
            mac = native(room)
            admit(mac, "mac")
            phone = native(room)
            admit(phone, "phone")
            phone.send(b"native as ever")
            report("nativeSplice", "ok" if mac.recv(timeout=10) == b"native as ever" else "wrong bytes")

        elif scenario == "cluster":
            # Through HAProxy: each room's browser Mac (query) and native phone (header) must meet
            # on one node, or the phone is refused (mac offline) or resharded.
            met = 0
            for index in range(room_count):
                room = new_room()
                mac = phone = None
                try:
                    mac = browser(room)
                    result, _ = admit(mac, "mac")
                    phone = native(room)
                    joined, _ = admit(phone, "phone")
                    if result == "ok" and joined == "ok token":
                        mac.send(b"across the balancer")
                        phone.send(b"and back")
                        if phone.recv(timeout=10) == b"across the balancer" and mac.recv(timeout=10) == b"and back":
                            met += 1
                    else:
                        report("room%d" % index, "%s / %s" % (result, joined))
                except Exception as error:
                    report("room%d" % index, "%s: %s" % (type(error).__name__, error))
                for ws in (mac, phone):
                    if ws:
                        ws.close()
            report("met", met)
            statuses = set()
            for index in range(9):
                response, data = request("GET", "/js/app.js")
                statuses.add("%d %s" % (response.status, hashlib.sha256(data).hexdigest()))
            report("files", ",".join(sorted(statuses)))
        """#
}
