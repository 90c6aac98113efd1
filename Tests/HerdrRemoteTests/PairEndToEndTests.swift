import Foundation
import Glibc
import HerdrKit
import TestSupport
import Testing

/// The whole road, both programs real: `herdr-pair` on a "tailnet host" (sshd in a test network
/// namespace at its 100.64/10 address, the helper run as the account it pairs), `herdr-remote pair`
/// in the root namespace scanning its code, approval answered on the helper, then the attach.
@Suite("Pairing end to end: herdr-remote pair with herdr-pair")
struct PairEndToEndTests {
    /// The herdr-pair built beside herdr-remote, copied where the test user can run it.
    static var herdrPair: String {
        let built = URL(fileURLWithPath: CLIHarness.executable).deletingLastPathComponent()
            .appendingPathComponent("herdr-pair").path
        return (try? UserRunnableCopy.of(built)) ?? built
    }

    @Test("pairs, pins the host key, saves the host and attaches to the tmux-backed session")
    func pairsAndAttaches() throws {
        let host = try PairingHost(session: "paired", herdrPair: Self.herdrPair)
        defer { host.tearDown() }
        let before = try readText(host.server.authorizedKeysFile)
        let url = String(try host.line(startingWith: "READY ").dropFirst(6))
        #expect(try readText(host.server.authorizedKeysFile).contains("herdr-pair:"))

        let cli = try CLIHarness()
        let stdout = try PipePair()
        let stderr = try PipePair()
        let client = try ChildProcess(
            CLIHarness.executable, ["pair", url, "--yes", "--name", "E2E Laptop"], environment: cli.environment,
            stdout: stdout.write, stderr: stderr.write)
        close(stdout.write)
        close(stderr.write)
        defer {
            client.signal(SIGKILL)
            client.wait()
            close(stdout.read)
            close(stderr.read)
        }
        let request = try host.line(startingWith: "REQUEST ")
        #expect(request.hasPrefix("REQUEST E2E Laptop SHA256:"))
        host.answer("y")
        #expect(try host.line(startingWith: "RESULT ") == "RESULT OK")

        // The attach: tmux's status line for session "paired" reaches our stdout.
        var screen = ""
        let deadline = Date().addingTimeInterval(30)
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !screen.contains("[paired]") && Date() < deadline {
            var fds = [pollfd(fd: stdout.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 500) > 0 else { continue }
            let n = read(stdout.read, &buffer, buffer.count)
            if n <= 0 { break }
            screen += String(decoding: buffer[0..<n], as: UTF8.self)
        }
        #expect(screen.contains("[paired]"), "no tmux screen; stdout: \(screen.suffix(500))")
        client.signal(SIGTERM)
        #expect(client.wait(timeout: 10) == 143)

        // Saved, pinned, authorized; the one-time line gone.
        let store = try readText(cli.directory.appendingPathComponent("hosts.json"))
        #expect(store.contains("\"hostname\" : \"\(host.namespace!.innerAddress)\""))
        #expect(store.contains("\"herdrSession\" : \"paired\""))
        #expect(!store.contains("remoteCommand\" : \""))
        let pinned = try ProcessRunner.run(
            "ssh-keygen",
            [
                "-F", "[\(host.namespace!.innerAddress)]:\(host.server.port)", "-f",
                cli.directory.appendingPathComponent("known_hosts").path,
            ])
        #expect(pinned.stdout.contains(try host.server.scannedKey().split(separator: " ")[1]))
        _ = host.helper.wait(timeout: 10)
        let after = try readText(host.server.authorizedKeysFile)
        #expect(!after.contains("herdr-pair:"))
        let added = after.split(separator: "\n").filter { !before.split(separator: "\n").contains($0) }
        #expect(added.count == 1)
        #expect(added.first?.contains("herdr-ios:E2E-Laptop:") == true)
        let device = try readText(cli.directory.appendingPathComponent("id_ed25519.pub")).split(separator: " ")[1]
        #expect(added.first?.contains(device) == true)
        let sessions = try ProcessRunner.run(
            "tmux", ["-S", host.server.herdr.tmuxSocket(session: "paired"), "list-sessions", "-F", "#{session_name}"])
        #expect(sessions.stdout.split(separator: "\n").contains("paired"))
    }

    @Test("a code whose name resolves to loopback fails with notOnTailnet before any SSH byte")
    func loopbackIsNotTheTailnet() throws {
        let host = try PairingHost(session: "never", herdrPair: Self.herdrPair, host: "localhost", onLoopback: true)
        defer { host.tearDown() }
        let url = String(try host.line(startingWith: "READY ").dropFirst(6))
        let cli = try CLIHarness()
        let result = try cli.run(["pair", url, "--yes"])
        #expect(result.status == 24, "\(result.stderr)")
        #expect(result.stderr.contains("not on the tailnet") || result.stderr.contains("tailnet"))
        // sshd's forked child logs the connection a moment later; wait for it (bounded).
        var log = host.server.log()
        for _ in 0..<100 where !log.contains("Connection from 127.0.0.1") {
            usleep(50_000)
            log = host.server.log()
        }
        #expect(log.contains("Connection from 127.0.0.1"))
        #expect(!log.contains("Remote protocol version"))
        let knownHosts = cli.directory.appendingPathComponent("known_hosts")
        let pins = FileManager.default.fileExists(atPath: knownHosts.path) ? try readText(knownHosts) : ""
        #expect(pins.isEmpty)
    }
}
