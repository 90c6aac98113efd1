import Foundation
import Glibc
import TestSupport
import Testing

/// A relay node killed under a live terminal session: the real programs (`herdr-host run`,
/// `herdr-remote connect`) through the cluster of RelayClusterTests, reached at its loopback
/// origin as a person's relay would be.
@Suite("a relay node killed under a live session", .serialized)
struct RelayNodeDeathTests {
    /// The session prints numbered lines, 100 a second, until the stop file appears, then `end`.
    static let counter = """
        import os, sys, time
        i = 0
        while not os.path.exists(sys.argv[1]):
            i += 1
            sys.stdout.write("line %d\\n" % i)
            sys.stdout.flush()
            time.sleep(0.01)
        sys.stdout.write("end\\n")

        """

    @Test("the node holding the room is killed: the session's output comes back, every line exactly once")
    func killTheNodeHoldingTheRoom() throws {
        let cluster = try RelayCluster(loopbackOrigin: true)
        let directory = try TemporaryDirectory(prefix: "relay-node-death-")
        defer { directory.remove() }
        let hostEnvironment = Self.environment(home: directory.appending("host"))
        let deviceEnvironment = Self.environment(home: directory.appending("device"))
        try RelayProgramPairing.pair(
            origin: cluster.origin, computerName: "studio", deviceName: "phone", hostEnvironment: hostEnvironment,
            deviceEnvironment: deviceEnvironment)
        let script = directory.file("counter.py")
        try Data(Self.counter.utf8).write(to: script)
        let stop = directory.file("stop")
        for (key, value) in [
            ("home-listen", "off"), ("session-command", "stty raw -echo; exec python3 \(script.path) \(stop.path)"),
        ] {
            let result = try ProcessRunner.run(
                BuiltProgram.path("herdr-host"), ["config", key, value], environment: hostEnvironment)
            try #require(result.status == 0, "herdr-host config \(key): \(result.stderr)")
        }
        let agent = try InteractiveProcess(BuiltProgram.path("herdr-host"), ["run"], environment: hostEnvironment)
        defer {
            agent.signal(SIGTERM)
            _ = agent.wait(timeout: 15)
        }
        try #require(agent.waitFor(timeout: 60) { _, log in log.contains("parking in its room") }, "\(agent.stderr)")
        let device = try InteractiveProcess(
            BuiltProgram.path("herdr-remote"), ["connect", "studio"], environment: deviceEnvironment)
        defer { device.signal(SIGTERM) }
        // Three seconds of output: the session has been up past RelayBackoff.steadyConnection, as
        // a session a person is in would be, so both sides come back at once.
        try #require(
            device.waitFor(timeout: 60) { out, _ in Self.lines(out).count >= 300 }, "output began: \(device.stderr)")
        // One room, spliced on one node: that node dies.
        var holders: [Int] = []
        try waitFor(timeout: 30, "one node holds the room") {
            holders = cluster.nodesHoldingRooms()
            return holders.count == 1
        }
        let before = Self.lines(device.stdout).count
        cluster.kill(node: holders[0])
        try #require(
            device.waitFor(timeout: 90) { out, err in
                err.contains("the session resumed where it was") && Self.lines(out).count >= before + 200
            }, "the output came back after the node died: \(device.stderr)")
        // Both sides on the same node, and the death cost the device one reconnect: the node the
        // balancer sent it to next took the room at once, with no reshard to wait out.
        let rooms = cluster.metrics().values.map { ($0["relay_rooms_leased"] ?? 0, $0["relay_rooms_spliced"] ?? 0) }
        #expect(rooms.filter { $0 != (0, 0) }.map { [$0.0, $0.1] } == [[1, 1]], "one node splices the room: \(rooms)")
        let said = device.stderr
        #expect(said.components(separatedBy: "The link dropped").count == 2, "one drop: \(said)")
        #expect(said.components(separatedBy: "Reconnected").count == 2, "one reconnect: \(said)")
        #expect(!said.contains("moving this room"), "no reshard: \(said)")
        try Data().write(to: stop)
        #expect(device.wait(timeout: 60) == 0, "\(device.stderr)")
        let printed = device.stdout
        let numbers = Self.lines(printed)
        #expect(numbers == Array(1...max(numbers.count, 1)), "every line exactly once, in order")
        #expect(printed.hasSuffix("end\n"), "the session ended as it does: \(printed.suffix(40))")
    }

    static func environment(home: URL) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = home.path
        return environment
    }

    /// The numbers of the complete lines printed before `end`, in order; -1 for a line that is not
    /// `line N`.
    static func lines(_ printed: String) -> [Int] {
        printed.split(separator: "\n", omittingEmptySubsequences: false).dropLast().filter { $0 != "end" }.map {
            $0.hasPrefix("line ") ? Int($0.dropFirst(5)) ?? -1 : -1
        }
    }
}
