import Foundation
import Glibc
import HerdrCrypto
import RelayProtocol
import TestSupport
import Testing

/// `herdr-relay` as a user runs it: the real binary, TLS from real PEM files, a real WebSocket
/// client (PyPI `websockets`) over wss, signals.
@Suite(.serialized) struct ServeCommandTests {
    static let origin = "https://relay.test"

    @Test func helpListsTheCommandsAndExitCodes() throws {
        let top = try ProcessRunner.run(RelayProcess.executable, ["--help"])
        #expect(top.status == 0)
        #expect(top.stdout.contains("serve") && top.stdout.contains("probe"))
        let serve = try ProcessRunner.run(RelayProcess.executable, ["serve", "--help"])
        #expect(serve.status == 0)
        for option in [
            "--listen", "--origin", "--db", "--tls-cert", "--tls-key", "--trust-proxy", "ATTEST_REQUIRED",
            "--web-client",
            "--web-root", "RELAY_WEB_CLIENT",
        ] {
            #expect(serve.stdout.contains(option), "serve --help mentions \(option)")
        }
    }

    @Test(arguments: [
        (["agents", "--help"], "error: unknown subcommand 'agents'. See 'herdr-relay --help'."),
        (["serv", "--help"], "unknown subcommand 'serv'; did you mean 'serve'?"),
        (["serve"], "--origin (or RELAY_ORIGIN) is required"),
        (["serve", "--origin", "https://relay.test/path"], "--origin must be https://"),
        (["serve", "--origin", "https://user@relay.test"], "--origin must be https://"),
        (["serve", "--origin", "https://relay.test", "--listen", "relay.test:443"], "--listen must be"),
        (
            ["serve", "--origin", "https://relay.test", "--listen", "0.0.0.0:8787"],
            "plain WebSocket only on a loopback"
        ),
        (
            ["serve", "--origin", "https://relay.test", "--tls-cert", "/nonexistent.pem"],
            "--tls-cert and --tls-key go together"
        ),
        (
            ["serve", "--origin", "https://relay.test", "--db", "/tmp/x.sqlite", "--store", "redis://127.0.0.1"],
            "--db (SQLite) and --store (Redis) name two stores: give one"
        ),
        (
            ["serve", "--origin", "https://relay.test", "--store", "rediss://127.0.0.1"],
            "--store (RELAY_REDIS_URL): Redis URL must start with redis:// or unix://"
        ),
    ])
    func usageErrorsExit64WithAClearMessage(arguments: [String], message: String) throws {
        let result = try ProcessRunner.run(RelayProcess.executable, arguments, timeout: 20)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    @Test func unusableTLSFilesExit1NamingTheFile() throws {
        let directory = try TemporaryDirectory()
        let garbage = directory.appending("garbage.pem").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: garbage))
        let result = try ProcessRunner.run(
            RelayProcess.executable,
            [
                "serve", "--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:", "--tls-cert", garbage,
                "--tls-key", garbage,
            ], timeout: 20)
        #expect(result.status == 1)
        #expect(result.stderr.contains(garbage))
    }

    /// The whole road over TLS: a mac parks and a phone joins over wss (the client verifies our
    /// certificate), frames cross both ways, SIGTERM closes both with 1001 `server shutting
    /// down` and the relay exits 0. Its log names neither the room nor a client address.
    @Test func servesWSSAndShutsDownCleanlyOnSIGTERM() throws {
        let directory = try TemporaryDirectory()
        let certificate = try TestCertificate(in: directory)
        let database = directory.appending("relay.sqlite").path
        let relay = try RelayProcess(
            [
                "--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", database, "--tls-cert",
                certificate.certificate, "--tls-key", certificate.key,
            ], environment: ["ATTEST_REQUIRED": "false"])
        let room = Hex.encodeRandomRoom()
        let script = directory.appending("peer.py").path
        try Data(Self.wssPeer.utf8).write(to: URL(fileURLWithPath: script))
        let stdin = try PipePair()
        let stdout = try PipePair()
        let peer = try ChildProcess(
            "python3", [script, String(relay.port), room, certificate.certificate], stdin: stdin.read,
            stdout: stdout.write, stderr: 2)
        close(stdin.read)
        close(stdout.write)
        defer {
            close(stdin.write)
            close(stdout.read)
            if peer.isRunning { peer.signal(SIGKILL) }
            _ = peer.wait()
        }
        // The peer prints "ready" once both are admitted and frames crossed; then we stop the relay.
        let ready = Self.readLine(stdout.read, timeout: 30)
        #expect(ready == "ready", "peer said \(ready)")
        #expect(relay.terminate() == 0)
        var lines: [String] = []
        while let line = Optional(Self.readLine(stdout.read, timeout: 15)), !line.isEmpty { lines.append(line) }
        #expect(lines.contains("mac closed 1001 server shutting down"), "\(lines)")
        #expect(lines.contains("phone closed 1001 server shutting down"), "\(lines)")
        #expect(peer.wait(timeout: 15) == 0)
        let log = relay.stderrText()
        #expect(log.contains("shutting down"))
        #expect(!log.contains(room), "the log names the room: \(log)")
        #expect(!log.contains("127.0.0.1:") || log.contains("listening"), "\(log)")
        #expect(!log.contains(" 127.0.0.1 "), "the log names a client address: \(log)")
        // The database survived with mode 0600.
        var info = stat()
        #expect(stat(database, &info) == 0 && info.st_mode & 0o777 == 0o600)
    }

    /// `--store` puts the relay on a Redis: the log names it (never a password), and a Redis that
    /// cannot be reached at start stops the relay with exit 69 saying where it looked.
    @Test func redisStoreIsNamedAndAnUnreachableOneStopsTheStart() throws {
        let redis = try RedisServer()
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--store", redis.url()],
            environment: ["ATTEST_REQUIRED": "false"])
        #expect(relay.terminate() == 0)
        #expect(relay.stderrText().contains("store \(redis.url())"))
        redis.stop()
        let result = try ProcessRunner.run(
            RelayProcess.executable,
            ["serve", "--origin", Self.origin, "--listen", "127.0.0.1:0", "--store", redis.url()],
            environment: ProcessInfo.processInfo.environment.merging(["ATTEST_REQUIRED": "false"]) { $1 },
            timeout: 20)
        #expect(result.status == 69, "\(result.stderr)")
        #expect(result.stderr.contains("Redis at \(redis.url()) is unreachable"), "\(result.stderr)")
    }

    /// A Redis user without the presence channel: the relay still serves, and says at start that a
    /// dead node's rooms then wait for its heartbeat, and which ACL rule would fix it.
    @Test func aRedisUserRefusedThePresenceChannelIsNoted() throws {
        let redis = try RedisServer(tcp: true)
        let rules = ["ACL", "SETUSER", "relay", "on", ">relay-pw", "~*", "resetchannels", "+@all"]
        let made = try ProcessRunner.run("redis-cli", ["-s", redis.socketPath] + rules)
        try #require(made.stdout.contains("OK"), "\(made.stdout) \(made.stderr)")
        let relay = try RelayProcess(
            [
                "--origin", Self.origin, "--listen", "127.0.0.1:0", "--store",
                "redis://relay:relay-pw@127.0.0.1:\(redis.tcpPort ?? 0)/0",
            ],
            environment: ["ATTEST_REQUIRED": "false"])
        #expect(LoopbackHTTP.get(port: relay.port, path: "/healthz")?.status == 200)
        #expect(relay.terminate() == 0)
        let log = relay.stderrText()
        #expect(log.contains("refused SUBSCRIBE") && log.contains("&herdr-relay:presence:*"), "\(log)")
        #expect(!log.contains("relay-pw"), "the password is never logged")
    }

    /// Without `ATTEST_REQUIRED=false` (exactly), attestation is required and the log says phones
    /// cannot pair (the refusals themselves are RelayServerTests' business).
    @Test(arguments: [nil, "False", "0", ""] as [String?])
    func attestationFailsClosed(setting: String?) throws {
        var environment: [String: String] = [:]
        if let setting { environment["ATTEST_REQUIRED"] = setting }
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ":memory:"], environment: environment)
        let status = relay.terminate()
        #expect(status == 0)
        #expect(relay.stderrText().contains("attestation required"))
    }

    static func readLine(_ fd: Int32, timeout: Double) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 200) > 0 else { continue }
            guard read(fd, &byte, 1) == 1 else { break }
            if byte == 10 { break }
            line.append(byte)
        }
        return String(decoding: line, as: UTF8.self)
    }

    /// A mac and a phone over wss with the test CA, a frame each way, then reports how each closed.
    static let wssPeer = #"""
        import asyncio, json, ssl, sys, websockets
        port, room, cafile = int(sys.argv[1]), sys.argv[2], sys.argv[3]
        context = ssl.create_default_context(cafile=cafile)
        url = f"wss://127.0.0.1:{port}/"
        headers = {"x-relay-room": room, "User-Agent": "iTerm2Companion"}

        async def admit(role):
            ws = await websockets.connect(url, ssl=context, additional_headers=headers, user_agent_header=None)
            await ws.send(json.dumps({"v": 1, "role": role}))
            challenge = json.loads(await ws.recv())
            assert len(challenge["nonce"]) == 44
            await ws.send("{}")
            result = json.loads(await ws.recv())
            assert result["ok"] is True, result
            return ws

        async def closed(name, ws):
            try:
                while True:
                    await ws.recv()
            except websockets.ConnectionClosed as e:
                print(f"{name} closed {e.rcvd.code} {e.rcvd.reason}", flush=True)

        async def main():
            mac = await admit("mac")
            phone = await admit("phone")
            await phone.send(b"\x01" * 70000)
            assert await mac.recv() == b"\x01" * 70000
            await mac.send(b"pong")
            assert await phone.recv() == b"pong"
            print("ready", flush=True)
            await asyncio.wait_for(asyncio.gather(closed("mac", mac), closed("phone", phone)), 20)
            print("", flush=True)

        asyncio.run(main())
        """#
}

extension Hex {
    /// A random room name.
    static func encodeRandomRoom() -> String { Hex.encode(SecureRandom.bytes(32)) }
}
