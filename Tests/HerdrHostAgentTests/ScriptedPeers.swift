import Companion
import Foundation
import HerdrCrypto
import Noise
import RelayClient
import RelayProtocol
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
                    to: relay, room: code.room, role: .phone, credential: .none)
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
            staticPublicKey: key.publicKey, pairingID: SecureRandom.bytes(16), relay: relay, computerName: "studio",
            expiresAt: Date().addingTimeInterval(120))
        connection = try RelayConnection.connect(to: relay, room: code.room, role: .mac, credential: .none)
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
