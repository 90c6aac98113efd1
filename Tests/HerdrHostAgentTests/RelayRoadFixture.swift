import EndToEndChannel
import Foundation
import Glibc
import HerdrCrypto
import HerdrHostAgent
import HerdrKit
import Noise
import NoiseRoads
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// One relay road, all real processes: `herdr-relay` (plain WebSocket on loopback, its store in
/// a file so it can restart), a computer (`herdr-host`, its own XDG_CONFIG_HOME) and devices
/// (`herdr-remote`, each its own XDG_CONFIG_HOME). With `init(network:)` they run in the
/// namespaces of an emulated network instead, the relay with TLS from a test CA both sides trust.
final class RelayRoadFixture {
    let directory: TemporaryDirectory
    private(set) var relay: RelayProcess
    let port: UInt16
    /// Where clients are told the relay is (a tampering proxy in front sets its own).
    let origin: String
    let hostHome: URL

    /// Where the programs run when not on this machine's loopback.
    struct Placement {
        let network: EmulatedNetwork
        /// The namespaces' roles: the computer's and the devices'.
        let computer: String
        let device: String
        let relayLink: String
        /// The test CA both sides trust (OpenSSL's SSL_CERT_FILE), and the relay's certificate.
        let authority: String
        let certificate: TestCertificate
    }
    let placement: Placement?

    /// A relay on a free loopback port; with `originPort` the relay believes it is reached there
    /// (a proxy in front), so `origin` names it. The computer's home door is off unless
    /// `homeListen` says where it listens: these roads are the relay's.
    init(originPort: UInt16? = nil, relayArguments: [String] = [], homeListen: String = "off") throws {
        directory = try TemporaryDirectory(prefix: "relay-road-")
        hostHome = directory.appending("host")
        placement = nil
        self.relayArguments = relayArguments
        var settings = AgentSettings()
        settings.homeListen = homeListen
        try settings.save(AgentDirectory(url: hostHome.appendingPathComponent("herdr-host")))
        let database = directory.appending("relay.sqlite").path
        let first = try RelayProcess(
            ["--listen", "127.0.0.1:0", "--origin", "http://127.0.0.1:\(originPort ?? 1)", "--db", database, "--log"]
                + relayArguments,
            environment: ["ATTEST_REQUIRED": "false"])
        port = first.port
        if let originPort {
            origin = "http://127.0.0.1:\(originPort)"
            relay = first
        } else {
            // The origin must name the port clients use: restart on the port the first run got.
            _ = first.terminate()
            origin = "http://127.0.0.1:\(port)"
            relay = try Self.startRelay(port: port, origin: origin, database: database, relayArguments)
        }
    }

    /// The road across `network`: the relay in `relayLink`'s namespace at
    /// `https://HOSTNAME:8443` (its first host name), with TLS from a CA of the test's; the
    /// computer in `computer`'s namespace, the devices in `device`'s, both trusting that CA.
    init(
        network: EmulatedNetwork, computer: String = "computer", device: String = "device", relayLink: String = "relay"
    )
        throws
    {
        directory = try TemporaryDirectory(prefix: "relay-road-")
        hostHome = directory.appending("host")
        relayArguments = []
        var settings = AgentSettings()
        settings.homeListen = "off"
        try settings.save(AgentDirectory(url: hostHome.appendingPathComponent("herdr-host")))
        let link = try network.link(relayLink)
        guard let name = link.hostNames.first else { throw FixtureError("link \(relayLink) has no host name") }
        let authority = try TestCertificateAuthority(in: directory)
        let certificate = try authority.issue(hostName: name)
        port = 8443
        origin = "https://\(name):\(port)"
        placement = Placement(
            network: network, computer: computer, device: device, relayLink: relayLink,
            authority: authority.certificate, certificate: certificate)
        relay = try network.startRelay(
            on: relayLink, port: port, certificate: certificate,
            arguments: ["--origin", origin, "--db", directory.appending("relay.sqlite").path, "--log"],
            environment: ["ATTEST_REQUIRED": "false"])
    }

    /// Extra `herdr-relay serve` arguments, kept for restarts.
    let relayArguments: [String]

    private static func startRelay(port: UInt16, origin: String, database: String, _ extra: [String]) throws
        -> RelayProcess
    {
        try RelayProcess(
            ["--listen", "127.0.0.1:\(port)", "--origin", origin, "--db", database, "--log"] + extra,
            environment: ["ATTEST_REQUIRED": "false"])
    }

    /// Stops the relay (SIGTERM: every socket gets 1001) and starts it again, same port and store.
    func restartRelay() throws {
        _ = relay.terminate()
        if let placement {
            relay = try placement.network.startRelay(
                on: placement.relayLink, port: port, certificate: placement.certificate,
                arguments: ["--origin", origin, "--db", directory.appending("relay.sqlite").path, "--log"],
                environment: ["ATTEST_REQUIRED": "false"])
            return
        }
        relay = try Self.startRelay(
            port: port, origin: origin, database: directory.appending("relay.sqlite").path, relayArguments)
    }

