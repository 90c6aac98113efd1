import Foundation
import Glibc
import LinkEmulator
import TestSupport
import Testing

/// Real traffic through real namespaces joined by herdr-link. Timings are asserted only as
/// bounds that cannot race: a packet delayed by d never arrives sooner than d, bytes through a
/// rate limit over any time are at most the rate times that time (plus one bucket).
@Suite(.serialized) struct EmulatedNetworkTests {
    static let peer = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Peers/net_peer.py").path

    /// A device with Wi-Fi (preferred) and cellular, and a server named server.test.
    static func network(ipv6OnlyDevice: Bool = false) throws -> EmulatedNetwork {
        try EmulatedNetwork([
            .init("device", links: [.init("wifi"), .init("cellular")], ipv6Only: ipv6OnlyDevice),
            .init("server", links: [.init("server", hostNames: ["server.test"])]),
        ])
    }

    /// Starts a net_peer.py server in `role` and waits for it to listen; the network holds it
    /// until its `remove()`.
    static func server(_ network: EmulatedNetwork, _ kind: String, port: Int, in role: String = "server") throws
        -> InteractiveProcess
    {
        let process = try network.interactive(in: role, "python3", [peer, kind, String(port)])
        guard process.waitFor("listening", timeout: 20) else {
            throw FixtureError("\(kind) did not start: \(process.stderr)")
        }
        return process
    }

    static func peerRun(_ network: EmulatedNetwork, in role: String = "device", _ arguments: [String]) throws -> String
    {
        let result = try network.run(in: role, "python3", [peer] + arguments, timeout: 120)
        guard result.status == 0 else { throw FixtureError("net_peer.py \(arguments) failed: \(result.stderr)") }
        return result.stdout
    }

