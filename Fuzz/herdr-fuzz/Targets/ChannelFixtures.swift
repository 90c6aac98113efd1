import EndToEndChannel
import Noise

/// Fixed keys and one genuine `Noise_XK_25519_ChaChaPoly_BLAKE2s` exchange (herdr-remote's
/// prologue, a fixed pairing id), made once per process: the channel targets copy these states
/// instead of generating keys per input. The ephemerals are fixed too, so the genuine messages
/// are the same in every run and the seed corpus can hold them.
enum ChannelFixtures {
    static let pid = "AAECAwQFBgcICQoLDA0ODw"
    static let prologue = CompanionProfile.herdrRemote.prologue(pid: pid)
    static let phoneStatic = key(0x11)
    static let macStatic = key(0x22)
    static let phoneEphemeral = key(0x33)
    static let macEphemeral = key(0x44)

    static func key(_ byte: UInt8) -> KeyPair {
        try! KeyPair(privateKey: [UInt8](repeating: byte, count: 32))
    }

    /// The phone's (initiator's) handshake, nothing written yet.
    static func initiator() -> CompanionHandshake {
        try! CompanionHandshake(
            pattern: .xk, initiator: true, prologue: prologue, s: phoneStatic, rs: macStatic.publicKey,
            insecureFixedEphemeralForTestsOnly: phoneEphemeral)
    }

    /// The computer's (responder's) handshake, nothing read yet.
    static func responder() -> CompanionHandshake {
        try! CompanionHandshake(
            pattern: .xk, initiator: false, prologue: prologue, s: macStatic,
            insecureFixedEphemeralForTestsOnly: macEphemeral)
    }

    /// The three genuine messages and the states between them.
    struct Exchange: Sendable {
        var message1: [UInt8] = []
        var message2: [UInt8] = []
        var message3: [UInt8] = []
        /// The responder before message 1, and after reading it and writing message 2.
        var responderFresh = ChannelFixtures.responder()
        var responderAwaiting3 = ChannelFixtures.responder()
        /// The initiator after writing message 1.
        var initiatorAwaiting2 = ChannelFixtures.initiator()
        var initiatorDone = ChannelFixtures.initiator()
        var responderDone = ChannelFixtures.responder()
    }

    static let exchange: Exchange = {
        var out = Exchange()
        var initiator = ChannelFixtures.initiator()
        out.message1 = try! initiator.writeMessage()
        out.initiatorAwaiting2 = initiator
        var responder = out.responderFresh
        _ = try! responder.readMessage(out.message1)
        out.message2 = try! responder.writeMessage()
        out.responderAwaiting3 = responder
        _ = try! initiator.readMessage(out.message2)
        out.message3 = try! initiator.writeMessage()
        out.initiatorDone = initiator
        _ = try! responder.readMessage(out.message3)
        out.responderDone = responder
        precondition(initiator.handshakeHash == responder.handshakeHash, "the fixed handshake disagrees")
        return out
    }()

    /// What encrypts phone → computer (c1) and computer → phone (c2), at nonce 0.
    static let phoneSend = try! exchange.initiatorDone.transportCipherStates().send
    static let macSend = try! exchange.responderDone.transportCipherStates().send

    /// The channel's reassembly limit in the channel targets: small, so a fuzzed chunked message
    /// can reach it.
    static let channelLimit = 2048

    /// The computer's channel waiting for message 1, the phone's having sent it.
    static let macWaiting: CompanionChannel = {
        var channel = CompanionChannel(handshake: responder(), maximumMessageLength: channelLimit)
        precondition(try! channel.start().isEmpty)
        return channel
    }()
    static let phoneWaiting: CompanionChannel = {
        var channel = CompanionChannel(handshake: initiator(), maximumMessageLength: channelLimit)
        precondition(try! channel.start() == [.send(exchange.message1)], "the channel's message 1 differs")
        return channel
    }()

    /// Both channels established by the genuine exchange (their transport nonces at 0).
    static let established: (phone: CompanionChannel, mac: CompanionChannel) = {
        var phone = phoneWaiting
        var mac = macWaiting
        precondition(try! mac.receive(exchange.message1) == [.send(exchange.message2)])
        let toMac = try! phone.receive(exchange.message2)
        precondition(toMac.first == .send(exchange.message3) && phone.isEstablished)
        _ = try! mac.receive(exchange.message3)
        precondition(mac.isEstablished && mac.established?.remoteStaticPublicKey == phoneStatic.publicKey)
        return (phone, mac)
    }()
}
