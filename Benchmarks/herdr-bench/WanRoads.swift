import Foundation
import Glibc
import TestSupport

/// Every road of `herdr-bench wan` on one emulated network (herdr-link): the device with `wifi`
/// and `cellular`, the relay at `relay.test` with TLS from a test CA both sides trust, the
/// computer with an internet `uplink` (herdr-host parked at the relay, its home door on the
/// uplink's unique-local address) and a `tailnet` link whose 100.64/10 address has an sshd (the
/// SSH road, ssh and mosh). Only the device's links are impaired: every road crosses one of
/// them, so each sees the same round trip and loss.
@MainActor
final class WanRoads {
    let network: EmulatedNetwork
    let directory: TemporaryDirectory
    let relay: RelayProcess
    let sshd: SSHServer
    private var agent: InteractiveProcess?
    /// herdr-host's process, whose CPU the cost phase reads.
    var hostPID: pid_t? { agent?.process.pid }
    /// The sshd's (and mosh-server's) address: the computer's tailnet IPv4.
    let tailnetAddress: String
    /// 64 MiB of numbered lines, readable by the sshd's user too.
    let bigFile: URL
    nonisolated static let bigFileBytes = 64 * 1024 * 1024
    nonisolated static let sshPort = 22
    private var nextMoshPort: UInt16 = 60001

    /// The relay's certificate (PEM), issued by the test CA for relay.test.
    let relayCertificate: String

    /// `webRoot`: the relay serves the web client from there (`--web-client`), for `herdr-bench
    /// web`. `beforeRun` runs once the command-line devices are paired, before `herdr-host run`
    /// starts: where more devices pair (a browser, which herdr-host run reads at its start); it
    /// returns how many.
    init(webRoot: String? = nil, beforeRun: (WanRoads) throws -> Int = { _ in 0 }) throws {
        network = try EmulatedNetwork([
            .init("device", links: [.init("wifi", metric: 100), .init("cellular", metric: 200)]),
            .init(
                "computer",
                links: [
                    .init("uplink", hostNames: ["computer.test"]),
                    .init("tailnet", kind: .tailnet, hostNames: ["computer.tailnet.test"]),
                ]),
            .init("relay", links: [.init("relay", hostNames: ["relay.test"])]),
        ])
        do {
            directory = try TemporaryDirectory(prefix: "herdr-bench-wan-")
            let authority = try TestCertificateAuthority(in: directory)
            let origin = "https://relay.test:8443"
            // Every client of the run comes from one address: the per-address upgrade limit
            // would throttle the reconnects of the recovery phases as one noisy client.
            let certificate = try authority.issue(hostName: "relay.test")
            relayCertificate = certificate.certificate
            relay = try network.startRelay(
                on: "relay", port: 8443, certificate: certificate,
                arguments: [
                    "--origin", origin, "--db", directory.appending("relay.sqlite").path, "--upgrades-per-minute",
                    "100000", "--log",
                ] + (webRoot.map { ["--web-client", "--web-root", $0] } ?? []),
                environment: ["ATTEST_REQUIRED": "false"])
            guard let tailnet = try network.link("tailnet").ipv4 else { throw FixtureError("no tailnet IPv4") }
            tailnetAddress = tailnet
            var options = SSHServer.Options()
            options.userName = "herdrbench"
            options.listenAddress = tailnet
            options.port = Self.sshPort
            options.networkNamespace = try network.namespace("computer")
            sshd = try SSHServer(options)
            bigFile = sshd.directory.appending("numbered")
            try ProcessRunner.run(
                "/bin/sh",
                [
                    "-c",
                    "awk 'BEGIN { for (i = 1; i <= \(Self.bigFileBytes / 16); i++) printf \"%015d\\n\", i }' > \(bigFile.path) && chmod 644 \(bigFile.path)",
                ], timeout: 120, check: true)
            try setUpComputer(origin: origin, beforeRun: beforeRun)
        } catch {
            network.remove()
            throw error
        }
    }

    private var authorityFile: String { directory.file("test-ca-cert.pem").path }

