import HerdrCrypto
import Noise
import Testing

@Suite struct HandshakeStateTests {
    func kind(_ body: () throws -> Void) -> NoiseError.Kind? {
        do {
            try body()
            return nil
        } catch let error as NoiseError {
            return error.kind
        } catch {
            return nil
        }
    }

    /// Every named pattern runs in memory for both hashes: both sides end with the same handshake
    /// hash, each learns the other's static key where the pattern carries it, and the transport
    /// CipherStates work in each direction the pattern allows.
    @Test(arguments: HandshakePattern.all.map(\.name))
    func everyPatternCompletes(name: String) throws {
        let pattern = try #require(HandshakePattern.named(name))
        try run(pattern, HashBLAKE2s.self)
        try run(pattern, HashSHA256.self)
    }

    func run<H: NoiseHash>(_ pattern: HandshakePattern, _ hash: H.Type) throws {
        typealias State = HandshakeState<CipherChaChaPoly, H>
        let initiatorStatic = KeyPair.generate()
        let responderStatic = KeyPair.generate()
        func needsStatic(initiator: Bool) -> Bool {
            let pre = initiator ? pattern.initiatorPreMessage : pattern.responderPreMessage
            let direction: MessagePattern.Direction = initiator ? .initiatorToResponder : .responderToInitiator
            return pre.contains(.s)
                || pattern.messagePatterns.contains { $0.direction == direction && $0.tokens.contains(.s) }
        }
        var initiator = try State(
            pattern: pattern, initiator: true, prologue: [1, 2, 3],
            s: needsStatic(initiator: true) ? initiatorStatic : nil,
            rs: pattern.responderPreMessage.contains(.s) ? responderStatic.publicKey : nil)
        var responder = try State(
            pattern: pattern, initiator: false, prologue: [1, 2, 3],
            s: needsStatic(initiator: false) ? responderStatic : nil,
            rs: pattern.initiatorPreMessage.contains(.s) ? initiatorStatic.publicKey : nil)
        var index = 0
        while !initiator.isHandshakeComplete {
            let payload = Array("payload \(index)".utf8)
            if initiator.turn == .write {
                #expect(try responder.readMessage(initiator.writeMessage(payload)) == payload)
            } else {
                #expect(try initiator.readMessage(responder.writeMessage(payload)) == payload)
            }
            index += 1
        }
        #expect(responder.isHandshakeComplete)
        #expect(index == pattern.messagePatterns.count)
        #expect(initiator.getHandshakeHash() == responder.getHandshakeHash())
        #expect(initiator.getHandshakeHash().count == H.hashLength)
        if needsStatic(initiator: true) { #expect(responder.remoteStaticPublicKey == initiatorStatic.publicKey) }
        if needsStatic(initiator: false) { #expect(initiator.remoteStaticPublicKey == responderStatic.publicKey) }

        var (initiatorSend, initiatorReceive) = try initiator.transportCipherStates()
        var (responderSend, responderReceive) = try responder.transportCipherStates()
        #expect(try responderReceive.decryptWithAd([], initiatorSend.encryptWithAd([], [1, 2])) == [1, 2])
        if !pattern.isOneWay {
            #expect(try initiatorReceive.decryptWithAd([], responderSend.encryptWithAd([], [3])) == [3])
        }
        #expect(kind { _ = try initiator.writeMessage() } == .handshakeFinished)
        #expect(kind { _ = try responder.readMessage([]) } == .handshakeFinished)
    }

    /// A failed ReadMessage leaves the state exactly as it was: the genuine message still works
    /// afterwards and the handshake ends as if the bad one never came.
    @Test func failedReadRestoresState() throws {
        var (initiator, responder) = try xkPair(HashBLAKE2s.self)
        var referenceResponder = responder

        let message1 = try initiator.writeMessage(Array("m1".utf8))
        for index in [0, 31, 32, message1.count - 1] {
            var tampered = message1
            tampered[index] ^= 0x40
            let before = responder.handshakeHash
            #expect(kind { _ = try responder.readMessage(tampered) } == .decryptionFailed)
            #expect(responder.handshakeHash == before)
            #expect(responder.turn == .read)
            #expect(responder.remoteEphemeralPublicKey == nil)
        }
        #expect(kind { _ = try responder.readMessage(Array(message1.prefix(20))) } == .messageTooShort)
        #expect(kind { _ = try responder.readMessage(Array(message1.prefix(40))) } == .decryptionFailed)
        #expect(try responder.readMessage(message1) == Array("m1".utf8))
        _ = try referenceResponder.readMessage(message1)
        #expect(responder.handshakeHash == referenceResponder.handshakeHash)

        let message2 = try responder.writeMessage()
        var tampered2 = message2
        tampered2[tampered2.count - 1] ^= 1
        #expect(kind { _ = try initiator.readMessage(tampered2) } == .decryptionFailed)
        _ = try initiator.readMessage(message2)
        let message3 = try initiator.writeMessage(Array("m3".utf8))
        var tampered3 = message3
        tampered3[5] ^= 1  // inside the encrypted static key
        #expect(kind { _ = try responder.readMessage(tampered3) } == .decryptionFailed)
        #expect(responder.remoteStaticPublicKey == nil)
        #expect(kind { _ = try responder.splitCipherStates() } == .handshakeNotFinished)
        #expect(try responder.readMessage(message3) == Array("m3".utf8))
        #expect(responder.handshakeHash == initiator.handshakeHash)
    }

    @Test func turnsAreEnforced() throws {
        var (initiator, responder) = try xkPair(HashSHA256.self)
        #expect(initiator.turn == .write && responder.turn == .read)
        #expect(kind { _ = try responder.writeMessage() } == .wrongTurn)
        #expect(kind { _ = try initiator.readMessage([UInt8](repeating: 0, count: 48)) } == .wrongTurn)
        _ = try responder.readMessage(initiator.writeMessage())
        #expect(initiator.turn == .read && responder.turn == .write)
    }

    @Test func keysThePatternNeeds() throws {
        typealias State = HandshakeState<CipherChaChaPoly, HashBLAKE2s>
        let s = KeyPair.generate()
        #expect(kind { _ = try State(pattern: .xk, initiator: true, s: s) } == .missingKey)  // no rs
        #expect(kind { _ = try State(pattern: .xk, initiator: true, rs: s.publicKey) } == .missingKey)  // no s
        #expect(kind { _ = try State(pattern: .xk, initiator: false) } == .missingKey)
        #expect(kind { _ = try State(pattern: .xk, initiator: true, s: s, rs: [1, 2, 3]) } == .invalidKey)
        #expect(kind { _ = try State(pattern: .xx, initiator: true, s: s, rs: s.publicKey) } == .invalidKey)
        _ = try State(pattern: .nn, initiator: true)
    }

    /// A wrong prologue or a wrong responder key shows up as a failed first message.
    @Test func wrongPrologueOrKeyFails() throws {
        typealias State = HandshakeState<CipherChaChaPoly, HashBLAKE2s>
        let initiatorStatic = KeyPair.generate()
        let responderStatic = KeyPair.generate()
        var initiator = try State(
            pattern: .xk, initiator: true, prologue: [1], s: initiatorStatic, rs: responderStatic.publicKey)
        var responder = try State(pattern: .xk, initiator: false, prologue: [2], s: responderStatic)
        #expect(kind { _ = try responder.readMessage(initiator.writeMessage()) } == .decryptionFailed)

        var misdirected = try State(pattern: .xk, initiator: true, s: initiatorStatic, rs: KeyPair.generate().publicKey)
        var responder2 = try State(pattern: .xk, initiator: false, s: responderStatic)
        #expect(kind { _ = try responder2.readMessage(misdirected.writeMessage()) } == .decryptionFailed)
    }

    @Test func messageSizeLimits() throws {
        var (initiator, responder) = try xkPair(HashBLAKE2s.self)
        // msg1 = e (32) + payload + tag (16): the largest payload is 65535 - 48.
        var probe = initiator
        #expect(kind { _ = try probe.writeMessage([UInt8](repeating: 0, count: 65535 - 48 + 1)) } == .messageTooLong)
        #expect(probe.turn == .write)
        let biggest = try initiator.writeMessage([UInt8](repeating: 1, count: 65535 - 48))
        #expect(biggest.count == 65535)
        #expect(try responder.readMessage(biggest).count == 65535 - 48)
        var fresh = try xkPair(HashBLAKE2s.self).1
        #expect(kind { _ = try fresh.readMessage([UInt8](repeating: 0, count: 65536)) } == .messageTooLong)
    }

    /// The loud-named fixed ephemeral makes a handshake reproducible (what the vectors rely on);
    /// without it, every handshake has a fresh ephemeral.
    @Test func ephemerals() throws {
        typealias State = HandshakeState<CipherChaChaPoly, HashBLAKE2s>
        let s = KeyPair.generate()
        let rs = KeyPair.generate().publicKey
        let e = KeyPair.generate()
        var a = try State(pattern: .xk, initiator: true, s: s, rs: rs, insecureFixedEphemeralForTestsOnly: e)
        var b = try State(pattern: .xk, initiator: true, s: s, rs: rs, insecureFixedEphemeralForTestsOnly: e)
        #expect(try a.writeMessage() == b.writeMessage())
        #expect(a.localEphemeralPublicKey == e.publicKey)
        var c = try State(pattern: .xk, initiator: true, s: s, rs: rs)
        var d = try State(pattern: .xk, initiator: true, s: s, rs: rs)
        #expect(try c.writeMessage() != d.writeMessage())
        #expect(c.localEphemeralPublicKey != d.localEphemeralPublicKey)
    }

    @Test func protocolNames() {
        #expect(
            HandshakeState<CipherChaChaPoly, HashBLAKE2s>.protocolName(for: .xk) == "Noise_XK_25519_ChaChaPoly_BLAKE2s")
        #expect(
            HandshakeState<CipherChaChaPoly, HashSHA256>.protocolName(for: .ik) == "Noise_IK_25519_ChaChaPoly_SHA256")
        #expect(
            HandshakeState<CipherChaChaPoly, HashSHA512>.protocolName(for: .`in`) == "Noise_IN_25519_ChaChaPoly_SHA512")
    }
}

