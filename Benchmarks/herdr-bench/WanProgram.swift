import Foundation
import Glibc
import TestSupport

/// What runs on the device in `herdr-bench wan`: herdr-remote on each of its three roads, and
/// the anchors, `ssh -tt` and mosh (its server's echo, and its prediction display), all to the
/// same computer across the same impaired link.
enum WanProgram: String, CaseIterable, Sendable {
    case sshRoad = "ssh-road"
    case relayRoad = "relay-road"
    case homeRoad = "home-road"
    /// The relay and home roads with `connect --screen`: screens, not bytes.
    case relayScreen = "relay-screen"
    case homeScreen = "home-screen"
    /// The relay road with `connect --screen --predict never`: the computer's echo alone.
    case relayScreenEcho = "relay-screen-echo"
    case ssh
    case mosh
    case moshPredicted = "mosh-predicted"

    var label: String {
        switch self {
        case .sshRoad: "herdr-remote, SSH road"
        case .relayRoad: "herdr-remote, relay road"
        case .homeRoad: "herdr-remote, home road"
        case .relayScreen: "herdr-remote --screen, relay road"
        case .homeScreen: "herdr-remote --screen, home road"
        case .relayScreenEcho: "herdr-remote --screen --predict never, relay road"
        case .ssh: "ssh -tt"
        case .mosh: "mosh (server echo)"
        case .moshPredicted: "mosh (prediction display)"
        }
    }

    var isOurs: Bool {
        [.sshRoad, .relayRoad, .homeRoad, .relayScreen, .homeScreen, .relayScreenEcho].contains(self)
    }
    /// Whether it resumes the session's byte stream (the Noise roads); the SSH road reattaches
    /// (its command starts again), ssh does not come back, mosh shows the screen's latest state.
    var resumesBytes: Bool { self == .relayRoad || self == .homeRoad }
    /// The roads with `connect --screen`: each shares its paired device with a road of bytes.
    var isScreenRoad: Bool { [.relayScreen, .homeScreen, .relayScreenEcho].contains(self) }
    var drawsScreen: Bool { isScreenRoad || self == .mosh || self == .moshPredicted }

    /// The roads chosen with HERDR_BENCH_WAN_ROADS (`ssh-road,relay-road,home-road,relay-screen`:
    /// the default).
    static func roads(_ setting: String?) throws -> [WanProgram] {
        guard let setting, !setting.isEmpty else { return [.sshRoad, .relayRoad, .homeRoad, .relayScreen] }
        return try setting.split(separator: ",").map {
            guard let road = WanProgram(rawValue: String($0)), road.isOurs else {
                throw FixtureError(
                    "HERDR_BENCH_WAN_ROADS: \($0) is not one of ssh-road, relay-road, home-road, relay-screen, home-screen, relay-screen-echo"
                )
            }
            return road
        }
    }
}

/// How to start one device program running `command` on the computer, through `ip netns exec`
/// in the device's namespace. A mosh session starts its server first; `stop` ends it.
@MainActor
struct WanLaunch {
    let executable: String
    let arguments: [String]
    let environment: [String: String]
    let server: MoshServer?

    init(_ which: WanProgram, roads: WanRoads, command: String) throws {
        let ip = try ProcessRunner.which("ip")
        let device = try roads.network.namespace("device")
        let remote = BuiltProgram.path("herdr-remote")
        executable = ip
        let home = which == .homeRoad || which == .homeScreen
        var environment = roads.deviceEnvironment(home ? WanRoads.devices[1] : WanRoads.devices[0])
        var server: MoshServer?
        let program: [String]
        switch which {
        case .sshRoad:
            // The profile (`useSessionCommand`) holds the command; the first connect pins the key.
            program = [remote, "connect", "wan-ssh", "--accept-new-host-key"]
        case .relayRoad: program = [remote, "connect", "wan", "--road", "relay"]
        case .homeRoad: program = [remote, "connect", "wan", "--road", "home"]
        case .relayScreen: program = [remote, "connect", "wan", "--road", "relay", "--screen"]
        case .homeScreen: program = [remote, "connect", "wan", "--road", "home", "--screen"]
        case .relayScreenEcho:
            program = [remote, "connect", "wan", "--road", "relay", "--screen", "--predict", "never"]
        case .ssh:
            program = [
                try ProcessRunner.which("ssh"), "-tt", "-F", "/dev/null", "-i", roads.deviceKeyFile, "-p",
                String(WanRoads.sshPort), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "LogLevel=error", "-o", "BatchMode=yes", "\(roads.sshd.user.name)@\(roads.tailnetAddress)",
                command,
            ]
        case .mosh, .moshPredicted:
            let started = try MoshServer(
                network: roads.network, role: "computer", address: roads.tailnetAddress, port: roads.moshPort(),
                command: command)
            server = started
            environment["MOSH_KEY"] = started.key
            environment["MOSH_PREDICTION_DISPLAY"] = which == .mosh ? "never" : "always"
            // mosh-client needs a terminal: script(1) gives it one and relays our pipes.
            program = [
                try ProcessRunner.which("script"), "-qfec",
                "stty rows 24 cols 80; exec mosh-client \(roads.tailnetAddress) \(started.port)", "/dev/null",
            ]
        }
        arguments = ["netns", "exec", device] + program
        self.environment = environment
        self.server = server
    }

    func stop() { server?.stop() }
}