    static func numbers(after key: String, in text: String) -> [Double] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: Substring(key)), index + 1 < words.count else { return nil }
            return Double(words[index + 1])
        }
    }

    /// Waits until the link's counter `field` reaches `least` (bounded); its value.
    static func waitForCounter(
        _ network: EmulatedNetwork, _ link: String, _ field: String, atLeast least: UInt64, timeout: Double = 30
    ) throws -> UInt64 {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let value = try network.statistics(link)[field] ?? 0
            if value >= least || Date() > deadline { return value }
            usleep(50_000)
        }
    }

    @Test func aDelayIsALowerBoundOnEveryRoundTrip() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "udp-echo", port: 9000)
        _ = try Self.server(network, "tcp-echo", port: 9001)
        // One way: 30 ms on the device's Wi-Fi plus 10 ms on the server's link; a round trip at least 80 ms.
        try network.impair("wifi", "delay=30ms")
        try network.impair("server", "delay=10ms")
        let udp = Self.numbers(
            after: "rtt-ms", in: try Self.peerRun(network, ["udp-rtt", "server.test", "9000", "10"]))
        #expect(udp.count == 10)
        #expect(udp.allSatisfy { $0 >= 80 }, "\(udp)")
        let connect = Self.numbers(
            after: "connect-ms", in: try Self.peerRun(network, ["tcp-connect-ms", "server.test", "9001"]))
        #expect(connect.count == 1 && connect[0] >= 80, "\(connect)")
        let client = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
        #expect(client.waitFor("connected", timeout: 20), "\(client.stderr)")
        client.writeLine("send hello")
        let rtt = client.waitForMatch("recv hello rtt-ms ([0-9.]+)", timeout: 20).flatMap(Double.init)
        #expect(rtt.map { $0 >= 80 } == true, "\(String(describing: rtt))")
        let stats = try network.statistics("wifi")
        #expect((stats["uplink.passed"] ?? 0) >= 10 && (stats["downlink.passed"] ?? 0) >= 10)
    }

    @Test func totalLossPassesNothing() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "udp-echo", port: 9000)
        _ = try Self.server(network, "tcp-echo", port: 9001)
        try network.impair("wifi", "loss=100%", direction: .uplink)
        let output = try Self.peerRun(network, ["udp-rtt", "server.test", "9000", "3"])
        #expect(output.contains("received 0"), "\(output)")
        let connect = try Self.peerRun(network, ["tcp-connect-ms", "server.test", "9001"])
        #expect(connect.contains("connect-failed"), "\(connect)")
        let wifi = try network.statistics("wifi")
        #expect(wifi["uplink.passed"] == 0)
        #expect((wifi["uplink.loss"] ?? 0) >= 4, "3 datagrams and at least one SYN")
        #expect(try network.statistics("server")["downlink.passed"] == 0)
    }

    @Test func blackholeStallsAnEstablishedConnectionWhileTheInterfaceStaysUp() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "tcp-echo", port: 9001)
        let client = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
        #expect(client.waitFor("connected", timeout: 20), "\(client.stderr)")
        client.writeLine("send one")
        #expect(client.waitFor("recv one", timeout: 20))

        try network.setState("wifi", .blackhole)
        client.writeLine("send two")
        // The segment and at least one retransmission died in the black hole; none can have passed.
        #expect(try Self.waitForCounter(network, "wifi", "uplink.blackhole", atLeast: 2) >= 2)
        #expect(!client.stdout.contains("recv two"))
        let link = try network.link("wifi")
        let shown = try network.run(in: "device", "ip", ["addr", "show", "dev", link.interface]).stdout
        #expect(shown.contains(",UP,") || shown.contains("<UP,") || shown.contains(",UP>"), "\(shown)")
        #expect(shown.contains(link.ipv6), "the address stays: \(shown)")

        try network.setState("wifi", .up)
        #expect(client.waitFor("recv two", timeout: 60), "TCP retransmits once the link is back")
    }

    @Test func cutStallsAnEstablishedConnectionWhileANewOneWorks() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "tcp-echo", port: 9001)
        let old = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
        #expect(old.waitFor("connected", timeout: 20), "\(old.stderr)")
        old.writeLine("send one")
        #expect(old.waitFor("recv one", timeout: 20))

        try network.setState("wifi", .cut)
        old.writeLine("send two")
        #expect(try Self.waitForCounter(network, "wifi", "uplink.cut", atLeast: 2) >= 2)
        let fresh = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
        #expect(fresh.waitFor("connected", timeout: 20), "a new connection passes the cut link")
        fresh.writeLine("send three")
        #expect(fresh.waitFor("recv three", timeout: 20))
        #expect(!old.stdout.contains("recv two"), "the old one is still dead")

        try network.setState("wifi", .up)
        #expect(old.waitFor("recv two", timeout: 60))
    }

    @Test func aRateLimitIsAnUpperBoundOnThroughput() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "tcp-sink", port: 9002)
        let rate = 8_000_000.0
        try network.impair("wifi", "rate=8mbit")
        let bytes = 2_000_000
        let output = try Self.peerRun(network, ["tcp-send", "server.test", "9002", String(bytes)])
        let seconds = try #require(Self.numbers(after: "seconds", in: output).first)
        #expect(output.contains("got \(bytes)"), "\(output)")
        // The payload is less than the IP bytes the bucket counts; one bucket (1500 B) may pass at once.
        #expect(Double(bytes) * 8 <= rate * seconds + 1500 * 8, "\(bytes) bytes in \(seconds) s")
        let wifi = try network.statistics("wifi")
        #expect((wifi["uplink.bytes"] ?? 0) >= UInt64(bytes))
    }

    @Test func anIPv6OnlyNamespaceHasNoIPv4AndStillReachesTheServer() throws {
        let network = try Self.network(ipv6OnlyDevice: true)
        defer { network.remove() }
        _ = try Self.server(network, "tcp-echo", port: 9001)
        let ipv4 = try network.run(in: "device", "ip", ["-4", "-o", "addr", "show"]).stdout
        let addresses = ipv4.split(separator: "\n").filter { !$0.contains(" lo ") }
        #expect(addresses.isEmpty, "\(ipv4)")
        #expect(try network.link("wifi").ipv4 == nil)
        let client = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
        let local = client.waitForMatch("connected (\\S+)", timeout: 20)
        #expect(local == (try network.link("wifi").ipv6))
        client.writeLine("send over six")
        #expect(client.waitFor("recv over six", timeout: 20))
    }

    @Test func takingAnInterfaceDownRemovesItsAddressAndTrafficMovesOn() throws {
        let network = try Self.network()
        defer { network.remove() }
        _ = try Self.server(network, "tcp-echo", port: 9001)
        let wifi = try network.link("wifi")
        let cellular = try network.link("cellular")
        func connectedFrom() throws -> String? {
            let client = try network.interactive(
                in: "device", "python3", [Self.peer, "tcp-client", "server.test", "9001"])
            defer { client.closeInput() }
            return client.waitForMatch("connected (\\S+)", timeout: 20)
        }
        #expect(try connectedFrom() == wifi.ipv6, "Wi-Fi is preferred")

        try network.setInterface("wifi", up: false)
        let down = try network.run(in: "device", "ip", ["addr", "show", "dev", wifi.interface]).stdout
        #expect(!down.contains("inet"), "no address left: \(down)")
        #expect(!down.contains("<UP") && !down.contains(",UP"), "\(down)")
        #expect(try connectedFrom() == cellular.ipv6, "a new connection leaves through cellular")

        try network.setInterface("wifi", up: true)
        let up = try network.run(in: "device", "ip", ["addr", "show", "dev", wifi.interface]).stdout
        let wifiIPv4 = try #require(wifi.ipv4)
        #expect(up.contains(wifi.ipv6) && up.contains(wifiIPv4), "\(up)")
        #expect(try connectedFrom() == wifi.ipv6)
    }

    @Test func namesResolveInsideAndUnknownNamesFail() throws {
        let network = try Self.network()
        defer { network.remove() }
        let server = try network.link("server")
        let known = try network.run(in: "device", "getent", ["ahosts", "server.test"])
        #expect(known.status == 0)
        let serverIPv4 = try #require(server.ipv4)
        #expect(known.stdout.contains(server.ipv6) && known.stdout.contains(serverIPv4), "\(known.stdout)")
        let unknown = try network.run(in: "device", "getent", ["hosts", "nowhere.invalid"], timeout: 20)
        #expect(unknown.status != 0)
    }

    @Test func aTailnetLinkReachesATailnetHost() throws {
        let network = try EmulatedNetwork([
            .init("device", links: [.init("wifi"), .init("dtail", kind: .tailnet)]),
            .init("computer", links: [.init("ctail", kind: .tailnet, hostNames: ["computer.tailnet.test"])]),
        ])
        defer { network.remove() }
        let computer = try network.link("ctail")
        let address = try #require(computer.ipv4)
        let octets = address.split(separator: ".").compactMap { Int($0) }
        #expect(octets.count == 4 && octets[0] == 100 && (64...127).contains(octets[1]), "\(address) in 100.64.0.0/10")
        _ = try Self.server(network, "tcp-echo", port: 2222, in: "computer")
        let route = try network.run(in: "device", "ip", ["route", "get", address]).stdout
        #expect(route.contains("dev dtail"), "\(route)")
        let client = try network.interactive(in: "device", "python3", [Self.peer, "tcp-client", address, "2222"])
        #expect(client.waitFor("connected", timeout: 20), "\(client.stderr)")
        client.writeLine("send over the tailnet")
        #expect(client.waitFor("recv over the tailnet", timeout: 20))
        #expect((try network.statistics("dtail")["uplink.passed"] ?? 0) > 0)
        #expect(try network.statistics("wifi")["uplink.passed"] == 0)
    }

    @Test func anSSHServerOnATailnetHostIsReachedThroughTheTailnetLink() throws {
        let network = try EmulatedNetwork([
            .init("device", links: [.init("wifi"), .init("dtail", kind: .tailnet)]),
            .init("computer", links: [.init("ctail", kind: .tailnet, hostNames: ["computer.tailnet.test"])]),
        ])
        defer { network.remove() }
        let computer = try network.link("ctail")
        var options = SSHServer.Options()
        options.listenAddress = try #require(computer.ipv4)
        options.port = 22
        options.networkNamespace = computer.namespace
        let sshd = try SSHServer(options)
        defer { sshd.stop() }
        let scanned = try network.run(
            in: "device", "ssh-keyscan", ["-4", "-T", "10", "-t", "ed25519", "computer.tailnet.test"], timeout: 30)
        #expect(scanned.stdout.contains("ssh-ed25519"), "\(scanned.stdout)\(scanned.stderr)")
        #expect((try network.statistics("dtail")["uplink.passed"] ?? 0) > 0)
    }

    @Test func everythingIsRemoved() throws {
        let network = try Self.network()
        let server = try Self.server(network, "tcp-echo", port: 9001)
        let emulator = try #require(network.emulatorProcess)
        #expect(network.leftovers.count == 4, "two namespaces, each with its /etc/netns")
        network.remove()
        #expect(network.leftovers.isEmpty, "\(network.leftovers)")
        #expect(emulator.status == 0, "herdr-link ended by itself at the end of its input")
        #expect(!server.process.isRunning)
        let listed = try ProcessRunner.run(try ProcessRunner.which("ip"), ["netns", "list"], check: true).stdout
        #expect(!listed.contains(network.tag))
        network.remove()  // idempotent
    }

    @Test func herdrLinkAnswersEveryCommandAndStopsAtTheEndOfItsInput() throws {
        let network = try Self.network()
        defer { network.remove() }
        #expect(try network.command("links") == "ok wifi cellular server")
        #expect(throws: FixtureError.self) { try network.command("link nowhere up") }
        #expect(throws: FixtureError.self) { try network.command("link wifi delay=forever") }
        #expect(throws: FixtureError.self) { try network.command(String(repeating: "x", count: 5000)) }
        #expect(try network.command("ping") == "ok", "still answering after a line too long")
        try network.impair("wifi", "delay=25ms jitter=2ms loss=1% burst=1%,30% rate=20mbit queue=256KiB")
        let shown = try network.command("show wifi")
        #expect(
            shown.contains(
                "uplink delay=25ms jitter=2ms reorder=off loss=1% burst=1%,30%,100%,0% rate=20000000bit queue=262144"))
        let emulator = try #require(network.emulatorProcess)
        try network.command("quit")
        #expect(emulator.wait(timeout: 10) == 0)
    }
}
