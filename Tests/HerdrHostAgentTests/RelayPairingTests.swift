import CompanionPairing
import Foundation
import Glibc
import HerdrCrypto
import HerdrHostAgent
import HerdrKit
import Noise
import NoiseRoads
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// Pairing through the relay with real processes: herdr-relay, herdr-host, herdr-remote. The
/// typed code goes into herdr-host's stdin, read off herdr-remote's output.
@Suite(.serialized) struct RelayPairingTests {
    @Test func pairsThenBothSidesRejoinWithSignaturesThroughRestarts() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        let devices = try road.registry.devices()
        #expect(devices.count == 1)
        #expect(devices.first?.established == true, "the device registered the room before it ended")
        #expect(devices.first?.name == "phone")
        var (profile, connection) = try road.devicePairing()
        #expect(profile.companion?.registered == true)
        #expect(profile.name == "studio")
        #expect(road.relay.stderrText().contains("a room was established"))

        // The agent parks with a signed join; the device joins with one; a fresh handshake each time.
        let agent = try road.startAgent()
        var established = try road.connectDevice(connection)
        #expect(established.registeredNow == false)
        #expect(established.channel.established?.remoteStaticPublicKey != nil)
        established.channel.connection.close()
        #expect(road.waitForAgent { $0.rooms.first?.state == "parked" }, "the agent parks again after the device left")

        // The relay restarts: the agent re-parks by itself, and the device gets through again.
        try road.restartRelay()
        #expect(road.waitForAgent { $0.rooms.first?.state == "parked" })
        established = try road.connectDevice(connection)
        established.channel.connection.close()

        // The computer's agent restarts.
        agent.signal(SIGTERM)
        #expect(agent.wait(timeout: 15) == 0)
        let again = try road.startAgent()
        established = try road.connectDevice(connection)
        established.channel.connection.close()

        // The device "restarts": a new connection from what it keeps on disk.
        (profile, connection) = try road.devicePairing()
        established = try road.connectDevice(connection)
        established.channel.connection.close()
        again.signal(SIGTERM)
        #expect(again.wait(timeout: 15) == 0)
        #expect(again.stderr.contains("phone: connected"))
        let log = agent.stderr + again.stderr
        #expect(
            !log.contains(try #require(try road.registry.roomSecret(for: devices[0].id)).base64), "no secret logged")
        #expect(!log.contains("127.0.0.1:\(road.port)"), "no peer address logged: \(log)")
    }

