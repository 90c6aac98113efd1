import CompanionPairing
import Foundation
import Glibc
import HerdrHostAgent
import HerdrKit
import TestSupport
import Testing

/// herdr-host as a person uses it: help, usage errors, the agent's life, and what it prints.
@Suite(.serialized) struct HostCommandTests {
    @Test func helpNamesEveryCommandAndTheService() throws {
        let top = try ProcessRunner.run(BuiltProgram.path("herdr-host"), ["--help"])
        #expect(top.status == 0)
        for word in ["pair", "run", "devices", "unpair", "status", "systemctl --user enable --now herdr-host"] {
            #expect(top.stdout.contains(word), "\(word)")
        }
        let pair = try ProcessRunner.run(BuiltProgram.path("herdr-host"), ["pair", "--help"])
        for option in ["--relay", "--name", "--session", "--png"] { #expect(pair.stdout.contains(option)) }
    }

    @Test(arguments: [
        (["pair"], "give the relay with --relay"),
        (["pair", "--relay", "https://relay.example.com/path"], "--relay must be https://host[:port]"),
        (["pair", "--relay", "http://relay.example.com"], "http:// only for a loopback host"),
        (["pair", "--relay", "https://relay.example.com", "--session", "a b"], "invalid herdr session name"),
        (
            ["pair", "--relay", "https://relay.example.com", "--name", String(repeating: "n", count: 65)],
            "--name must be 1-64"
        ),
        (["unpair", "nobody"], "no paired device matches 'nobody'"),
        (["frobnicate"], "unknown"),
        (["agents", "--help"], "error: unknown subcommand 'agents'. See 'herdr-host --help'."),
        (["devcies", "-h"], "unknown subcommand 'devcies'; did you mean 'devices'?"),
        (["devices", "all", "--help"], "unexpected argument 'all'"),
    ])
    func usageErrorsExit64(arguments: [String], message: String) throws {
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        let result = try ProcessRunner.run(BuiltProgram.path("herdr-host"), arguments, environment: environment)
        #expect(result.status == 64, "\(arguments): \(result.stderr)")
        #expect(result.stderr.contains(message), "\(arguments): \(result.stderr)")
    }

    /// The agent picks up a pairing and an unpairing made while it runs; one agent at a time;
    /// `status` says whether it runs.
    @Test func theAgentFollowsPairingsWhileItRuns() throws {
        let road = try RelayRoadFixture()
        var status = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["status"], environment: road.hostEnvironment)
        #expect(status.status == 3 && status.stdout.contains("not running"))
        let agent = try road.startAgent(parkedFor: 0)
        let second = try ProcessRunner.run(BuiltProgram.path("herdr-host"), ["run"], environment: road.hostEnvironment)
        #expect(second.status == 69 && second.stderr.contains("another herdr-host run is going"))
        try road.pair()
        #expect(road.waitForAgent { $0.rooms.first?.state == "parked" }, "picked up without a restart")
        status = try ProcessRunner.run(BuiltProgram.path("herdr-host"), ["status"], environment: road.hostEnvironment)
        #expect(status.status == 0)
        #expect(status.stdout.contains("herdr-host run is running"))
        #expect(status.stdout.contains("phone") && status.stdout.contains("parked"))
        let devices = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["devices"], environment: road.hostEnvironment)
        let device = try #require(try road.registry.devices().first)
        #expect(devices.stdout.contains(device.fingerprint) && devices.stdout.contains("established"))
        #expect(devices.stdout.contains("127.0.0.1:\(road.port)"))
        let secret = try #require(try road.registry.roomSecret(for: device.id))
        #expect(!devices.stdout.contains(Data(secret).base64EncodedString()))
        // Unpaired by its key fingerprint's start.
        let unpair = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["unpair", String(device.fingerprint.dropFirst(7).prefix(10))],
            environment: road.hostEnvironment)
        #expect(unpair.status == 0, "\(unpair.stderr)")
        #expect(road.waitForAgent { $0.rooms.isEmpty }, "dropped without a restart")
        agent.signal(SIGTERM)
        #expect(agent.wait(timeout: 15) == 0)
        #expect(!FileManager.default.fileExists(atPath: road.agentDirectory.agentStatusFile.path))
        // Every file of the state is private.
        for file in try FileManager.default.contentsOfDirectory(atPath: road.agentDirectory.url.path) {
            #expect(try fileMode(road.agentDirectory.url.appendingPathComponent(file).path) == 0o600, "\(file)")
        }
        #expect(try fileMode(road.agentDirectory.url.path) == 0o700)
    }

    /// `--png` writes a picture of the same code, which the device's `--image` reads.
    @Test func theCodeAsAPictureIsReadByTheDevice() throws {
        let road = try RelayRoadFixture()
        let png = road.directory.appending("code.png").path
        let (host, code) = try road.startPair(["--png", png])
        let device = try InteractiveProcess(
            BuiltProgram.path("herdr-remote"), ["pair", "--image", png, "--yes", "--no-connect", "--name", "phone"],
            environment: road.deviceEnvironment("phone"))
        let shown = try #require(RelayRoadFixture.shownCode(device))
        #expect(host.waitFor("Type the code it shows"))
        host.writeLine(shown)
        #expect(device.wait(timeout: 30) == 0, "\(device.stderr)")
        #expect(host.wait(timeout: 30) == 0)
        #expect(device.stderr.contains("Pairing code for studio"))
        #expect(code.hasPrefix("herdr://companion?"))
    }

    /// Ctrl+C on the computer while it asks: the device is told no, nothing is kept anywhere.
    @Test func cancellingOnTheComputerLeavesNothing() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let device = try road.startDevicePair(code)
        _ = try #require(RelayRoadFixture.shownCode(device))
        #expect(host.waitFor("Type the code it shows"))
        host.signal(SIGINT)
        #expect(host.wait(timeout: 15) == 130)
        #expect(device.wait(timeout: 30) == 22, "rejected: \(device.stderr)")
        #expect(try road.registry.devices().isEmpty)
        let hosts = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["hosts"], environment: road.deviceEnvironment("phone"))
        #expect(hosts.stdout.contains("No hosts yet"))
    }

    /// Ctrl+C on the device while it shows the code: the computer's question is voided; nothing
    /// is kept on the device.
    @Test func cancellingOnTheDeviceLeavesNothing() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let device = try road.startDevicePair(code)
        _ = try #require(RelayRoadFixture.shownCode(device))
        #expect(host.waitFor("Type the code it shows"))
        device.signal(SIGINT)
        #expect(device.wait(timeout: 15) == 130)
        #expect(host.waitFor("that code no longer counts"))
        let hosts = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["hosts"], environment: road.deviceEnvironment("phone"))
        #expect(hosts.stdout.contains("No hosts yet"))
        host.signal(SIGTERM)
        #expect(host.wait(timeout: 15) == 143)
        #expect(try road.registry.devices().isEmpty)
    }
}

