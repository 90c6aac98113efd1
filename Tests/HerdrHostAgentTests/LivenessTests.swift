import Foundation
import Glibc
import TestSupport
import Testing

/// Liveness on the relay road with real processes (docs/companion.md, "Liveness"): a path that
/// goes silent without a reset (a `CuttingProxy` that drops every byte of the device's connection
/// while new connections pass, as when a phone's old network dies) is raced by a fresh connection
/// and the session carries on; a device that falls silent is dropped by the computer, and its
/// session waits for it.
@Suite(.serialized) struct LivenessTests {
    /// A session that answers every line it reads, and says it is ready.
    static let answering = "stty -echo; echo ready; while read line; do echo \"got-$line\"; done"

    /// A paired road whose relay both sides reach through a `CuttingProxy`, the agent parked and
    /// its sessions answering.
    static func agentBehindAProxy() throws -> (CuttingProxy, RelayRoadFixture, InteractiveProcess) {
        let proxy = try CuttingProxy()
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        try road.pair()
        try road.configure("session-command", answering)
        return (proxy, road, try road.startAgent())
    }

    @Test func aPathThatFallsSilentIsRacedAndTheSessionCarriesOn() throws {
        let (proxy, road, agent) = try Self.agentBehindAProxy()
        defer { withExtendedLifetime((proxy, road)) { agent.signal(SIGTERM) } }
        let parked = proxy.accepted

        let device = try road.startConnect()
        #expect(device.waitFor("ready"), "\(device.stderr)")
        device.writeLine("one")
        #expect(device.waitFor("got-one"), "\(device.stdout) \(device.stderr)")
        // The device's connection goes silent; the computer's stays as it was.
        #expect(proxy.freeze(acceptedAfter: parked) == 1, "the device's connection went through the proxy")
        device.writeLine("two")
        #expect(device.waitFor("got-two", timeout: 60), "\(device.stdout) \(device.stderr)")
        #expect(device.stderr.contains("The link went quiet"), "\(device.stderr)")
        #expect(!device.stderr.contains("The link dropped"), "no drop was shown: \(device.stderr)")
        // The new connection's handshake took over the computer's parked socket at once.
        #expect(
            agent.waitFor("a new connection of the device took over"), "\(agent.stderr)")
        device.writeLine("three")
        #expect(device.waitFor("got-three"), "\(device.stdout)")
        #expect(device.stdout.components(separatedBy: "got-two").count == 2, "said once: \(device.stdout)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func aDeviceThatFallsSilentIsDroppedAndItsSessionWaitsForIt() throws {
        let (proxy, road, agent) = try Self.agentBehindAProxy()
        defer { withExtendedLifetime((proxy, road)) { agent.signal(SIGTERM) } }

        let device = try road.startConnect()
        #expect(device.waitFor("ready"), "\(device.stderr)")
        device.writeLine("one")
        #expect(device.waitFor("got-one"), "\(device.stdout)")
        // The device stops (a phone asleep, a laptop lid shut): its sockets stay open, the
        // relay keeps them, and only the computer's own pings can tell.
        device.signal(SIGSTOP)
        #expect(
            agent.waitFor("phone: disconnected (heard nothing for", timeout: 60),
            "the computer dropped the silent device: \(agent.stderr)")
        #expect(agent.stderr.contains("its sessions wait for it"))
        device.signal(SIGCONT)
        device.writeLine("two")
        #expect(device.waitFor("got-two", timeout: 60), "the session waited: \(device.stdout) \(device.stderr)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }
}
