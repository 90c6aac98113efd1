import EndToEndChannel
import Foundation
import HerdrCrypto
import Noise
import TestSupport
import Testing

/// Interop with an independent implementation, the PyPI package `noiseprotocol`, run as a real
/// peer process (Peers/noise_peer.py) over a framed pipe, in both roles.
@Suite struct InteropTests {
    static let python = "python3"

    /// The channel as the product uses it: XK, empty handshake payloads, then transport messages
    /// both ways with the flag-byte chunking rule, sizes around the 65518-byte chunk limit.
    @Test(arguments: [true, false], ["BLAKE2s", "SHA256"])
    func companionChannel(weAreInitiator: Bool, hash: String) throws {
        if hash == "BLAKE2s" {
            try runChannel(HashBLAKE2s.self, weAreInitiator: weAreInitiator)
        } else {
            try runChannel(HashSHA256.self, weAreInitiator: weAreInitiator)
        }
    }

    func runChannel<H: NoiseHash>(_ hash: H.Type, weAreInitiator: Bool) throws {
        typealias State = HandshakeState<CipherChaChaPoly, H>
        let ours = KeyPair.generate()
        let theirs = try KeyPair(privateKey: SecureRandom.bytes(32))
        let pid = "interop-\(Hex.encode(SecureRandom.bytes(4)))"
        let prologue = CompanionProfile.herdrRemote.prologue(pid: pid)
        var arguments = [
            TestFiles.peer("noise_peer.py").path, "--protocol", State.protocolName(for: .xk), "--role",
            weAreInitiator ? "responder" : "initiator", "--prologue", Hex.encode(prologue), "--static",
            Hex.encode(theirs.privateKeyBytes),
        ]
        let handshake: State
        if weAreInitiator {
            handshake = try State(pattern: .xk, initiator: true, prologue: prologue, s: ours, rs: theirs.publicKey)
        } else {
            handshake = try State(pattern: .xk, initiator: false, prologue: prologue, s: ours)
            arguments += ["--remote-static", Hex.encode(ours.publicKey)]
        }
        let peer = try FramedPeer(Self.python, arguments)
        var channel = SecureChannel(handshake: handshake)

        var established: SecureChannel<CipherChaChaPoly, H>.Established?
        var delivered: [[UInt8]] = []
        func handle(_ actions: [SecureChannel<CipherChaChaPoly, H>.Action]) throws {
            for action in actions {
                switch action {
                case .send(let frame): try peer.send(frame)
                case .established(let done): established = done
                case .deliver(let message): delivered.append(message)
                }
            }
        }
        /// Reads frames until one complete message has been delivered.
        func nextMessage() throws -> [UInt8] {
            while delivered.isEmpty { try handle(channel.receive(peer.receive())) }
            return delivered.removeFirst()
        }

        try handle(channel.start())
        while established == nil { try handle(channel.receive(peer.receive())) }
        let done = try #require(established)
        #expect(done.remoteStaticPublicKey == theirs.publicKey)
        // Their handshake hash, sent as their first transport message, equals ours.
        #expect(try nextMessage() == Array("hash:".utf8) + done.handshakeHash)

        let sizes = [0, 1, 100, 65517, 65518, 65519, 2 * 65518, 200_000]
        for size in sizes {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ size) }
            let frames = try channel.send(message)
            #expect(frames.count == max(1, (size + 65517) / 65518))
            for frame in frames { try peer.send(frame) }
            let echo = try nextMessage()
            #expect(echo.count == message.count + 5, "echo of \(size) bytes")
            #expect(echo == Array("echo:".utf8) + message, "echo of \(size) bytes")
        }
        for frame in try channel.send(Array("bye".utf8)) { try peer.send(frame) }
        #expect(try nextMessage() == Array("bye-ack".utf8))
        let result = try peer.finish()
        #expect(result.status == 0, "peer: \(result.stderr)")
    }

    /// The token interpreter against theirs for the interactive patterns, with non-empty handshake
    /// payloads checked on both sides, then single-chunk transport messages both ways.
    @Test(arguments: ["NN", "NK", "NX", "XN", "XK", "XX", "KN", "KK", "KX", "IN", "IK", "IX"], [true, false])
    func patterns(name: String, weAreInitiator: Bool) throws {
        let pattern = try #require(HandshakePattern.named(name))
        try runPattern(pattern, HashBLAKE2s.self, weAreInitiator: weAreInitiator)
        try runPattern(pattern, HashSHA256.self, weAreInitiator: weAreInitiator)
    }

    func runPattern<H: NoiseHash>(_ pattern: HandshakePattern, _ hash: H.Type, weAreInitiator: Bool) throws {
        typealias State = HandshakeState<CipherChaChaPoly, H>
        let ours = KeyPair.generate()
        let theirs = KeyPair.generate()
        let prologue = Array("interop prologue".utf8)
        let ourPre = weAreInitiator ? pattern.initiatorPreMessage : pattern.responderPreMessage
        let theirPre = weAreInitiator ? pattern.responderPreMessage : pattern.initiatorPreMessage
        let ourDirection: MessagePattern.Direction = weAreInitiator ? .initiatorToResponder : .responderToInitiator
        let weNeedStatic =
            ourPre.contains(.s)
            || pattern.messagePatterns.contains { $0.direction == ourDirection && $0.tokens.contains(.s) }
        let theyNeedStatic =
            theirPre.contains(.s)
            || pattern.messagePatterns.contains { $0.direction != ourDirection && $0.tokens.contains(.s) }

        var arguments = [
            TestFiles.peer("noise_peer.py").path, "--protocol", State.protocolName(for: pattern), "--role",
            weAreInitiator ? "responder" : "initiator", "--prologue", Hex.encode(prologue), "--handshake-payloads",
        ]
        if theyNeedStatic { arguments += ["--static", Hex.encode(theirs.privateKeyBytes)] }
        if ourPre.contains(.s) { arguments += ["--remote-static", Hex.encode(ours.publicKey)] }
        var state = try State(
            pattern: pattern, initiator: weAreInitiator, prologue: prologue, s: weNeedStatic ? ours : nil,
            rs: theirPre.contains(.s) ? theirs.publicKey : nil)
        let peer = try FramedPeer(Self.python, arguments)

        let ourRole = weAreInitiator ? "initiator" : "responder"
        let theirRole = weAreInitiator ? "responder" : "initiator"
        var index = 0
        while !state.isHandshakeComplete {
            if state.turn == .write {
                try peer.send(state.writeMessage(Array("hs-\(index)-from-\(ourRole)".utf8)))
            } else {
                let payload = try state.readMessage(peer.receive())
                #expect(
                    payload == Array("hs-\(index)-from-\(theirRole)".utf8), "\(state.protocolName) message \(index)")
            }
            index += 1
        }
        if theyNeedStatic { #expect(state.remoteStaticPublicKey == theirs.publicKey) }

        var (send, receive) = try state.transportCipherStates()
        func receiveMessage() throws -> [UInt8] {
            let plaintext = try receive.decryptWithAd([], peer.receive())
            #expect(plaintext.first == 0, "single-chunk message")
            return Array(plaintext.dropFirst())
        }
        #expect(try receiveMessage() == Array("hash:".utf8) + state.getHandshakeHash(), "\(state.protocolName)")
        for message in [[], Array("one".utf8), [UInt8](repeating: 7, count: 1000)] {
            try peer.send(send.encryptWithAd([], [0] + message))
            #expect(try receiveMessage() == Array("echo:".utf8) + message)
        }
        try peer.send(send.encryptWithAd([], [0] + Array("bye".utf8)))
        #expect(try receiveMessage() == Array("bye-ack".utf8))
        let result = try peer.finish()
        #expect(result.status == 0, "\(state.protocolName): peer: \(result.stderr)")
    }

    /// A tampered transport frame from us ends their side too: their decrypt fails and they exit 1.
    @Test func theyRefuseATamperedFrame() throws {
        let ours = KeyPair.generate()
        let theirs = KeyPair.generate()
        let prologue = CompanionProfile.herdrRemote.prologue(pid: "tamper")
        var channel = CompanionChannel(
            handshake: try CompanionHandshake(
                pattern: .xk, initiator: true, prologue: prologue, s: ours, rs: theirs.publicKey))
        let peer = try FramedPeer(
            Self.python,
            [
                TestFiles.peer("noise_peer.py").path, "--protocol", CompanionProfile.protocolName, "--role",
                "responder", "--prologue",
                Hex.encode(prologue), "--static", Hex.encode(theirs.privateKeyBytes),
            ])
        var isEstablished = false
        func handle(_ actions: [CompanionChannel.Action]) throws {
            for action in actions {
                if case .send(let frame) = action { try peer.send(frame) }
                if case .established = action { isEstablished = true }
            }
        }
        try handle(channel.start())
        while !isEstablished { try handle(channel.receive(peer.receive())) }
        var frame = try channel.send(Array("hello".utf8))[0]
        frame[3] ^= 0x01
        try peer.send(frame)
        let result = try peer.finish()
        #expect(result.status == 1)
        #expect(
            result.stderr.contains("InvalidTag") || result.stderr.contains("Failed authentication"), "\(result.stderr)")
    }
}
