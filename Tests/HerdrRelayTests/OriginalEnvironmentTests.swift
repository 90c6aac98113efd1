import Foundation
import Glibc
import HerdrCrypto
import TestSupport
import Testing

/// `herdr-relay serve` configured the way the original relay is: by environment variables in an
/// env file, with the original's names, units and defaults. Each variable is checked by what it
/// does to a real client (PyPI `websockets`), not by what the relay prints.
@Suite(.serialized) struct OriginalEnvironmentTests {
    static let origin = "https://relay.test"

    /// The original's variables only (no flag at all): RELAY_HOST/RELAY_PORT bind, RELAY_DB is
    /// the store, RELAY_TRUST_PROXY=true keys per-address limits on X-Forwarded-For,
    /// RELAY_MAX_SOCKETS_PER_IP caps them, RELAY_DAILY_BYTE_QUOTA bounds a room.
    @Test func theOriginalsEnvironmentRunsTheRelay() throws {
        let directory = try TemporaryDirectory()
        let database = directory.appending("relay.db").path
        let relay = try RelayProcess(
            [],
            environment: [
                "RELAY_ORIGIN": Self.origin, "RELAY_HOST": "127.0.0.1", "RELAY_PORT": "0", "RELAY_DB": database,
                "ATTEST_REQUIRED": "false", "RELAY_TRUST_PROXY": "true", "RELAY_LOG": "false",
                "RELAY_KEEPALIVE_MS": "30000", "RELAY_ESTABLISHED_IDLE_TTL_MS": "2592000000",
                "RELAY_DAILY_BYTE_QUOTA": "1000", "RELAY_MAX_SOCKETS_PER_IP": "2",
            ])
        let report = try Self.runPeer(port: relay.port, scenario: "environment")
        #expect(report["quota.spliced"] == "600", "\(report)")
        #expect(report["quota.mac"] == "1008 daily quota exceeded")
        #expect(report["quota.phone"] == "1008 daily quota exceeded")
        #expect(report["sameClient.third"] == "429", "two sockets per forwarded address")
        #expect(report["otherClient"] == "101", "another X-Forwarded-For is another client")
        #expect(relay.terminate() == 0)
        #expect(FileManager.default.fileExists(atPath: database), "RELAY_DB is the store")
        #expect(!relay.stderrText().contains("note: without --trust-proxy"))
    }

    /// RELAY_LOG: off by default, nothing but start-up and failures; `true` logs events (here the
    /// pairing cycle cap, made to trip at once with RELAY_PAIRING_CYCLES=1).
    @Test(arguments: [nil, "true"] as [String?])
    func relayLogTurnsEventLinesOn(setting: String?) throws {
        var environment = ["ATTEST_REQUIRED": "false", "RELAY_PAIRING_CYCLES": "1"]
        if let setting { environment["RELAY_LOG"] = setting }
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:"], environment: environment)
        let report = try Self.runPeer(port: relay.port, scenario: "cycles")
        #expect(report["second"] == "1000 pairing cycle cap", "\(report)")
        #expect(relay.terminate() == 0)
        let log = relay.stderrText()
        #expect(log.contains("passed its cycle cap") == (setting == "true"), "\(log)")
        #expect(log.contains("event log \(setting == "true" ? "on" : "off")"))
    }