/// herdr-remote's side of a companion code: what it refuses before anything is sent.
@Suite(.serialized) struct DeviceCodeTests {
    @Test(arguments: [
        ("herdr://companion?v=2", 20, "unsupported version"),
        ("herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=AAAA", 20, "computer key (rs)"),
    ])
    func aBadCodeIsRefusedBeforeAnythingIsSent(code: String, status: Int32, message: String) throws {
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["pair", code, "--yes"], environment: environment)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }

    @Test func anExpiredCodeIsRefused() throws {
        let code = CompanionCode(
            staticPublicKey: [UInt8](repeating: 1, count: 32), pairingID: [UInt8](repeating: 2, count: 16),
            relay: try .init(parsing: "https://relay.example.com"), computerName: "studio",
            expiresAt: Date().addingTimeInterval(-5))
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["pair", code.url, "--yes"], environment: environment)
        #expect(result.status == 21, "\(result.stderr)")
        #expect(result.stderr.contains("expired"))
    }

    /// A relay that requires App Attest refuses the device: it says so and what to do.
    @Test func anAttestationRelayIsExplained() throws {
        let directory = try TemporaryDirectory()
        let relay = try RelayProcess(["--listen", "127.0.0.1:0", "--origin", "http://127.0.0.1:1", "--db", ":memory:"])
        let origin = "http://127.0.0.1:\(relay.port)"
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.path
        let host = try InteractiveProcess(
            BuiltProgram.path("herdr-host"), ["pair", "--relay", origin, "--name", "studio"], environment: environment)
        let code = try #require(host.waitForCompanionCode())
        var deviceEnvironment = ProcessInfo.processInfo.environment
        deviceEnvironment["XDG_CONFIG_HOME"] = directory.appending("device").path
        let device = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["pair", code, "--yes", "--no-connect"], environment: deviceEnvironment,
            timeout: 60)
        #expect(device.status != 0)
        #expect(device.stderr.contains("App Attest"), "\(device.stderr)")
        host.signal(SIGTERM)
        _ = host.wait(timeout: 15)
        _ = relay.terminate()
    }
}