    /// Set by `useHerdrStandIn`: HOME and SHELL for the computer's sessions.
    private var hostSessionEnvironment: [String: String] = [:]
    /// The computer's herdr (the stand-in), once `useHerdrStandIn` gave it one.
    private(set) var herdr: HerdrStandIn?
    /// The tmux socket behind the computer's default herdr session, once there is a stand-in.
    var standInTmuxSocket: String? { herdr?.tmuxSocket(session: HerdrStandIn.defaultSession) }

    var hostEnvironment: [String: String] { hostEnvironment(home: hostHome) }

    /// The environment of a herdr-host whose configuration lives under `home`.
    func hostEnvironment(home: URL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        if let placement { environment["SSL_CERT_FILE"] = placement.authority }
        environment.merge(hostSessionEnvironment) { $1 }
        return environment
    }

    /// Starts a program of the computer's (`computer: true`) or a device's, on this machine or in
    /// its namespace of the emulated network.
    func launch(_ program: String, _ arguments: [String], computer: Bool, environment: [String: String]) throws
        -> InteractiveProcess
    {
        guard let placement else { return try InteractiveProcess(program, arguments, environment: environment) }
        return try placement.network.interactive(
            in: computer ? placement.computer : placement.device, program, arguments, environment: environment)
    }

    /// Gives the computer a HOME with the herdr stand-in first on PATH for login shells (tmux
    /// behind it; sessions and agents through `herdr`), and /bin/sh as SHELL: herdr-host's
    /// default attach command (`exec "$SHELL" -lc 'herdr …'`) then lands in tmux, and herdr-host
    /// finds herdr's sockets under that HOME (from its namespace too: they are paths).
    @discardableResult
    func useHerdrStandIn() throws -> HerdrStandIn {
        if let herdr { return herdr }
        let home = directory.appending("host-home")
        let standIn = try HerdrStandIn(home: home)
        try standIn.appendToProfile("PS1='remote$ '\nexport PS1\n")
        // tmux's own shell, without rc files, and a prompt a test can wait for.
        try Data("set -g default-shell /bin/sh\nset -g default-command 'PS1=\"remote$ \" exec /bin/sh'\n".utf8).write(
            to: home.appendingPathComponent(".tmux.conf"))
        hostSessionEnvironment = ["HOME": home.path, "SHELL": "/bin/sh"]
        herdr = standIn
        return standIn
    }

    deinit { herdr?.stop() }

    func deviceHome(_ name: String) -> URL { directory.appending("device-\(name)") }

