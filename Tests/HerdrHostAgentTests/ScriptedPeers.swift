import CompanionPairing
import EndToEndChannel
import Foundation
import Glibc
import HerdrCrypto
import HomeRoad
import Noise
import RelayClient
import RelayProtocol
import SessionProtocol
import TestSupport

/// A device the test drives step by step through a pairing (the real one, herdr-remote, runs its
/// steps by itself): to stop half-way, or to come back with the same key.
final class HalfwayDevice {
    let code: CompanionCode
    let key: KeyPair
    private var channel: FramedChannel?

    init(code: CompanionCode, key: KeyPair = .generate()) throws {
        self.code = code
        self.key = key
    }

    private func next(timeout: Double = 15) throws -> [FramedChannel.Output] {
        guard var channel, let event = channel.connection.receive(timeout: timeout) else {
            throw FixtureError("nothing arrived")
        }
        guard case .message(let frame) = event else { throw FixtureError("the connection ended: \(event)") }
        let outputs = try channel.receive(frame)
        self.channel = channel
        return outputs
    }

    /// Joins as the phone (retrying while the computer is not parked) and completes the handshake.
    private func connect() throws {
        let deadline = Date().addingTimeInterval(30)
        var connection: RelayConnection?
        guard let relay = code.relay else { throw FixtureError("the code names no relay") }
        while connection == nil {
            do {
                connection = try RelayConnection.connect(
                    to: relay, room: code.room, role: .device, credential: .none)
            } catch {
                guard Date() < deadline else { throw error }
                usleep(200_000)
            }
        }
        var channel = FramedChannel(
            connection: connection!,
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: code.pidText, localStatic: key, remoteStatic: code.staticPublicKey))
        _ = try channel.start()
        self.channel = channel
        while self.channel?.isEstablished != true { _ = try next() }
    }

    /// The code to type on the computer.
    func handshake() throws -> String {
        try connect()
        return try CompanionProfile.herdrRemote.sas(handshakeHash: channel?.established?.handshakeHash ?? [])
    }

    /// After a reconnect in the confirmed window: true when the computer's first message is the accept again.
    func handshakeExpectingAccept() throws -> Bool {
        try connect()
        return try waitForMessage() == .pairing(accepted: true)
    }

    func waitForMessage() throws -> CompanionMessage {
        while true {
            for output in try next() {
                if case .message(let bytes) = output { return try CompanionMessage(parsing: bytes) }
            }
        }
    }

    func waitForAccept() throws {
        let message = try waitForMessage()
        guard message == .pairing(accepted: true) else { throw FixtureError("not accepted: \(message)") }
    }

    /// Sends one application message, whatever its bytes.
    func send(_ bytes: [UInt8]) throws { try channel?.send(bytes) }

    func sendStatus(name: String, secret: [UInt8]) throws {
        try channel?.send(CompanionMessage.status(.init(name: name, roomSecret: secret, registered: false)).bytes)
    }

    /// The computer's ack, after the home addresses it sends first.
    func waitForAck() throws -> Bool {
        guard case .home = try waitForMessage() else { return false }
        return try waitForMessage() == .statusAcknowledged
    }

    func close() {
        channel?.connection.close()
        channel?.connection.waitUntilEnded(timeout: 5)
        channel = nil
    }
}

/// A computer the test drives step by step (herdr-host runs its steps by itself): it parks in a
/// fresh pairing room and can hold back its ack.
final class HoldingComputer {
    let code: CompanionCode
    private let key = KeyPair.generate()
    private var connection: RelayConnection
    private var channel: FramedChannel?
    private(set) var sas = ""

    init(relay: RelayEndpoint) throws {
        code = CompanionCode(
            staticPublicKey: key.publicKey, pairingID: CompanionCode.newPairingID(), relay: relay,
            computerName: "studio",
            expiresAt: Date().addingTimeInterval(120))
        connection = try RelayConnection.connect(to: relay, room: code.room, role: .computer, credential: .none)
    }