    var hostEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appending("host").path
        environment["SSL_CERT_FILE"] = authorityFile
        return environment
    }

    /// The device's two pairings: one connection per paired device at a time, so the relay and
    /// home roads, which take turns with each other, are two devices of the computer.
    static let devices = ["phone", "phone-at-home"]

    /// The environment of the device `name` (its own XDG_CONFIG_HOME): `phone` has the SSH road's
    /// key and host profile too.
    func deviceEnvironment(_ name: String = devices[0]) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appending(name).path
        environment["SSL_CERT_FILE"] = authorityFile
        environment["LANG"] = "C.UTF-8"
        return environment
    }

    /// The device's SSH key (herdr-remote's own, in OpenSSH format), for `ssh -i`.
    var deviceKeyFile: String { directory.appending("\(Self.devices[0])/herdr-remote/id_ed25519").path }

    /// Pairs the device with herdr-host through the relay (its home door configured first, so
    /// the pairing tells the device where it is), starts `herdr-host run`, and authorizes the
    /// device's key at the sshd.
    private func setUpComputer(origin: String, beforeRun: (WanRoads) throws -> Int) throws {
        let uplink = try network.link("uplink")
        try configure("home-listen", "[\(uplink.ipv6)]:4610")
        // Sessions left by a device that went away end soon: the bench starts many.
        try configure("grace-period", "30s")
        for device in Self.devices {
            try RelayProgramPairing.pair(
                origin: origin, computerName: "wan", deviceName: device, hostEnvironment: hostEnvironment,
                deviceEnvironment: deviceEnvironment(device)
            ) { [network] program, arguments, computer, environment in
                try network.interactive(
                    in: computer ? "computer" : "device", program, arguments, environment: environment)
            }
        }
        let paired = Self.devices.count + (try beforeRun(self))
        let started = try network.interactive(
            in: "computer", BuiltProgram.path("herdr-host"), ["run"], environment: hostEnvironment)
        agent = started
        guard
            started.waitFor(
                timeout: 60,
                { _, log in
                    log.components(separatedBy: "parking in its room").count > paired
                })
        else { throw FixtureError("herdr-host run did not park: \(started.stderr)") }
        let key = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["key"], environment: deviceEnvironment(), check: true)
        try sshd.authorize(key.stdout)
    }

    /// Stops herdr-host, the sshd and the relay, and removes the namespaces (and what runs there).
    /// What herdr-host and the relay logged is kept in `.build/bench/wan-herdr-host.log` and
    /// `wan-herdr-relay.log`, to see why a recovery took the time it did.
    func stop() {
        agent?.signal(SIGTERM)
        _ = agent?.wait(timeout: 15)
        sshd.destroy()
        let relayLog = relay.stderrText()
        _ = relay.terminate()
        try? writeText(agent?.stderr ?? "", to: URL(fileURLWithPath: ".build/bench/wan-herdr-host.log"))
        try? writeText(relayLog + relay.stderrText(), to: URL(fileURLWithPath: ".build/bench/wan-herdr-relay.log"))
        network.remove()
        directory.remove()
    }

    func configure(_ key: String, _ value: String) throws {
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["config", key, value], environment: hostEnvironment)
        guard result.status == 0 else { throw FixtureError("herdr-host config \(key) failed: \(result.stderr)") }
    }

    /// What every road's session runs from now on: herdr-host's session command, and the SSH
    /// road's host profile (`wan-ssh`).
    func useSessionCommand(_ command: String) throws {
        try configure("session-command", command)
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"),
            [
                "add", "wan-ssh", "--host", tailnetAddress, "--port", String(Self.sshPort), "--user",
                sshd.user.name, "--command", command, "--replace",
            ], environment: deviceEnvironment())
        guard result.status == 0 else { throw FixtureError("herdr-remote add failed: \(result.stderr)") }
    }

    /// The path every device link gets: `rtt` ms of round trip (half each way), `loss` % each
    /// way, and a rate limit when given.
    func setPath(rtt: Double, loss: Double, rate: String = "off") throws {
        for link in ["wifi", "cellular"] {
            try network.impair(link, "delay=\(format(rtt / 2, 1))ms loss=\(format(loss, 1))% rate=\(rate)")
        }
    }

    /// The next UDP port for a mosh-server (each session its own).
    func moshPort() -> UInt16 {
        defer { nextMoshPort = nextMoshPort >= 60999 ? 60001 : nextMoshPort + 1 }
        return nextMoshPort
    }
}
