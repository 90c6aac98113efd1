import Foundation
import Glibc
import HerdrCrypto
import HerdrHostAgent
import HerdrKit
import PeerGate
import TestSupport
import Testing

/// The home road with real programs in a network namespace the test makes: the computer
/// (`herdr-host run`, its home door on `[::]`) and the relay in the root namespace; the device
/// (`herdr-remote connect`) inside, reaching the computer over a veth "home network" (an IPv6
/// unique-local /64 and an IPv4 link-local /24) and the relay over a second, tailnet-addressed
/// veth (100.64/10) through a forwarder on each side, so the relay stays reachable when the home
/// link goes down.
@Suite(.serialized) struct HomeRoadTests {
    /// Everything one test needs; torn down in reverse.
    final class HomeNetwork {
        let namespace: TestNetworkNamespace
        let link: TestNetworkNamespace.HomeLink
        let road: RelayRoadFixture
        let homePort: UInt16
        private var forwarders: [InteractiveProcess] = []

        /// `pair`: pair through the relay first (else the test pairs as it needs).
        init(configure: [(String, String)] = [], pair: Bool = true) throws {
            namespace = try TestNetworkNamespace()
            link = try namespace.addHomeLink()
            homePort = try LoopbackSocket.closedPort()
            road = try RelayRoadFixture(homeListen: "[::]:\(homePort)")
            // The relay at 127.0.0.1:PORT in both namespaces: inside, a forwarder to the root's
            // tailnet address; there, one to the relay.
            let python = try ProcessRunner.which("python3")
            let middle = try LoopbackSocket.closedPort()
            let outer = try InteractiveProcess(
                python, ["-c", Self.forwarder, namespace.rootAddress, String(middle), "127.0.0.1", String(road.port)],
                environment: [:])
            let inner = try InteractiveProcess(
                try ProcessRunner.which("ip"),
                [
                    "netns", "exec", namespace.name, python, "-c", Self.forwarder, "127.0.0.1", String(road.port),
                    namespace.rootAddress, String(middle),
                ], environment: [:])
            forwarders = [outer, inner]
            guard outer.waitFor("ready"), inner.waitFor("ready") else {
                throw FixtureError("the forwarders did not start: \(outer.stderr) \(inner.stderr)")
            }
            if pair { try road.pair() }
            for (key, value) in configure { try road.configure(key, value) }
        }

        deinit {
            for forwarder in forwarders { forwarder.signal(SIGKILL) }
            namespace.remove()
        }

        /// The device's saved home addresses (from the code, then from every channel).
        func savedHomeAddresses() throws -> [String] {
            try road.devicePairing().profile.companion?.home.map(\.description) ?? []
        }

        /// Replaces the device's saved home addresses (as a stale lease would leave them).
        func setSavedHomeAddresses(_ addresses: [String]) throws {
            let file = road.deviceHome("phone").appending(path: "herdr-remote/hosts.json")
            var hosts = try JSONDecoder().decode([HostProfile].self, from: Data(contentsOf: file))
            hosts[0].companion?.home = try addresses.map { try HomeAddress(parsing: $0) }
            try JSONEncoder().encode(hosts).write(to: file)
        }

        /// `herdr-host status`.
        func hostStatus() throws -> String {
            let result = try ProcessRunner.run(
                BuiltProgram.path("herdr-host"), ["status"], environment: road.hostEnvironment)
            return result.stdout
        }

        /// A TCP forwarder: listen on argv 1:2, each connection piped to argv 3:4, both ways.
        static let forwarder = """
            import socket, sys, threading
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((sys.argv[1], int(sys.argv[2])))
            listener.listen(64)
            print("ready", flush=True)
            def pipe(a, b):
                try:
                    while True:
                        data = a.recv(65536)
                        if not data:
                            break
                        b.sendall(data)
                except OSError:
                    pass
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
            while True:
                client, _ = listener.accept()
                try:
                    upstream = socket.create_connection((sys.argv[3], int(sys.argv[4])), timeout=5)
                    upstream.settimeout(None)
                except OSError:
                    client.close()
                    continue
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=pipe, args=(a, b), daemon=True).start()

            """
    }

