import Companion
import Foundation
import Glibc
import HerdrHostAgent
import HerdrKit
import TestSupport
import Testing

/// The terminal through the relay with real processes: herdr-relay, herdr-host run, herdr-remote
/// connect, a PTY on the computer running the configured command.
@Suite(.serialized) struct RelayTerminalTests {
    @Test func typedKeysComeBackThroughTheRelay() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        try road.configure("session-command", "echo ready; exec cat")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try road.startConnect()
        #expect(device.waitFor("ready"), "\(device.stdout) \(device.stderr) \(agent.stderr)")
        device.writeLine("hello through the relay")
        #expect(
            device.waitFor { stdout, _ in stdout.components(separatedBy: "hello through the relay").count >= 3 },
            "the PTY echoes the line and cat prints it: \(device.stdout.debugDescription) \(device.stderr)")
        print(
            "DEVICE OUT", device.stdout.debugDescription, "ERR", device.stderr.debugDescription, "AGENT", agent.stderr)
        device.signal(SIGTERM)
        #expect(device.wait(timeout: 30) != nil)
    }
}