    /// `herdr-host pair --web` shows the code as the address of the relay's web client, the code
    /// in its fragment (what a phone's camera opens); herdr-remote pairs with that address too.
    @Test func aCodeShownAsTheWebClientsAddressPairs() throws {
        let road = try RelayRoadFixture()
        try RelayProgramPairing.pair(
            origin: road.origin, computerName: "studio", deviceName: "phone", hostEnvironment: road.hostEnvironment,
            deviceEnvironment: road.deviceEnvironment("phone"), hostArguments: ["--web"]
        ) { program, arguments, computer, environment in
            if computer {
                let shown = try InteractiveProcess(program, arguments, environment: environment)
                #expect(shown.waitForMatch(#"(\S+)#v=1&proto="#) == road.origin + "/", "\(shown.stdout)")
                return shown
            }
            #expect(arguments[1].hasPrefix(road.origin + "/#v=1&"), "\(arguments)")
            return try InteractiveProcess(program, arguments, environment: environment)
        }
        #expect(try road.registry.devices().map(\.name) == ["phone"])
        #expect(try road.devicePairing().profile.name == "studio")
        // Without a relay a browser cannot reach the computer.
        let refused = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["pair", "--no-relay", "--web"], environment: road.hostEnvironment)
        #expect(refused.status == 64 && refused.stderr.contains("through a relay only"), "\(refused.stderr)")
    }

    /// Another herdr-host with this computer's keys (a copy of its directory) takes the device's
    /// room: the first says so, shows the room stopped and leaves it to the other, instead of
    /// taking it back at its next check (and the two displacing each other every second).
    @Test func aDisplacedAgentStopsParkingForTheDevice() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        let first = try road.startAgent()
        let copy = road.directory.appending("host-copy")
        try FileManager.default.copyItem(at: road.hostHome, to: copy)
        try FileManager.default.removeItem(at: road.agentDirectory(home: copy).agentStatusFile)
        let second = try road.startAgent(home: copy)
        #expect(road.waitForAgent { $0.rooms.first?.state == "stopped: another herdr-host took the room" })
        #expect(first.waitFor("another herdr-host took this device's room; stopped parking for it here"))
        let parked = try #require(try AgentStatus.load(road.agentDirectory(home: copy))?.rooms.first)
        #expect(parked.state == "parked")
        // Three of the first agent's once-a-second checks: none parks again.
        sleep(3)
        let later = try #require(try AgentStatus.load(road.agentDirectory(home: copy))?.rooms.first)
        #expect(later.state == "parked" && later.since == parked.since, "the second agent was displaced: \(later)")
        #expect(try AgentStatus.load(road.agentDirectory)?.rooms.first?.state.hasPrefix("stopped") == true)
        #expect(first.stderr.components(separatedBy: "parking in its room").count == 2, "\(first.stderr)")
        // The device reaches the agent that holds the room.
        let (_, connection) = try road.devicePairing()
        try road.connectDevice(connection).channel.connection.close()
        #expect(second.waitFor("phone: connected"))
        for agent in [first, second] {
            agent.signal(SIGTERM)
            #expect(agent.wait(timeout: 15) == 0)
        }
        #expect(!first.stderr.contains("phone: connected"))
    }

    /// A photographed code raced by another device: the computer asks for that device's code,
    /// which is not the real device's; three wrong answers void the code, show a new one, and the
    /// old room is dead.
    @Test func aPhotographedCodeNeverMatchesTheRealDevicesCode() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        // The real device shows a code of its own handshake, then steps aside (the person cancels).
        let real = try road.startDevicePair(code, name: "real")
        let realCode = try #require(RelayRoadFixture.shownCode(real))
        #expect(host.waitFor("Type the code it shows (3 tries)"))
        real.signal(SIGINT)
        #expect(real.wait(timeout: 15) == 130)
        #expect(host.waitFor("that code no longer counts"))
        // The attacker's device joins with the same code; the person types what the real device showed.
        let attacker = try road.startDevicePair(code, name: "attacker")
        let attackerCode = try #require(RelayRoadFixture.shownCode(attacker))
        #expect(attackerCode != realCode)
        // The real device's question was the first; the attacker's handshake gets three.
        for attempt in 0..<3 {
            #expect(
                host.waitForMatch(#"Type the code (it shows|again)"#, after: attempt + 1) != nil, "prompt \(attempt)")
            host.writeLine(realCode)
            if attempt < 2 {
                #expect(host.waitForMatch("That is not the code the device shows", after: attempt) != nil)
            }
        }
        #expect(host.waitFor("this pairing is void"))
        #expect(attacker.wait(timeout: 30) == 22, "the attacker is rejected: \(attacker.stderr)")
        // A new code, in a new room; the old room has no computer any more.
        let fresh = try #require(host.waitForCompanionCode(after: 1))
        #expect(fresh != code)
        let old = try CompanionCode(parsing: code)
        let refusal = #expect(throws: ConnectionError.self) {
            try RelayConnection.connect(to: try #require(old.relay), room: old.room, role: .device, credential: .none)
        }
        #expect(refusal?.serverError == "mac offline", "\(String(describing: refusal))")
        host.signal(SIGINT)
        #expect(host.wait(timeout: 15) == 130)
        #expect(try road.registry.devices().isEmpty, "nothing was paired")
    }

    /// Displacement while the computer asks voids the question: the next question is for the
    /// newcomer's handshake, and the first device's code no longer counts.
    @Test func displacementDuringTheQuestionVoidsIt() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let first = try road.startDevicePair(code, name: "first")
        let firstCode = try #require(RelayRoadFixture.shownCode(first))
        #expect(host.waitFor("Type the code it shows (3 tries)"))
        let second = try road.startDevicePair(code, name: "second")
        #expect(host.waitFor("that code no longer counts"))
        #expect(first.wait(timeout: 30) != 0, "the displaced device stops")
        #expect(first.stderr.contains("took this device's place"))
        let secondCode = try #require(RelayRoadFixture.shownCode(second))
        #expect(host.waitForMatch("Type the code it shows", after: 1) != nil)
        host.writeLine(firstCode)
        #expect(host.waitFor("That is not the code the device shows"))
        host.writeLine(secondCode)
        #expect(host.wait(timeout: 30) == 0)
        #expect(second.wait(timeout: 30) == 0)
        #expect(try road.registry.devices().map(\.name) == ["second"])
    }

    /// The device's code is wiped from the terminal the moment its connection drops.
    @Test func theDevicesCodeIsWipedFromItsTerminalOnADrop() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let tmux = try TmuxTerminal(directory: road.directory, width: 150, height: 30)
        let command = ([BuiltProgram.path("herdr-remote"), "pair", code, "--yes", "--no-connect", "--name", "phone"])
            .map { HerdrCommand.posixQuoted($0) }.joined(separator: " ")
        try tmux.type("env XDG_CONFIG_HOME=\(HerdrCommand.posixQuoted(road.deviceHome("phone").path)) \(command)")
        let shown = try #require(
            tmux.waitForScreen {
                $0.range(of: #"Type this code on studio: \d{3} \d{3}"#, options: .regularExpression) != nil
            })
        let digits = try #require(
            shown.range(of: #"\d{3} \d{3}"#, options: .regularExpression).map { String(shown[$0]) })
        #expect(host.waitFor("Type the code it shows"))
        // The computer goes: the relay closes the device's connection (peer gone).
        host.signal(SIGKILL)
        _ = host.wait(timeout: 15)
        let after = try #require(tmux.waitForScreen { $0.contains("that code is void") })
        #expect(!after.contains(digits), "the code is still on screen: \(after)")
    }

    /// More than eight phone admissions in one park kill the pairing room; the computer shows a
    /// new code.
    @Test func moreThanEightPhoneCyclesKillTheRoom() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let parsed = try CompanionCode(parsing: code)
        var phones: [RelayConnection] = []
        defer { for phone in phones { phone.close() } }
        for _ in 0..<8 {
            // Each stays open: the next displaces it (a phone leaving would end the park).
            phones.append(
                try RelayConnection.connect(
                    to: try #require(parsed.relay), room: parsed.room, role: .device, credential: .none))
        }
        let ninth = #expect(throws: ConnectionError.self) {
            try RelayConnection.connect(
                to: try #require(parsed.relay), room: parsed.room, role: .device, credential: .none)
        }
        #expect(ninth?.close == .pairingCycleCap, "\(String(describing: ninth))")
        #expect(host.waitFor("pairing cycle cap"))
        let fresh = try #require(host.waitForCompanionCode(after: 1))
        #expect(try CompanionCode(parsing: fresh).room != parsed.room)
        host.signal(SIGTERM)
        #expect(host.wait(timeout: 15) == 143)
    }

    /// Once the code matched, a handshake from another device static key is refused with no new
    /// question, while the confirmed device still finishes.
    @Test func anotherDeviceInTheConfirmedWindowIsRefusedWithNoQuestion() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let parsed = try CompanionCode(parsing: code)
        // A device of the test's own that stops right after the accept (before its status).
        let confirmed = try HalfwayDevice(code: parsed)
        let shown = try confirmed.handshake()
        #expect(host.waitFor("Type the code it shows"))
        host.writeLine(shown)
        try confirmed.waitForAccept()
        confirmed.close()
        // Another device (herdr-remote) with the same code: its handshake is cut off, no question.
        let intruder = try road.startDevicePair(code, name: "intruder")
        #expect(host.waitFor("Refused a handshake from a device other than the one confirmed"))
        #expect(host.waitForMatch("Type the code it shows", timeout: 3, after: 1) == nil, "no second question")
        intruder.signal(SIGINT)
        _ = intruder.wait(timeout: 15)
        // The confirmed device comes back and finishes: no code, the accept again, then its status.
        let back = try HalfwayDevice(code: parsed, key: confirmed.key)
        #expect(try back.handshakeExpectingAccept())
        try back.sendStatus(name: "confirmed", secret: RelayJoinKey.makeRoomSecret())
        #expect(try back.waitForAck())
        back.close()
        #expect(host.wait(timeout: 30) == 0)
        #expect(try road.registry.devices().map(\.name) == ["confirmed"])
    }

    /// `/register` is never sent before the computer's ack: with the ack held back the relay has
    /// no verifier for the room; once it is sent, the relay has one.
    @Test func registerWaitsForTheAck() throws {
        let road = try RelayRoadFixture()
        let computer = try HoldingComputer(relay: try RelayEndpoint(parsing: road.origin))
        let device = try road.startDevicePair(computer.code.url)
        do {
            try computer.handshake()
        } catch {
            // What the device and the relay saw, for a run where the handshake never came.
            Issue.record("no handshake: the device said \(device.stderr); the relay logged \(road.relay.stderrText())")
            throw error
        }
        let shown = try #require(RelayRoadFixture.shownCode(device))
        #expect(computer.sas == shown.replacingOccurrences(of: " ", with: ""))
        try computer.accept()
        let secret = try computer.waitForStatus()
        // Held: the device waits, and the relay stores no room.
        #expect(device.waitFor("registered", timeout: 2) == false)
        #expect(try road.storedRooms() == 0)
        try computer.acknowledge()
        #expect(try computer.waitForRegistered())
        #expect(device.wait(timeout: 30) == 0)
        #expect(try road.storedRooms() == 1)
        // The verifier the relay holds is the one of the secret the device sent us.
        let key = try RelayJoinKey(roomSecret: secret)
        let signed = try RelayConnection.connect(
            to: try #require(computer.code.relay), room: computer.code.room, role: .computer, credential: .joinKey(key))
        signed.close()
        computer.close()
    }

    /// Unpairing from either side deletes the room; the other side says plainly it was removed.
    @Test(arguments: ["computer", "device"])
    func unpairFromEitherSide(from side: String) throws {
        let road = try RelayRoadFixture()
        try road.pair()
        let agent = try road.startAgent()
        let (_, connection) = try road.devicePairing()
        if side == "computer" {
            let result = try ProcessRunner.run(
                BuiltProgram.path("herdr-host"), ["unpair", "phone"], environment: road.hostEnvironment)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("the relay room was deleted"))
            #expect(try road.registry.devices().isEmpty)
            let gone = #expect(throws: RoadFailure.self) { try connection.connect() }
            guard case .pairingGone(let why)? = gone else {
                Issue.record("not told the pairing is gone: \(String(describing: gone))")
                return
            }
            #expect(
                why.contains("bad signature") || why.contains("signature required") || why.contains("room"), "\(why)")
            #expect(gone?.description.contains("pair again") == true)
            #expect(agent.waitFor("unpaired; no longer parked"))
        } else {
            let result = try ProcessRunner.run(
                BuiltProgram.path("herdr-remote"), ["remove", "studio"], environment: road.deviceEnvironment("phone"))
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.contains("the relay room was deleted"))
            #expect(
                agent.waitFor("the pairing was removed on the device (or expired); pair again with: herdr-host pair"))
            #expect(try road.registry.devices().first?.ended != nil)
            let status = try ProcessRunner.run(
                BuiltProgram.path("herdr-host"), ["devices"], environment: road.hostEnvironment)
            #expect(status.stdout.contains("removed on the other side"))
            let hosts = try ProcessRunner.run(
                BuiltProgram.path("herdr-remote"), ["hosts"], environment: road.deviceEnvironment("phone"))
            #expect(!hosts.stdout.contains("studio"))
        }
        agent.signal(SIGTERM)
        _ = agent.wait(timeout: 15)
    }

    /// A pairing removed on the device while the computer's agent was not running: in open mode the
    /// relay admits the agent's signed join into the emptied room all the same, so the agent asks
    /// the relay whether the room still has its verifier, says so, and stops parking for it.
    @Test func aPairingRemovedWhileTheAgentWasAwayIsNoticed() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        #expect(try road.registry.devices().first?.established == true, "the pairing registered its room")
        let removed = try ProcessRunner.run(
            BuiltProgram.path("herdr-remote"), ["remove", "studio"], environment: road.deviceEnvironment("phone"))
        #expect(removed.status == 0, "\(removed.stderr)")
        let agent = try road.startAgent(parkedFor: 0)
        #expect(
            agent.waitFor("the pairing was removed on the device (or expired); pair again with: herdr-host pair"),
            "\(agent.stderr)")
        #expect(try road.registry.devices().first?.ended != nil)
        #expect(road.waitForAgent { $0.rooms.isEmpty }, "no longer parked for it")
        agent.signal(SIGTERM)
        #expect(agent.wait(timeout: 15) == 0)
    }

    /// A second implementation of the device side, in Python (noiseprotocol, websockets,
    /// cryptography), written from docs/companion.md alone, pairs with herdr-host and rejoins.
    @Test func aPythonDeviceWrittenFromTheDocsPairsAndRejoins() throws {
        let road = try RelayRoadFixture()
        let (host, code) = try road.startPair()
        let state = road.directory.appending("python-device.json").path
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Peers/companion_device.py"
        ).path
        let device = try InteractiveProcess(
            "python3", [script, "pair", code, "--name", "python phone", "--state", state, "--timeout", "60"],
            environment: ProcessInfo.processInfo.environment)
        let shown = try #require(device.waitForMatch(#""event": ?"sas", ?"code": ?"(\d{6})""#))
        #expect(host.waitFor("Type the code it shows"))
        host.writeLine(shown)
        #expect(device.wait(timeout: 60) == 0, "\(device.stdout) \(device.stderr)")
        #expect(host.wait(timeout: 30) == 0)
        #expect(try road.registry.devices().first?.name == "python phone")
        #expect(try road.registry.devices().first?.established == true)
        let agent = try road.startAgent()
        let rejoin = try InteractiveProcess(
            "python3", [script, "rejoin", "--state", state, "--timeout", "60"],
            environment: ProcessInfo.processInfo.environment)
        #expect(rejoin.wait(timeout: 60) == 0, "\(rejoin.stdout) \(rejoin.stderr)")
        #expect(agent.waitFor("python phone: connected"))
        agent.signal(SIGTERM)
        _ = agent.wait(timeout: 15)
    }
}