    /// RELAY_KEEPALIVE_MS sets the relay's ping interval (a client sees the pings come).
    @Test func keepaliveSetsThePingInterval() throws {
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:"],
            environment: ["ATTEST_REQUIRED": "false", "RELAY_KEEPALIVE_MS": "200"])
        let report = try Self.runPeer(port: relay.port, scenario: "pings")
        let pings = Int(report["pings"] ?? "") ?? 0
        #expect(pings >= 3, "three pings within 10 seconds at 200 ms (the default is 30 s): \(report)")
        #expect(relay.terminate() == 0)
    }

    /// A value that cannot be parsed stops the relay before it starts, naming the variable.
    @Test(arguments: [
        (["RELAY_KEEPALIVE_MS": "abc"], "RELAY_KEEPALIVE_MS must be a whole number of milliseconds"),
        (["RELAY_KEEPALIVE_MS": "1e3"], "RELAY_KEEPALIVE_MS must be a whole number"),
        (["RELAY_DAILY_BYTE_QUOTA": "-5"], "RELAY_DAILY_BYTE_QUOTA must be a whole number of bytes"),
        (["RELAY_DAILY_BYTE_QUOTA": "0"], "RELAY_DAILY_BYTE_QUOTA must be a whole number of bytes from 1"),
        (["RELAY_ESTABLISHED_IDLE_TTL_MS": "30 days"], "RELAY_ESTABLISHED_IDLE_TTL_MS must be"),
        (["RELAY_MAX_SOCKETS_PER_IP": "99999999999"], "RELAY_MAX_SOCKETS_PER_IP must be"),
        (["RELAY_TRUST_PROXY": "yes"], "RELAY_TRUST_PROXY must be true or false, got \"yes\""),
        (["RELAY_TRUST_CLOUDFLARE": "TRUE"], "RELAY_TRUST_CLOUDFLARE must be true or false"),
        (["RELAY_LOG": "on"], "RELAY_LOG must be true or false"),
        (["RELAY_TRUST_PROXY": "true", "RELAY_TRUST_CLOUDFLARE": "true"], "not both"),
        (["RELAY_TRUSTED_HOPS": "0"], "RELAY_TRUSTED_HOPS) must be 1 to 16"),
        (["RELAY_PORT": "99999"], "RELAY_PORT must be a port number"),
        (["RELAY_HOST": "relay.example"], "RELAY_HOST must be a numeric address"),
        (["RELAY_LISTEN": "127.0.0.1:0", "RELAY_HOST": "127.0.0.1"], "RELAY_LISTEN and RELAY_HOST/RELAY_PORT"),
        (["RELAY_ORIGIN": "https://relay.test/path"], "--origin must be https://"),
        (["RELAY_REDIS_URL": "redis://127.0.0.1"], "RELAY_DB and RELAY_REDIS_URL are both set: keep one"),
        (["RELAY_DB": "", "RELAY_REDIS_URL": "redis://127.0.0.1:0"], "--store (RELAY_REDIS_URL): Redis URL port"),
        (["APP_ID": "com.googlecode.iterm2.companion"], "--app-id (APP_ID) must be a team-prefixed app id"),
        (["APP_ID": "h7v7xyvq7d.com.example"], "--app-id (APP_ID) must be a team-prefixed app id"),
        (["APPATTEST_ENV": "prod"], "--appattest-env (APPATTEST_ENV) must be production or development, got \"prod\""),
        (["APPATTEST_ROOT_PEM": "/nonexistent/root.pem"], "is neither PEM text nor a readable PEM file"),
        (
            ["APPATTEST_ROOT_PEM": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"],
            "--appattest-root (APPATTEST_ROOT_PEM): no PEM certificate"
        ),
    ])
    func anUnparseableValueIsAUsageError(variables: [String: String], message: String) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["RELAY_ORIGIN"] = Self.origin
        environment["RELAY_DB"] = ":memory:"
        for (name, value) in variables { environment[name] = value }
        let result = try ProcessRunner.run(RelayProcess.executable, ["serve"], environment: environment, timeout: 20)
        #expect(result.status == 64, "\(variables): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(variables): \(result.stderr)")
    }

    /// A flag wins over its variable (the variable is then not even read); an empty variable is
    /// unset, as an env file line `RELAY_DB=` means.
    @Test func flagsWinAndEmptyVariablesAreUnset() throws {
        let relay = try RelayProcess(
            [
                "--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:", "--daily-byte-quota", "1000",
            ],
            environment: [
                "ATTEST_REQUIRED": "false", "RELAY_ORIGIN": "not an origin", "RELAY_PORT": "not a port",
                "RELAY_DAILY_BYTE_QUOTA": "abc", "RELAY_KEEPALIVE_MS": "", "RELAY_LOG": "",
            ])
        let report = try Self.runPeer(port: relay.port, scenario: "environment")
        #expect(report["quota.mac"] == "1008 daily quota exceeded", "the flag's quota: \(report)")
        #expect(relay.terminate() == 0)
    }

    /// Plain WebSocket on a non-loopback address is refused, unless a proxy in front is declared.
    @Test func plainOnAPublicAddressNeedsADeclaredProxy() throws {
        let refused = try ProcessRunner.run(
            RelayProcess.executable, ["serve", "--origin", Self.origin, "--listen", "0.0.0.0:0", "--db", ":memory:"],
            timeout: 20)
        #expect(refused.status == 64 && refused.stderr.contains("plain WebSocket only on a loopback address"))
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "0.0.0.0:0", "--db", ":memory:", "--trust-cloudflare"],
            environment: ["ATTEST_REQUIRED": "false"])
        #expect(relay.terminate() == 0)
        #expect(relay.stderrText().contains("CF-Connecting-IP"))
    }

    // MARK: - The peer

    static func runPeer(port: UInt16, scenario: String) throws -> [String: String] {
        let directory = try TemporaryDirectory()
        let script = directory.appending("peer.py").path
        try Data(peerScript.utf8).write(to: URL(fileURLWithPath: script))
        let result = try ProcessRunner.run(
            "python3", [script, String(port), Hex.encodeRandomRoom(), scenario], timeout: 60)
        guard result.status == 0 else { throw RelayProcessError("peer failed: \(result.stderr)") }
        var report: [String: String] = [:]
        for line in result.stdout.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            report[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        return report
    }

    static let peerScript = #"""
        import base64, json, os, socket, sys, time
        from websockets.sync.client import connect
        from websockets.exceptions import ConnectionClosed, InvalidStatus

        port, room, scenario = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        url = "ws://127.0.0.1:%d/" % port

        def report(key, value):
            print("%s=%s" % (key, value), flush=True)

        def open_socket(room=room, forwarded=None):
            headers = [("x-relay-room", room)]
            if forwarded:
                headers.append(("X-Forwarded-For", forwarded))
            return connect(url, additional_headers=headers, user_agent_header="iTerm2Companion", max_size=None,
                           open_timeout=10, close_timeout=3, ping_interval=None)

        def admit(role, room=room, forwarded=None):
            ws = open_socket(room, forwarded)
            ws.send(json.dumps({"v": 1, "role": role}))
            json.loads(ws.recv(timeout=10))
            ws.send("{}")
            return ws, json.loads(ws.recv(timeout=10))

        def close_of(ws):
            try:
                while True:
                    ws.recv(timeout=10)
            except ConnectionClosed as error:
                return "%d %s" % (error.rcvd.code, error.rcvd.reason) if error.rcvd else "no close frame"
            except TimeoutError:
                return "still open"

        def status_of(room, forwarded):
            try:
                ws = open_socket(room, forwarded)
            except InvalidStatus as error:
                return str(error.response.status_code)
            return "101"

        if scenario == "environment":
            mac, _ = admit("mac", forwarded="198.51.100.1")
            phone, _ = admit("phone", forwarded="198.51.100.1")
            mac.send(b"x" * 600)
            report("quota.spliced", len(phone.recv(timeout=10)))
            phone.send(b"y" * 401)
            report("quota.mac", close_of(mac))
            report("quota.phone", close_of(phone))
            first = open_socket(forwarded="198.51.100.2")
            second = open_socket(forwarded="198.51.100.2")
            report("sameClient.third", status_of(room, "198.51.100.2"))
            report("otherClient", status_of(room, "198.51.100.3"))
        elif scenario == "cycles":
            mac, _ = admit("mac")
            first, _ = admit("phone")
            second = open_socket()
            second.send(json.dumps({"v": 1, "role": "phone"}))
            second.recv(timeout=10)
            second.send("{}")
            report("second", close_of(second))
        elif scenario == "pings":
            # A raw socket, so every ping the relay sends is seen (and answered, or it is dropped).
            raw = socket.create_connection(("127.0.0.1", port), timeout=10)
            key = base64.b64encode(os.urandom(16)).decode()
            raw.sendall(("GET / HTTP/1.1\r\nHost: relay\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nx-relay-room: %s\r\n\r\n"
                         % (key, room)).encode())
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                buffer += raw.recv(4096)
            buffer = buffer.split(b"\r\n\r\n", 1)[1]
            def masked(opcode, payload):
                mask = os.urandom(4)
                return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            raw.sendall(masked(1, json.dumps({"v": 1, "role": "mac"}).encode()))
            raw.settimeout(0.1)
            pings = 0
            deadline = time.time() + 10
            while time.time() < deadline and pings < 3:
                try:
                    data = raw.recv(4096)
                except socket.timeout:
                    continue
                if not data:
                    break
                buffer += data
                while len(buffer) >= 2 and len(buffer) >= 2 + (buffer[1] & 0x7F):
                    opcode, length = buffer[0] & 0x0F, buffer[1] & 0x7F
                    payload, buffer = buffer[2:2 + length], buffer[2 + length:]
                    if opcode == 9:
                        pings += 1
                        raw.sendall(masked(10, payload))
            report("pings", pings)
        """#
}