    private func next(timeout: Double = 30) throws -> [FramedChannel.Output] {
        guard let event = connection.receive(timeout: timeout) else { throw FixtureError("nothing arrived") }
        guard case .message(let frame) = event else { throw FixtureError("the connection ended: \(event)") }
        if channel == nil {
            channel = FramedChannel(
                connection: connection,
                handshake: try CompanionProfile.herdrRemote.responderHandshake(pid: code.pidText, localStatic: key))
        }
        let outputs = try channel!.receive(frame)
        return outputs
    }

    func handshake() throws {
        while channel?.isEstablished != true { _ = try next() }
        sas = try CompanionProfile.herdrRemote.sas(handshakeHash: channel?.established?.handshakeHash ?? [])
    }

    func accept() throws { try channel?.send(CompanionMessage.pairing(accepted: true).bytes) }

    /// Sends one application message, whatever its bytes.
    func send(_ bytes: [UInt8]) throws { try channel?.send(bytes) }

    func waitForMessage() throws -> CompanionMessage {
        while true {
            for output in try next() {
                if case .message(let bytes) = output { return try CompanionMessage(parsing: bytes) }
            }
        }
    }

    /// The room secret of the device's status.
    func waitForStatus() throws -> [UInt8] {
        guard case .status(let status) = try waitForMessage() else { throw FixtureError("no status") }
        return status.roomSecret
    }

    func acknowledge() throws { try channel?.send(CompanionMessage.statusAcknowledged.bytes) }

    func waitForRegistered() throws -> Bool { try waitForMessage() == .registered }

    func close() { connection.close() }
}

/// A paired device the test drives message by message (herdr-remote sends only well-formed
/// ones): a fresh connection to the running agent, over the relay or through the home door,
/// its handshake and status exchange done as herdr-remote does them; then whatever the test sends.
final class ScriptedDevice {
    private var channel: FramedChannel

    private init(channel: FramedChannel) { self.channel = channel }

    /// Over the relay, from what the device `name` kept when it paired.
    static func overRelay(_ road: RelayRoadFixture, device name: String = "phone") throws -> ScriptedDevice {
        let (_, connection) = try road.devicePairing(name)
        return ScriptedDevice(channel: try road.connectDevice(connection).channel)
    }

