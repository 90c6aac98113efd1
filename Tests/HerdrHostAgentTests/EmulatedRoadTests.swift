import Foundation
import Glibc
import TestSupport
import Testing

/// The relay road across an emulated network (`EmulatedNetwork`, herdr-link): the device with a
/// "wifi" and a "cellular" link, the computer on an uplink, the relay at `relay.test` with TLS
/// from a CA of the test's that both sides trust. Each failure ends as documented and loses
/// nothing; the outcomes are asserted, the timings live in `herdr-bench wan`.
@Suite(.serialized) struct EmulatedRoadTests {
    static func network(ipv6OnlyDevice: Bool = false) throws -> EmulatedNetwork {
        try EmulatedNetwork([
            .init(
                "device", links: [.init("wifi", metric: 100), .init("cellular", metric: 200)], ipv6Only: ipv6OnlyDevice),
            .init("computer", links: [.init("uplink")]),
            .init("relay", links: [.init("relay", hostNames: ["relay.test"])]),
        ])
    }

    /// A session that answers every line it reads, and says it is ready.
    static let answering = "stty -echo; echo ready; while read line; do echo \"got-$line\"; done"

    /// Paired, the agent parked, a device connected and answering.
    static func connected(_ network: EmulatedNetwork) throws -> (
        RelayRoadFixture, InteractiveProcess, InteractiveProcess
    ) {
        let road = try RelayRoadFixture(network: network)
        try road.pair()
        try road.configure("session-command", answering)
        let agent = try road.startAgent()
        let device = try road.startConnect()
        guard device.waitFor("ready", timeout: 60) else {
            agent.signal(SIGTERM)
            throw FixtureError("the session did not start: \(device.stderr)")
        }
        return (road, agent, device)
    }