@Suite struct HandshakePatternTests {
    @Test func xkIsTheSpecsXK() {
        let xk = HandshakePattern.xk
        #expect(xk.initiatorPreMessage.isEmpty)
        #expect(xk.responderPreMessage == [.s])
        #expect(
            xk.messagePatterns == [
                MessagePattern(.initiatorToResponder, [.e, .es]), MessagePattern(.responderToInitiator, [.e, .ee]),
                MessagePattern(.initiatorToResponder, [.s, .se]),
            ])
        #expect(xk.description == "XK:\n  <- s\n  ...\n  -> e, es\n  <- e, ee\n  -> s, se")
    }

    @Test func namedPatternsAreValid() throws {
        #expect(HandshakePattern.all.count == 15)
        for pattern in HandshakePattern.all {
            let rebuilt = try HandshakePattern(
                name: pattern.name, initiatorPreMessage: pattern.initiatorPreMessage,
                responderPreMessage: pattern.responderPreMessage,
                messagePatterns: pattern.messagePatterns)
            #expect(rebuilt == pattern)
        }
        #expect(HandshakePattern.named("XK") == .xk)
        #expect(HandshakePattern.named("ZZ") == nil)
    }

    @Test func invalidPatternsAreRefused() {
        func refused(_ pre: [Token], _ messages: [MessagePattern]) -> Bool {
            do {
                _ = try HandshakePattern(name: "bad", responderPreMessage: pre, messagePatterns: messages)
                return false
            } catch {
                return error.kind == .invalidPattern
            }
        }
        #expect(refused([.ee], [MessagePattern(.initiatorToResponder, [.e])]))
        #expect(refused([], []))
        #expect(refused([], [MessagePattern(.responderToInitiator, [.e])]))
        #expect(
            refused([], [MessagePattern(.initiatorToResponder, [.e]), MessagePattern(.initiatorToResponder, [.s])]))
        #expect(refused([], [MessagePattern(.initiatorToResponder, [.e, .e])]))
        #expect(refused([], [MessagePattern(.initiatorToResponder, [.e, .ee])]))
        #expect(refused([], [MessagePattern(.initiatorToResponder, [.e, .es])]))
        #expect(refused([], [MessagePattern(.initiatorToResponder, [])]))
        #expect(!refused([.s], [MessagePattern(.initiatorToResponder, [.e, .es])]))
    }
}