    /// Through the agent's home door at 127.0.0.1:`port` (the door's home-only gate admits this
    /// machine), from what the device `name` kept when it paired.
    static func overHome(_ road: RelayRoadFixture, port: UInt16, device name: String = "phone") throws
        -> ScriptedDevice
    {
        let (_, connection) = try road.devicePairing(name)
        let pairing = connection.pairing
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket(): \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw FixtureError("cannot connect to the home door at 127.0.0.1:\(port): \(errno)")
        }
        var channel = FramedChannel(
            connection: try HomeConnection(socket: fd),
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: pairing.pairingID, localStatic: connection.staticKey, remoteStatic: pairing.computerKey))
        _ = try channel.start()
        let device = ScriptedDevice(channel: channel)
        while device.channel.isEstablished != true { _ = try device.nextOutputs() }
        try device.send(
            CompanionMessage.status(
                .init(name: name, roomSecret: pairing.roomSecret, registered: pairing.registered)
            ).bytes)
        while true {
            guard let bytes = try device.next() else { throw FixtureError("the agent ended the connection unasked") }
            if bytes == CompanionMessage.statusAcknowledged.bytes { return device }
        }
    }

    /// Sends one application message, whatever its bytes.
    func send(_ bytes: [UInt8]) throws { try channel.send(bytes) }

    /// Sends a frame that is no Noise message of this channel (it fails authentication).
    func sendForgedFrame() throws { try channel.connection.send(SecureRandom.bytes(64)) }

    private func nextOutputs(timeout: Double = 30) throws -> [FramedChannel.Output]? {
        guard let event = channel.connection.receive(timeout: timeout) else {
            throw FixtureError("nothing arrived in \(Int(timeout)) s")
        }
        guard case .message(let frame) = event else { return nil }
        return try channel.receive(frame)
    }

    /// The next application message; nil once the connection ended.
    func next(timeout: Double = 30) throws -> [UInt8]? {
        while true {
            guard let outputs = try nextOutputs(timeout: timeout) else { return nil }
            for case .message(let bytes) in outputs { return bytes }
        }
    }

    /// Opens stream 1 (herdr's default session) and waits for its output to contain `text`.
    func open(waitingFor text: String) throws {
        try send(SessionMessage.open(stream: 1, name: nil, cols: 80, rows: 24, window: 1 << 20).bytes)
        try waitForOutput(text)
    }

    /// Waits for output on stream 1 to contain `text` (the output so far, from the last wait on).
    func waitForOutput(_ text: String) throws {
        var seen: [UInt8] = []
        while !String(decoding: seen, as: UTF8.self).contains(text) {
            guard let bytes = try next() else { throw FixtureError("the channel ended before \(text)") }
            if case .session(.output(1, _, let data)) = try ChannelMessage(parsing: bytes) { seen += data }
        }
    }

    /// True once the computer ended the connection (messages before the end are skipped); false
    /// when it stays up `timeout` seconds.
    func waitForEnd(timeout: Double = 30) -> Bool {
        do {
            while try next(timeout: timeout) != nil {}
            return true
        } catch {
            return false
        }
    }

    func close() { channel.connection.close() }
}

/// A computer the test drives message by message (herdr-host run sends only well-formed ones):
/// parked in a paired device's room with the computer's own keys and the room's join key, it
/// answers the device's handshake and status as the agent does, then sends what the test says.
final class ScriptedComputer {
    private let connection: RelayConnection
    private let key: KeyPair
    private let pairingID: String
    private var channel: FramedChannel?

    /// Parks for the first device paired on `road`'s computer.
    init(_ road: RelayRoadFixture) throws {
        guard let device = try road.registry.devices().first,
            let secret = try road.registry.roomSecret(for: device.id),
            let key = try StaticKeyFile.load(road.agentDirectory.staticKeyFile)
        else { throw FixtureError("no paired device, room secret or static key on the computer") }
        self.key = key
        pairingID = device.pairingID
        connection = try RelayConnection.connect(
            to: try RelayEndpoint(parsing: road.origin), room: device.room, role: .computer,
            credential: .joinKey(try RelayJoinKey(roomSecret: secret)))
    }

    /// The next application message from the device, the handshake answered on the way.
    func next(timeout: Double = 30) throws -> ChannelMessage {
        while true {
            guard let event = connection.receive(timeout: timeout) else { throw FixtureError("nothing arrived") }
            guard case .message(let frame) = event else { throw FixtureError("the connection ended: \(event)") }
            if channel == nil {
                channel = FramedChannel(
                    connection: connection,
                    handshake: try CompanionProfile.herdrRemote.responderHandshake(pid: pairingID, localStatic: key))
            }
            for case .message(let bytes) in try channel!.receive(frame) { return try ChannelMessage(parsing: bytes) }
        }
    }

    /// Answers the device's status as the agent does and waits for its open; its stream.
    func acceptSession() throws -> UInt32 {
        guard case .control(.status) = try next() else { throw FixtureError("the device sent no status first") }
        try send(CompanionMessage.statusAcknowledged.bytes)
        try send(CompanionMessage.home([]).bytes)
        while true {
            if case .session(.open(let stream, _, _, _, _)) = try next() { return stream }
        }
    }

    /// Sends one application message, whatever its bytes.
    func send(_ bytes: [UInt8]) throws { try channel?.send(bytes) }

    func close() { connection.close() }
}