    /// From inside the namespace: connect to `host`:`port`, send one well-framed message of 48
    /// garbage bytes (a handshake from nobody), report the first read.
    static func knock(_ namespace: TestNetworkNamespace, _ host: String, _ port: UInt16) throws -> String {
        let script = """
            import os, socket, sys
            try:
                s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5)
                s.sendall(b"\\x00\\x30" + os.urandom(48))
                data = s.recv(4096)
                print("eof" if data == b"" else "data:%d" % len(data))
            except (ConnectionResetError, BrokenPipeError):
                print("reset")
            except socket.timeout:
                print("timeout")
            """
        return try namespace.run(try ProcessRunner.which("python3"), ["-c", script, host, String(port)]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aTailnetPeerGetsNotOneByteAndTheStatusCountsIt() throws {
        let home = try HomeNetwork()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        #expect(home.road.waitForAgent { $0.home?.addresses.isEmpty == false }, "\(agent.stderr)")

        let outcome = try Self.knock(home.namespace, home.namespace.rootAddress, home.homePort)
        #expect(outcome == "reset", "a tailnet peer is cut off before a byte: \(outcome)")
        #expect(home.road.waitForAgent { $0.home?.refusedCount == 1 }, "the refusal reaches the status file")
        let status = try home.hostStatus()
        #expect(status.contains("Refused: 1 before a byte was read"), "\(status)")
        #expect(status.contains("Last refused: \(home.namespace.innerAddress)"), "\(status)")
        #expect(status.contains("is a tailnet address (100.64.0.0/10)"), "\(status)")
        #expect(!status.contains("Last device:"), "a refused peer is no device: \(status)")

        // A home peer that is no paired device gets through the gate, fails the handshake, and
        // does not become "the last device".
        let stranger = try Self.knock(home.namespace, home.link.rootIPv6, home.homePort)
        #expect(stranger == "eof" || stranger == "reset", "a stranger's garbage gets no answer: \(stranger)")
        #expect(home.road.waitForAgent { $0.home?.failedHandshakes == 1 }, "\(agent.stderr)")
        #expect(try home.hostStatus().contains("Last device:") == false)
    }

    @Test func aRefusedInterfaceGetsNotOneByteEvenFromAHomeAddress() throws {
        let home = try HomeNetwork()
        try home.road.configure("home-refuse", "\(home.link.rootInterface),wwan*")
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        #expect(home.road.waitForAgent { $0.home?.error == nil && $0.home != nil }, "\(agent.stderr)")
        let outcome = try Self.knock(home.namespace, home.link.rootIPv6, home.homePort)
        #expect(outcome == "reset", "\(outcome)")
        #expect(home.road.waitForAgent { $0.home?.lastRefused?.reason == .refusedInterface })
        let status = try home.hostStatus()
        #expect(status.contains("arrived on \(home.link.rootInterface), which this listener refuses"), "\(status)")
        #expect(
            home.road.waitForAgent { status in
                status.home?.addresses.contains { $0.contains(home.link.rootIPv6) } == false
            }, "a refused interface's address is never offered to devices")
    }

    @Test func aHomeDeviceAttachesOverTheHomeNetworkAndTheRaceTakesIt() throws {
        let home = try HomeNetwork()
        try home.road.useHerdrStandIn()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        // The code carried the door's addresses: the ULA one among them.
        #expect(try home.savedHomeAddresses().contains("[\(home.link.rootIPv6)]:\(home.homePort)"))

        let device = try home.road.startConnect(in: home.namespace)
        #expect(device.waitFor("Connected via home network"), "\(device.stderr)")
        #expect(device.waitFor("remote$"), "\(device.stdout) \(device.stderr)")
        device.writeLine("echo over-$((40+2))-home")
        #expect(device.waitFor("over-42-home"), "\(device.stdout)")
        #expect(
            home.road.waitForAgent { $0.home?.lastDevice?.name == "phone" },
            "the status tells how the device arrived")
        let status = try home.hostStatus()
        #expect(
            status.contains("Last device: phone from \(home.link.innerIPv6)")
                || status.contains("Last device: phone from \(home.link.innerIPv4)"), "\(status)")
        usleep(2_300_000)  // past the quick-exit window: a clean exit now is a clean exit
        device.writeLine("exit")
        #expect(device.wait(timeout: 30) == 0, "\(device.stderr)")
        // `hosts` tells when each road last worked.
        let hosts = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["hosts"], environment: home.road.deviceEnvironment("phone"))
        #expect(hosts.stdout.contains("studio roads:"), "\(hosts.stdout)")
        let homeLine = hosts.stdout.split(separator: "\n").first { $0.contains("  home network  ") } ?? ""
        #expect(!homeLine.contains("never yet"), "\(hosts.stdout)")

        // --road relay takes the relay even though home answers.
        let forced = try home.road.startConnect(extra: ["--road", "relay"], in: home.namespace)
        #expect(forced.waitFor("Connected via relay"), "\(forced.stderr)")
        usleep(2_300_000)
        forced.writeLine("exit")
        #expect(forced.wait(timeout: 30) == 0, "\(forced.stderr)")
    }

    @Test func withTheHomeLinkDownTheRelayCarriesTheSession() throws {
        let home = try HomeNetwork()
        try home.road.useHerdrStandIn()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        try home.namespace.setHomeLink(home.link, up: false)
        let device = try home.road.startConnect(in: home.namespace)
        #expect(device.waitFor("Connected via relay"), "\(device.stderr)")
        device.writeLine("echo relay-$((40+2))")
        #expect(device.waitFor("relay-42"), "\(device.stdout)")
        usleep(2_300_000)
        device.writeLine("exit")
        #expect(device.wait(timeout: 30) == 0, "\(device.stderr)")
        // --road home with no home link fails plainly.
        let forced = try home.road.startConnect(extra: ["--road", "home"], in: home.namespace)
        #expect(forced.wait(timeout: 60) != 0)
        #expect(forced.stderr.contains("no home address answered"), "\(forced.stderr)")
    }

    @Test func anIdleSessionLeavesAHomeLinkThatGoesDownAtOnce() throws {
        let home = try HomeNetwork()
        try home.road.useHerdrStandIn()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try home.road.startConnect(in: home.namespace)
        #expect(device.waitFor("Connected via home network"), "\(device.stderr)")
        device.writeLine("echo one-$((40+1))")
        #expect(device.waitFor("one-41"), "\(device.stdout)")
        // Nothing is owed: only the kernel's news of the address going can move the session
        // before an idle ping would (5 s), and the notice says which it was.
        try home.namespace.setHomeLink(home.link, up: false)
        #expect(device.waitFor("The network changed", timeout: 30), "\(device.stderr)")
        #expect(device.stderr.contains("via relay"), "\(device.stderr)")
        device.writeLine("echo two-$((40+2))")
        #expect(device.waitFor("two-42"), "\(device.stdout) \(device.stderr)")
        usleep(2_300_000)
        device.writeLine("exit")
        #expect(device.wait(timeout: 30) == 0, "\(device.stderr)")
    }

    @Test func withNoReattachTheHomeLinkDyingEndsTheSessionInsteadOfMovingIt() throws {
        let home = try HomeNetwork()
        try home.road.useHerdrStandIn()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try home.road.startConnect(extra: ["--no-reattach"], in: home.namespace)
        #expect(device.waitFor("Connected via home network"), "\(device.stderr)")
        try home.namespace.setHomeLink(home.link, up: false)
        #expect(device.wait(timeout: 60) == 13, "\(device.stderr)")
        #expect(device.stderr.contains("reconnecting is off"), "\(device.stderr)")
        #expect(!device.stderr.contains("Reconnected"), "\(device.stderr)")
    }

    @Test func theHomeLinkDyingMidSessionResumesOverTheRelayAndBackHomeWithoutLosingAByte() throws {
        // About 20 s of output at the generator's pace: long enough for both moves.
        let size = 40 * 1024 * 1024
        let output = try RelayTerminalTests.PacedOutput(prefix: "home-switch-", size: size)
        let home = try HomeNetwork(configure: [
            ("session-command", "stty raw -echo; exec \(output.command)"), ("resume-buffer", "64MiB"),
        ])
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try home.road.startConnect(in: home.namespace)
        #expect(device.waitFor("Connected via home network"), "\(device.stderr)")
        #expect(
            device.waitForBytes(timeout: 120) { out, _ in out.count >= 2 * 1024 * 1024 },
            "output before the cut: \(device.stdoutBytes.count) bytes; \(device.stderr)")
        try home.namespace.setHomeLink(home.link, up: false)
        // Bytes, not text: decoding tens of MiB of stdout at every wake would starve the reader.
        func said(_ text: String, timeout: Double) -> Bool {
            device.waitForBytes(timeout: timeout) { _, stderr in String(decoding: stderr, as: UTF8.self).contains(text)
            }
        }
        // The home road goes quiet under a ping: a race moves the session to the relay (or, had
        // the home socket noticed first, a reconnect does).
        #expect(
            device.waitForBytes(timeout: 120) { _, stderr in
                let text = String(decoding: stderr, as: UTF8.self)
                return text.contains("Reconnected via relay")
                    || text.contains("the session moved to a new connection via relay")
            }, "resumed over the relay: \(device.stderr)")
        // The home link comes back: the session moves home again, no drop on the way.
        try home.namespace.setHomeLink(home.link, up: true)
        #expect(said("The home network is back", timeout: 60), "moved back home: \(device.stderr)")
        #expect(device.stdoutBytes.count < size, "the move happened while output still came")
        #expect(device.wait(timeout: 180) == 0, "\(device.stderr)")
        let printed = device.stdoutBytes
        #expect(printed.count == size)
        #expect(SHA256.hash(printed) == SHA256.hash(try output.bytes()), "not a byte lost or repeated")
    }

    @Test func aDevicePairsOnTheHomeNetworkAloneAndConnectsThere() throws {
        let home = try HomeNetwork(pair: false)
        try home.road.useHerdrStandIn()
        let host = try InteractiveProcess(
            BuiltProgram.path("herdr-host"), ["pair", "--no-relay", "--name", "studio"],
            environment: home.road.hostEnvironment)
        guard let code = host.waitForCompanionCode(), host.waitFor("waiting for a device") else {
            throw FixtureError("herdr-host pair --no-relay showed no code: \(host.stdout) \(host.stderr)")
        }
        #expect(code.contains("&home=") && !code.contains("relay="), "\(code)")
        #expect(host.stdout.contains("Listening on the home network"), "\(host.stdout)")
        let device = try InteractiveProcess(
            try ProcessRunner.which("ip"),
            [
                "netns", "exec", home.namespace.name, BuiltProgram.path("herdr-remote"), "pair", code, "--yes",
                "--no-connect", "--name", "phone",
            ], environment: home.road.deviceEnvironment("phone"))
        guard let shown = RelayRoadFixture.shownCode(device) else {
            throw FixtureError("the device showed no code: \(device.stderr)")
        }
        #expect(host.waitFor("Type the code it shows"), "\(host.stdout)")
        host.writeLine(shown)
        #expect(host.wait(timeout: 30) == 0, "\(host.stdout) \(host.stderr)")
        #expect(device.wait(timeout: 30) == 0, "\(device.stdout) \(device.stderr)")
        #expect(device.stdout.contains("Paired with studio on the home network."), "\(device.stdout)")
        #expect(host.stdout.contains("Paired on the home network alone"), "\(host.stdout)")

        // The device keeps the agent's door (not the pairing's own port), and no relay.
        let hosts = try JSONDecoder().decode(
            [HostProfile].self,
            from: Data(contentsOf: home.road.deviceHome("phone").appending(path: "herdr-remote/hosts.json")))
        let road = try #require(hosts.first?.companion)
        #expect(road.relay == nil)
        #expect(road.home.map(\.description).contains("[\(home.link.rootIPv6)]:\(home.homePort)"), "\(road.home)")
        #expect(try home.road.registry.devices().first?.relay == nil)
        let listing = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["hosts"], environment: home.road.deviceEnvironment("phone")
        ).stdout
        #expect(listing.contains("studio  home "), "\(listing)")
        #expect(listing.contains("relay         none (paired on the home network)"), "\(listing)")

        let agent = try home.road.startAgent(parkedFor: 0)
        defer { agent.signal(SIGTERM) }
        let status = try home.hostStatus()
        #expect(status.contains("phone   not parked: paired on the home network"), "\(status)")
        let connect = try home.road.startConnect(in: home.namespace)
        #expect(connect.waitFor("Connected via home network"), "\(connect.stderr)")
        #expect(connect.waitFor("remote$"), "\(connect.stdout) \(connect.stderr)")
        connect.writeLine("echo home-$((40+2))-only")
        #expect(connect.waitFor("home-42-only"), "\(connect.stdout)")
        usleep(2_300_000)
        connect.writeLine("exit")
        #expect(connect.wait(timeout: 30) == 0, "\(connect.stderr)")
        let forced = try home.road.startConnect(extra: ["--road", "relay"], in: home.namespace)
        #expect(forced.wait(timeout: 30) != 0)
        #expect(forced.stderr.contains("no relay road"), "\(forced.stderr)")
    }

    @Test func anotherComputerAtTheSameHomeAddressFailsTheHandshakeAndTheRelayCarriesOn() throws {
        let home = try HomeNetwork()
        try home.road.useHerdrStandIn()
        let agent = try home.road.startAgent()
        defer { agent.signal(SIGTERM) }
        // Another machine's herdr-host (its own key), where the device believes its computer is.
        let impostorHome = home.road.directory.appending("impostor")
        let impostorPort = try LoopbackSocket.closedPort()
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = impostorHome.path
        var settings = AgentSettings()
        settings.homeListen = "[::]:\(impostorPort)"
        try settings.save(AgentDirectory(url: impostorHome.appendingPathComponent("herdr-host")))
        let impostor = try InteractiveProcess(BuiltProgram.path("herdr-host"), ["run"], environment: environment)
        defer { impostor.signal(SIGTERM) }
        #expect(impostor.waitFor("home door: listening"), "\(impostor.stderr)")
        try home.setSavedHomeAddresses(["[\(home.link.rootIPv6)]:\(impostorPort)"])

        let device = try home.road.startConnect(in: home.namespace)
        #expect(device.waitFor("Connected via relay"), "the pinned key proves the computer: \(device.stderr)")
        device.writeLine("echo still-$((40+2))")
        #expect(device.waitFor("still-42"), "\(device.stdout)")
        #expect(impostor.waitFor("matched no paired device"), "the impostor learned nothing: \(impostor.stderr)")
        // The real computer told the device where its door really is: the next connect goes home.
        #expect(
            home.road.waitForAgent { _ in
                (try? home.savedHomeAddresses())?.contains("[\(home.link.rootIPv6)]:\(home.homePort)") == true
            })
        usleep(2_300_000)
        device.writeLine("exit")
        #expect(device.wait(timeout: 30) == 0, "\(device.stderr)")
        let again = try home.road.startConnect(in: home.namespace)
        #expect(again.waitFor("Connected via home network"), "\(again.stderr)")
        again.signal(SIGTERM)
        _ = again.wait(timeout: 15)
    }
}