    func deviceEnvironment(_ name: String) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = deviceHome(name).path
        if let placement { environment["SSL_CERT_FILE"] = placement.authority }
        return environment
    }

    // MARK: - The computer

    var agentDirectory: AgentDirectory { agentDirectory(home: hostHome) }

    func agentDirectory(home: URL) -> AgentDirectory { AgentDirectory(url: home.appendingPathComponent("herdr-host")) }
    var registry: DeviceRegistry { DeviceRegistry(directory: agentDirectory) }

    /// `herdr-host pair`, its code shown.
    func startPair(_ extra: [String] = []) throws -> (process: InteractiveProcess, code: String) {
        let pair = try launch(
            BuiltProgram.path("herdr-host"), ["pair", "--relay", origin, "--name", "studio"] + extra, computer: true,
            environment: hostEnvironment)
        guard let code = pair.waitForCompanionCode(), pair.waitFor("waiting for a device")
        else {
            throw FixtureError("herdr-host pair showed no code, or did not park: \(pair.stdout) \(pair.stderr)")
        }
        return (pair, code)
    }

    /// `herdr-host run`, parked for every device it knows; its configuration under `home` (the
    /// fixture's computer by default), in `environment` (`hostEnvironment(home:)` by default).
    func startAgent(parkedFor count: Int = 1, home: URL? = nil, environment: [String: String]? = nil) throws
        -> InteractiveProcess
    {
        let home = home ?? hostHome
        let agent = try launch(
            BuiltProgram.path("herdr-host"), ["run"], computer: true,
            environment: environment ?? hostEnvironment(home: home))
        guard waitForAgent(home: home, { $0.rooms.filter { $0.state == "parked" }.count == count }) else {
            agent.signal(SIGTERM)
            _ = agent.wait(timeout: 15)
            throw FixtureError("the agent did not park: \(agent.stderr)")
        }
        return agent
    }

    /// `herdr-host config KEY VALUE`.
    func configure(_ key: String, _ value: String) throws {
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["config", key, value], environment: hostEnvironment)
        guard result.status == 0 else { throw FixtureError("herdr-host config \(key) failed: \(result.stderr)") }
    }

    /// Waits (bounded) until the agent's status file says what `condition` wants.
    @discardableResult
    func waitForAgent(timeout: Double = 60, home: URL? = nil, _ condition: (AgentStatus) -> Bool) -> Bool {
        let directory = agentDirectory(home: home ?? hostHome)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = try? AgentStatus.load(directory), status.isRunning, condition(status) { return true }
            usleep(50_000)
        }
        return false
    }

    // MARK: - Devices

    /// `herdr-remote pair CODE --yes --no-connect --name NAME`.
    func startDevicePair(_ code: String, name: String = "phone", extra: [String] = []) throws -> InteractiveProcess {
        try launch(
            BuiltProgram.path("herdr-remote"), ["pair", code, "--yes", "--no-connect", "--name", name] + extra,
            computer: false, environment: deviceEnvironment(name))
    }

    /// `herdr-remote connect HOST` on the device `name`, its stdin and stdout pipes; inside
    /// `namespace` when given.
    func startConnect(
        _ host: String = "studio", device name: String = "phone", extra: [String] = [],
        in namespace: TestNetworkNamespace? = nil
    ) throws -> InteractiveProcess {
        let program = BuiltProgram.path("herdr-remote")
        guard let namespace else {
            return try launch(
                program, ["connect", host] + extra, computer: false, environment: deviceEnvironment(name))
        }
        return try InteractiveProcess(
            try ProcessRunner.which("ip"), ["netns", "exec", namespace.name, program, "connect", host] + extra,
            environment: deviceEnvironment(name))
    }

    /// The `after`-th code a device showed (0 = the first).
    static func shownCode(_ device: InteractiveProcess, after: Int = 0, timeout: Double = 30) -> String? {
        device.waitForMatch(#"Type this code on [^:]+: (\d{3} \d{3})"#, timeout: timeout, after: after)
    }

    /// A full pairing: the code shown, the device's code typed on the computer, both ending well.
    func pair(deviceName: String = "phone") throws {
        try RelayProgramPairing.pair(
            origin: origin, computerName: "studio", deviceName: deviceName, hostEnvironment: hostEnvironment,
            deviceEnvironment: deviceEnvironment(deviceName)
        ) { [self] program, arguments, computer, environment in
            try launch(program, arguments, computer: computer, environment: environment)
        }
    }

    /// Another computer at this relay: a herdr-host configuration of its own under `host-NAME`
    /// (home door off), with `home` as its HOME (no herdr there unless a test puts one), paired
    /// with the device `deviceName`, which saves it as `name`. Start it with
    /// `startAgent(home: computer.home, environment: computer.environment)`.
    func pairComputer(_ name: String, home: URL, deviceName: String = "phone") throws -> (
        home: URL, environment: [String: String]
    ) {
        let configuration = directory.appending("host-\(name)")
        var settings = AgentSettings()
        settings.homeListen = "off"
        try settings.save(agentDirectory(home: configuration))
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        var environment = hostEnvironment(home: configuration)
        environment["HOME"] = home.path
        environment["SHELL"] = "/bin/sh"
        try RelayProgramPairing.pair(
            origin: origin, computerName: name, deviceName: deviceName, hostEnvironment: environment,
            deviceEnvironment: deviceEnvironment(deviceName)
        ) { [self] program, arguments, computer, environment in
            try launch(program, arguments, computer: computer, environment: environment)
        }
        return (configuration, environment)
    }

    /// What the device `name` kept: its host profile and secret, read from its files.
    func devicePairing(_ name: String = "phone") throws -> (profile: HostProfile, pairing: RelayRoad) {
        let config = deviceHome(name).appendingPathComponent("herdr-remote")
        let hosts = try JSONDecoder().decode(
            [HostProfile].self, from: Data(contentsOf: config.appendingPathComponent("hosts.json")))
        guard let profile = hosts.first(where: { $0.companion != nil }), let road = profile.companion else {
            throw FixtureError("no relay host saved")
        }
        guard
            let secret = try SecretStore(file: config.appendingPathComponent("secrets.json")).roomSecret(
                for: profile.id),
            let key = try StaticKeyFile.load(config.appendingPathComponent("companion_key"))
        else { throw FixtureError("the device kept no secret or key") }
        let pairing = RelayRoad.Pairing(
            relay: try RelayEndpoint(parsing: road.relay ?? ""),
            computerKey: Base64URL.decodeCanonical(road.computerKey) ?? [],
            pairingID: road.pairingID, roomSecret: secret, registered: road.registered)
        return (profile, RelayRoad(pairing: pairing, deviceName: name, staticKey: key))
    }

    /// A device connection that succeeds within `timeout` seconds (retrying while the computer is
    /// not parked yet, as after a restart).
    func connectDevice(_ connection: RelayRoad, timeout: Double = 60) throws
        -> RoadConnection
    {
        let deadline = Date().addingTimeInterval(timeout)
        var last: RoadFailure?
        while Date() < deadline {
            do {
                return try connection.connect()
            } catch {
                if case .pairingGone = error { throw error }
                last = error
                usleep(200_000)
            }
        }
        throw last ?? .unavailable("timed out")
    }
}
