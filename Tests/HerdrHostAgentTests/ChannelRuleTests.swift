import CompanionPairing
import Foundation
import Glibc
import HerdrCrypto
import RelayClient
import SessionProtocol
import TestSupport
import Testing

/// A message that breaks the channel's first-byte rule (docs/companion.md, "Inside the
/// channel"), and how either side names it when it ends the channel.
struct RuleBreakingMessage: Sendable, CustomTestStringConvertible {
    let what: String
    let bytes: [UInt8]
    /// The start of what the side that got it says it was sent.
    let said: String
    var testDescription: String { what }

    /// One of each class of first byte that ends the channel, and a malformed message of each kind.
    static let all: [RuleBreakingMessage] = [
        .init(what: "an empty message", bytes: [], said: "an empty message"),
        .init(what: "0x00", bytes: [0x00, 0x01, 0x7B], said: "a message starting with byte 0x00"),
        .init(what: "0x20", bytes: Array(#" {"ack":"status"}"#.utf8), said: "a message starting with byte 0x20"),
        .init(what: "0x7F", bytes: [0x7F], said: "a message starting with byte 0x7F"),
        .init(what: "0x80", bytes: [0x80, 0, 0, 0, 1], said: "a message starting with byte 0x80"),
        .init(what: "0xFF", bytes: [0xFF, 0xFF], said: "a message starting with byte 0xFF"),
        .init(
            what: "a malformed control message", bytes: Array(#"{"ack":"nope"}"#.utf8),
            said: "a malformed control message (an ack of something unknown)"),
        .init(
            what: "an unknown session type", bytes: [0x15, 0, 0, 0, 1],
            said: "a malformed session message (an unknown session message type 21)"),
    ]
}

/// The computer's side, with real processes: herdr-relay, herdr-host run and the session it runs;
/// a device paired by herdr-remote, driven message by message. Each end of a channel is one line
/// of the agent's log, saying why.
@Suite(.serialized) struct ComputerChannelRuleTests {
    @Test(arguments: RuleBreakingMessage.all)
    func aMessageBreakingTheRuleEndsTheChannelWithOneLineSayingWhy(_ message: RuleBreakingMessage) throws {
        let road = try RelayRoadFixture()
        try road.pair()
        try road.configure("session-command", "echo ready; exec cat")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try ScriptedDevice.overRelay(road)
        defer { device.close() }
        try device.open(waitingFor: "ready")
        // A control message of a later version is ignored: the session goes on.
        try device.send(Array(#"{"future":[1]}"#.utf8))
        try device.send(SessionMessage.input(stream: 1, data: Array("still-here\n".utf8)).bytes)
        try device.waitForOutput("still-here")

        try device.send(message.bytes)
        #expect(device.waitForEnd(), "the agent ended the channel")
        #expect(agent.waitFor("phone: disconnected (it sent \(message.said)"), "\(agent.stderr)")
        // Parked again: the relay connection's own end came after the line, and said nothing more.
        #expect(road.waitForAgent { $0.rooms.first?.state == "parked" })
        let log = agent.stderr
        #expect(log.components(separatedBy: "phone: connected").count == 2, "\(log)")
        #expect(log.components(separatedBy: "phone: disconnected").count == 2, "one line for the one end: \(log)")
    }

    /// The home door: a malformed message, a frame that fails authentication and a device that
    /// leaves each end one channel, each with one line.
    @Test func overTheHomeNetworkEachEndIsOneLineToo() throws {
        let port = try LoopbackSocket.closedPort()
        let road = try RelayRoadFixture(homeListen: "[::]:\(port)")
        try road.pair()
        try road.configure("session-command", "echo ready; exec cat")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let prefix = "phone: disconnected from the home network ("

        let malformed = try ScriptedDevice.overHome(road, port: port)
        try malformed.open(waitingFor: "ready")
        try malformed.send(Array(#"{"ack":"nope"}"#.utf8))
        #expect(malformed.waitForEnd())
        #expect(agent.waitFor(prefix + "it sent a malformed control message"), "\(agent.stderr)")

        let forged = try ScriptedDevice.overHome(road, port: port)
        try forged.sendForgedFrame()
        #expect(forged.waitForEnd())
        #expect(agent.waitFor(prefix + "the end-to-end channel failed"), "\(agent.stderr)")

        let leaving = try ScriptedDevice.overHome(road, port: port)
        leaving.close()
        #expect(agent.waitFor { _, log in log.components(separatedBy: prefix).count == 4 }, "\(agent.stderr)")
        let log = agent.stderr
        #expect(log.components(separatedBy: "phone: connected over the home network").count == 4, "\(log)")
        #expect(log.components(separatedBy: "phone: disconnected").count == 4, "one line for each end: \(log)")
    }
}

/// The device's side: herdr-remote connect against a computer the test drives (parked in the
/// device's room with the computer's keys). A message breaking the rule ends the session, and
/// herdr-remote says once what came.
@Suite(.serialized) struct DeviceChannelRuleTests {
    @Test(arguments: RuleBreakingMessage.all)
    func aMessageBreakingTheRuleEndsTheSessionSayingWhatCame(_ message: RuleBreakingMessage) throws {
        let road = try RelayRoadFixture()
        try road.pair()
        let computer = try ScriptedComputer(road)
        defer { computer.close() }
        let device = try road.startConnect()
        defer { device.signal(SIGTERM) }
        let stream = try computer.acceptSession()
        try computer.send(
            SessionMessage.started(stream: stream, token: SecureRandom.bytes(16), offset: 0, window: 1 << 20).bytes)
        // A control message of a later version is ignored: the output after it arrives.
        try computer.send(Array(#"{"future":[1]}"#.utf8))
        try computer.send(SessionMessage.output(stream: stream, offset: 0, data: Array("ready\n".utf8)).bytes)
        #expect(device.waitFor("ready"), "\(device.stderr)")

        try computer.send(message.bytes)
        #expect(device.wait(timeout: 60) == 12, "\(device.stderr)")
        let stderr = device.stderr
        #expect(stderr.contains("error: the computer sent \(message.said)"), "\(stderr)")
        #expect(stderr.components(separatedBy: "the computer sent").count == 2, "said once: \(stderr)")
        #expect(!stderr.contains("The link dropped"), "the session ends, no reconnect: \(stderr)")
    }
}

/// While pairing (herdr-host pair, herdr-remote pair): a message breaking the rule costs its
/// connection, said once on the side that got it, and the code shown for that handshake is void.
@Suite(.serialized) struct PairingChannelRuleTests {
    @Test func aDeviceBreakingTheRuleWhilePairingLosesItsConnectionAndItsCode() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        defer { host.signal(SIGTERM) }
        let device = try HalfwayDevice(code: try CompanionCode(parsing: code))
        defer { device.close() }
        _ = try device.handshake()
        #expect(host.waitFor("Type the code it shows"))
        try device.send([0x00])
        #expect(
            host.waitFor("The device sent a message starting with byte 0x00 (a control message starts with {"),
            "\(host.stdout)")
        #expect(host.waitFor("that code no longer counts"), "\(host.stdout)")
        #expect(host.stdout.components(separatedBy: "The device sent").count == 2, "said once: \(host.stdout)")
    }

    @Test func aComputerBreakingTheRuleWhilePairingLosesItsConnectionAndItsCode() throws {
        let road = try RelayRoadFixture()
        let computer = try HoldingComputer(relay: try RelayEndpoint(parsing: road.origin))
        defer { computer.close() }
        let device = try road.startDevicePair(computer.code.url)
        defer { device.signal(SIGINT) }
        do {
            try computer.handshake()
        } catch {
            Issue.record("no handshake: the device said \(device.stderr); the relay logged \(road.relay.stderrText())")
            throw error
        }
        #expect(RelayRoadFixture.shownCode(device) != nil, "\(device.stderr)")
        try computer.send([0xFF])
        #expect(
            device.waitFor(
                "The connection dropped (the computer sent a message starting with byte 0xFF (a control message starts with {"
            ), "\(device.stderr)")
        #expect(device.waitFor("that code is void"), "\(device.stderr)")
        #expect(device.stderr.components(separatedBy: "the computer sent").count == 2, "said once: \(device.stderr)")
    }
}