extension RelayRoadFixture {
    /// Rooms in the relay's store, from its metrics (loopback).
    func storedRooms() throws -> Int {
        let response = try RelayHTTPClient(
            endpoint: try RelayEndpoint(parsing: origin).connecting(toHost: "127.0.0.1", port: port, tls: false)
        )
        .request(method: "GET", path: "/metrics", room: nil, body: nil)
        let text = String(decoding: response.body, as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("relay_rooms_stored ") }),
            let count = Int(line.split(separator: " ")[1])
        else { throw FixtureError("no stored-rooms gauge: \(text)") }
        return count
    }
}

extension Array where Element == UInt8 {
    var base64: String { Data(self).base64EncodedString() }
}

/// A relay that alters or replays one frame: the side that receives it fails its channel (AEAD),
/// the connection goes, both sides start over with a fresh handshake, and the pairing still ends
/// well; nothing is taken twice.
@Suite(.serialized) struct TamperedRelayTests {
    @Test(arguments: [
        (TamperingProxy.Fault.alter, TamperingProxy.Direction.fromPhone, 3),
        (TamperingProxy.Fault.replay, TamperingProxy.Direction.fromPhone, 3),
        (TamperingProxy.Fault.alter, TamperingProxy.Direction.toPhone, 2),
    ])
    func oneBadFrameMakesBothSidesStartOver(
        fault: TamperingProxy.Fault, direction: TamperingProxy.Direction, index: Int
    )
        throws
    {
        let proxy = try TamperingProxy(fault: fault, direction: direction, index: index)
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        let (host, code) = try road.startPair()
        let device = try road.startDevicePair(code)
        let shown = try #require(RelayRoadFixture.shownCode(device))
        #expect(host.waitFor("Type the code it shows"))
        host.writeLine(shown)
        #expect(device.wait(timeout: 60) == 0, "\(device.stderr)")
        #expect(host.wait(timeout: 60) == 0, "\(host.stdout)")
        #expect(proxy.applied)
        if direction == .fromPhone {
            #expect(
                host.stdout.contains("The end-to-end channel failed"), "the computer's channel failed: \(host.stdout)")
        } else {
            #expect(device.stderr.contains("that code is void"), "the device's channel failed: \(device.stderr)")
        }
        let matches = host.stdout.components(separatedBy: "The code matches").count - 1
        #expect(matches == 1, "one confirmation only")
        #expect(try road.registry.devices().count == 1)
        #expect(try road.storedRooms() == 1)
    }
}