    @Test func aDeviceOnAnIPv6OnlyNetworkPairsAndConnectsThroughAPrivateRelay() throws {
        let network = try Self.network(ipv6OnlyDevice: true)
        defer { network.remove() }
        let addresses = try network.run(in: "device", "ip", ["-4", "-o", "addr", "show", "scope", "global"]).stdout
        #expect(addresses.isEmpty, "no IPv4 address at all on the device: \(addresses)")
        let (road, agent, device) = try Self.connected(network)
        // The fixture owns the relay and the files: it lives as long as the test.
        defer { withExtendedLifetime(road) { agent.signal(SIGTERM) } }
        #expect(device.waitFor("Connected via relay relay.test"), "\(device.stderr)")
        device.writeLine("one")
        #expect(device.waitFor("got-one"), "\(device.stdout) \(device.stderr)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func aPathThatDiesWithoutAResetWhileTypingMovesToAFreshConnection() throws {
        let network = try Self.network()
        defer { network.remove() }
        let (road, agent, device) = try Self.connected(network)
        // The fixture owns the relay and the files: it lives as long as the test.
        defer { withExtendedLifetime(road) { agent.signal(SIGTERM) } }
        // The device's connection dies silently; a new one over the same link works (the
        // phone's old path, its new socket).
        try network.setState("wifi", .cut)
        device.writeLine("two")
        #expect(device.waitFor("got-two", timeout: 60), "\(device.stdout) \(device.stderr)")
        #expect(device.stderr.contains("The link went quiet"), "\(device.stderr)")
        #expect(device.stdout.components(separatedBy: "got-two").count == 2, "once: \(device.stdout)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func wifiGoingAwayMovesTheSessionToCellularAtOnce() throws {
        let network = try Self.network()
        defer { network.remove() }
        let (road, agent, device) = try Self.connected(network)
        // The fixture owns the relay and the files: it lives as long as the test.
        defer { withExtendedLifetime(road) { agent.signal(SIGTERM) } }
        let route = try network.run(in: "device", "ip", ["-6", "route", "get", try network.link("relay").ipv6]).stdout
        #expect(route.contains("dev wifi"), "the session starts on wifi: \(route)")
        try network.setInterface("wifi", up: false)
        // The race for a fresh connection wins, or (when it ran while the kernel was still
        // moving the routes) the reconnect right after it: either way the notice says why.
        #expect(
            device.waitFor(timeout: 30) { _, stderr in
                stderr.contains("The network changed") || stderr.contains("went away); reconnecting")
            }, "\(device.stderr)")
        device.writeLine("three")
        #expect(device.waitFor("got-three", timeout: 60), "\(device.stdout) \(device.stderr)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func aNetworkGoneWhileReconnectingIsShownAndTheSessionComesBackWithIt() throws {
        let network = try Self.network()
        defer { network.remove() }
        let (road, agent, device) = try Self.connected(network)
        // The fixture owns the relay and the files: it lives as long as the test.
        defer { withExtendedLifetime(road) { agent.signal(SIGTERM) } }
        for link in ["wifi", "cellular"] { try network.setInterface(link, up: false) }
        // Each failed try says why, and the next one is visible.
        #expect(
            device.waitFor(timeout: 60) { _, stderr in stderr.components(separatedBy: "econnecting").count > 2 },
            "\(device.stderr)")
        // The relay's name stops resolving too, as when its DNS went with the network.
        try network.setName("relay.test", resolves: false)
        #expect(device.waitFor("cannot resolve relay.test", timeout: 60), "\(device.stderr)")
        device.writeLine("four")
        try network.setName("relay.test", resolves: true)
        try network.setInterface("cellular", up: true)
        #expect(
            device.waitFor("got-four", timeout: 90),
            "typed while away, sent once back: \(device.stdout) \(device.stderr)")
        #expect(device.stdout.components(separatedBy: "got-four").count == 2, "once: \(device.stdout)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func pairingWithARelayNameThatDoesNotResolveOrNoRouteSaysWhy() throws {
        let network = try Self.network()
        defer { network.remove() }
        let road = try RelayRoadFixture(network: network)
        let (host, code) = try road.startPair()
        defer { host.signal(SIGTERM) }
        let nowhere = code.replacingOccurrences(of: "relay.test", with: "nowhere.test")
        let unresolved = try road.startDevicePair(nowhere)
        #expect(
            unresolved.waitFor("cannot resolve nowhere.test", timeout: 30),
            "a name the network does not know: \(unresolved.stderr)")
        unresolved.signal(SIGINT)
        #expect(unresolved.wait(timeout: 30) == 130)

        for link in ["wifi", "cellular"] { try network.setInterface(link, up: false) }
        let unrouted = try road.startDevicePair(code)
        #expect(unrouted.waitFor("Cannot reach relay.test", timeout: 30), "no network at all: \(unrouted.stderr)")
        #expect(unrouted.stderr.contains("unreachable"), "\(unrouted.stderr)")
        unrouted.signal(SIGINT)
        #expect(unrouted.wait(timeout: 30) == 130)
    }

    @Test func aRelayWhoseCANobodyTrustsIsRefusedWithWhereTrustComesFrom() throws {
        let network = try Self.network()
        defer { network.remove() }
        let road = try RelayRoadFixture(network: network)
        let (host, code) = try road.startPair()
        defer { host.signal(SIGTERM) }
        var environment = road.deviceEnvironment("phone")
        environment.removeValue(forKey: "SSL_CERT_FILE")
        let device = try network.interactive(
            in: "device", BuiltProgram.path("herdr-remote"),
            ["pair", code, "--yes", "--no-connect", "--name", "phone"],
            environment: environment)
        #expect(device.waitFor("TLS certificate of relay.test refused", timeout: 30), "\(device.stderr)")
        #expect(device.stderr.contains("SSL_CERT_FILE"), "\(device.stderr)")
        device.signal(SIGINT)
        #expect(device.wait(timeout: 30) == 130)
    }
}
