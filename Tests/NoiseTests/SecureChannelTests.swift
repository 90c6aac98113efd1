import EndToEndChannel
import HerdrCrypto
import Noise
import Testing

/// The companion channel: handshake, chunking at the 65518-byte boundary, and the rule that any
/// failure is fatal: tampered, reordered, replayed, truncated, dropped or oversized frames end the
/// channel, and once failed it refuses everything (before the reply to its first message, the
/// initiator passes over a bounded number of frames that are not that reply).
@Suite struct SecureChannelTests {
    typealias Channel = CompanionChannel

    struct Pair {
        var phone: Channel
        var mac: Channel
        var established: [Channel.Established] = []
    }

    /// Two channels with the handshake run between them.
    static func established(maximumMessageLength: Int = SecureChannelLimits.defaultMaximumMessageLength) throws -> Pair
    {
        let phoneKey = KeyPair.generate()
        let macKey = KeyPair.generate()
        let profile = CompanionProfile.herdrRemote
        var pair = Pair(
            phone: Channel(
                handshake: try profile.initiatorHandshake(
                    pid: "t", localStatic: phoneKey, remoteStatic: macKey.publicKey),
                maximumMessageLength: maximumMessageLength),
            mac: Channel(
                handshake: try profile.responderHandshake(pid: "t", localStatic: macKey),
                maximumMessageLength: maximumMessageLength))
        var toMac = try frames(pair.phone.start(), into: &pair.established)
        #expect(try pair.mac.start().isEmpty)
        while !toMac.isEmpty {
            let toPhone = try frames(pair.mac.receive(toMac.removeFirst()), into: &pair.established)
            for frame in toPhone { toMac += try frames(pair.phone.receive(frame), into: &pair.established) }
        }
        #expect(pair.phone.isEstablished && pair.mac.isEstablished)
        #expect(pair.established.count == 2)
        #expect(pair.established[0].handshakeHash == pair.established[1].handshakeHash)
        return pair
    }

    static func frames(_ actions: [Channel.Action], into established: inout [Channel.Established]) -> [[UInt8]] {
        actions.compactMap { action in
            switch action {
            case .send(let frame): return frame
            case .established(let done):
                established.append(done)
                return nil
            case .deliver: return nil
            }
        }
    }

    static func delivered(_ actions: [Channel.Action]) -> [[UInt8]] {
        actions.compactMap { if case .deliver(let message) = $0 { return message } else { return nil } }
    }

    func kind(_ body: () throws -> Void) -> SecureChannelError.Kind? {
        do {
            try body()
            return nil
        } catch let error as SecureChannelError {
            return error.kind
        } catch {
            return nil
        }
    }

    @Test func limits() {
        #expect(SecureChannelLimits.maximumFrameLength == 65535)
        #expect(SecureChannelLimits.maximumChunkLength == 65518)
        #expect(SecureChannelLimits.minimumFrameLength == 17)
    }

    @Test func handshakeTellsBothSidesWhoTheyTalkTo() throws {
        let pair = try Self.established()
        #expect(pair.established.allSatisfy { $0.remoteStaticPublicKey?.count == 32 })
        #expect(pair.phone.established == pair.established[1] || pair.phone.established == pair.established[0])
    }

    @Test func chunkingAtTheBoundary() throws {
        var pair = try Self.established()
        for (size, frameSizes) in [
            (0, [17]), (1, [18]), (65517, [65534]), (65518, [65535]), (65519, [65535, 18]),
            (2 * 65518, [65535, 65535]),
            (2 * 65518 + 1, [65535, 65535, 18]),
        ] {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 ^ size) }
            let frames = try pair.phone.send(message)
            #expect(frames.map(\.count) == frameSizes, "message of \(size) bytes")
            var got: [[UInt8]] = []
            for (index, frame) in frames.enumerated() {
                let out = Self.delivered(try pair.mac.receive(frame))
                #expect(out.isEmpty == (index < frames.count - 1))
                got += out
            }
            #expect(got == [message], "message of \(size) bytes")
        }
        // And the other way.
        let reply = [UInt8](repeating: 0xab, count: 70_000)
        var got: [[UInt8]] = []
        for frame in try pair.mac.send(reply) { got += Self.delivered(try pair.phone.receive(frame)) }
        #expect(got == [reply])
    }

    /// `sendFrame` and `receiveTransport` (the keystroke path without arrays) speak the same
    /// frames as `send` and `receive`, and stop at one frame's worth without failing the channel.
    @Test func oneFrameSendsAndReceivesMatchTheGeneralCalls() throws {
        var pair = try Self.established()
        for size in [0, 1, 65517, 65518] {
            let message = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 3) }
            let frame = try pair.phone.sendFrame(message)
            #expect(frame.count == size + 17, "message of \(size) bytes")
            #expect(try pair.mac.receiveTransport(frame) == message)
            // Interleaved with the general calls: one nonce sequence.
            #expect(Self.delivered(try pair.mac.receive(try pair.phone.sendFrame(message))) == [message])
            #expect(try pair.mac.receiveTransport(try pair.phone.send(message)[0]) == message)
        }
        #expect(kind { _ = try pair.phone.sendFrame([UInt8](repeating: 0, count: 65519)) } == .messageTooLarge)
        #expect(pair.phone.failure == nil, "a message too long for one frame is refused, not fatal")
        // A chunked message through `receiveTransport`: nil until its last frame.
        let long = [UInt8](repeating: 7, count: 65519)
        let frames = try pair.phone.send(long)
        #expect(try pair.mac.receiveTransport(frames[0]) == nil)
        #expect(try pair.mac.receiveTransport(frames[1]) == long)
    }

    @Test func emptyMessagesAreMessages() throws {
        var pair = try Self.established()
        for _ in 0..<3 {
            let frames = try pair.phone.send([])
            #expect(frames.count == 1)
            #expect(Self.delivered(try pair.mac.receive(frames[0])) == [[]])
        }
    }

    enum Fault: String, CaseIterable {
        case tampered
        case tamperedTag
        case reordered
        case replayed
        case truncated
        case dropped
        case reflected
        case oversized
        case tooShort
    }

    @Test(arguments: Fault.allCases)
    func anyFaultEndsTheChannel(_ fault: Fault) throws {
        var pair = try Self.established()
        let first = try pair.phone.send(Array("first".utf8))[0]
        let second = try pair.phone.send(Array("second".utf8))[0]
        var expected = SecureChannelError.Kind.decryptionFailed
        let bad: [UInt8]
        switch fault {
        case .tampered:
            bad = first.enumerated().map { $0.offset == 2 ? $0.element ^ 0x20 : $0.element }
        case .tamperedTag:
            bad = first.enumerated().map { $0.offset == first.count - 1 ? $0.element ^ 0x01 : $0.element }
        case .reordered:
            bad = second
        case .replayed:
            #expect(Self.delivered(try pair.mac.receive(first)) == [Array("first".utf8)])
            bad = first
        case .truncated:
            bad = Array(first.dropLast())
        case .dropped:
            #expect(Self.delivered(try pair.mac.receive(first)) == [Array("first".utf8)])
            _ = try pair.phone.send(Array("lost".utf8))
            bad = try pair.phone.send(Array("after the lost one".utf8))[0]
        case .reflected:
            // The mac's own frame sent back to it: the directions have different keys.
            bad = try pair.mac.send(Array("mine".utf8))[0]
        case .oversized:
            bad = [UInt8](repeating: 0, count: 65536)
            expected = .frameTooLong
        case .tooShort:
            bad = Array(first.prefix(10))
        }
        #expect(kind { _ = try pair.mac.receive(bad) } == expected)
        #expect(!pair.mac.isEstablished)
        #expect(pair.mac.failure?.kind == expected)
        // Once failed, everything fails, with the same error: even genuine frames, and sending.
        #expect(kind { _ = try pair.mac.receive(second) } == expected)
        #expect(kind { _ = try pair.mac.receive(first) } == expected)
        #expect(kind { _ = try pair.mac.send([1]) } == expected)
    }

    /// Frames built directly with the phone's transport keys: an authenticated chunk with a bad
    /// flag or no flag byte, and a chunked message over the receiver's limit.
    @Test func malformedChunksEndTheChannel() throws {
        for (plaintexts, expected) in [
            ([[2, 1, 2, 3]], SecureChannelError.Kind.invalidChunk), ([[]], .invalidChunk),
            ([[1] + [UInt8](repeating: 0, count: 600), [0, 1]], .messageTooLarge),
        ] {
            let phoneKey = KeyPair.generate()
            let macKey = KeyPair.generate()
            var phone = try CompanionHandshake(pattern: .xk, initiator: true, s: phoneKey, rs: macKey.publicKey)
            var mac = Channel(
                handshake: try CompanionHandshake(pattern: .xk, initiator: false, s: macKey), maximumMessageLength: 500)
            var reply: [[UInt8]] = []
            var established: [Channel.Established] = []
            reply = Self.frames(try mac.receive(phone.writeMessage()), into: &established)
            _ = try phone.readMessage(reply[0])
            _ = Self.frames(try mac.receive(phone.writeMessage()), into: &established)
            #expect(mac.isEstablished)
            var (send, _) = try phone.transportCipherStates()
            var failure: SecureChannelError.Kind?
            for plaintext in plaintexts {
                failure = kind { _ = try mac.receive(send.encryptWithAd([], plaintext)) }
                if failure != nil { break }
            }
            #expect(failure == expected)
            #expect(mac.failure?.kind == expected)
        }
    }

    @Test func aRefusedHandshakeIsFatal() throws {
        let phoneKey = KeyPair.generate()
        let macKey = KeyPair.generate()
        var phone = Channel(
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: "one", localStatic: phoneKey, remoteStatic: macKey.publicKey))
        var mac = Channel(
            handshake: try CompanionProfile.herdrRemote.responderHandshake(pid: "another", localStatic: macKey))
        var ignored: [Channel.Established] = []
        let first = Self.frames(try phone.start(), into: &ignored)[0]
        #expect(kind { _ = try mac.receive(first) } == .handshakeFailed)
        #expect(mac.failure?.underlying?.kind == .decryptionFailed)
        #expect(kind { _ = try mac.receive(first) } == .handshakeFailed)
        // A frame arriving when this side must write is refused too.
        var phone2 = Channel(
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: "x", localStatic: phoneKey, remoteStatic: macKey.publicKey))
        #expect(kind { _ = try phone2.receive(first) } == .handshakeFailed)
        #expect(kind { _ = try phone.receive([UInt8](repeating: 0, count: 65536)) } == .frameTooLong)
    }

    /// A device's new connection at the relay is spliced to the computer's socket while the
    /// computer still sends its old channel's frames: the device, waiting for the computer's
    /// handshake message, passes them over, and the handshake completes when it comes.
    @Test func theInitiatorPassesOverAnOldChannelsFramesBeforeTheReply() throws {
        var old = try Self.established()
        let stale = try [[1, 2, 3], [UInt8](repeating: 7, count: 5000), []].map { try old.mac.sendFrame($0) }
        let phoneKey = KeyPair.generate()
        let macKey = KeyPair.generate()
        let profile = CompanionProfile.herdrRemote
        var phone = Channel(
            handshake: try profile.initiatorHandshake(pid: "t", localStatic: phoneKey, remoteStatic: macKey.publicKey))
        var mac = Channel(handshake: try profile.responderHandshake(pid: "t", localStatic: macKey))
        var established: [Channel.Established] = []
        let first = Self.frames(try phone.start(), into: &established)[0]
        let reply = Self.frames(try mac.receive(first), into: &established)[0]
        // Old frames, and a forged reply (the right length, random bytes), before the real one.
        for frame in stale + [(0..<reply.count).map { _ in UInt8.random(in: 0...255) }] {
            #expect(try phone.receive(frame).isEmpty)
        }
        #expect(phone.staleFrames == 4)
        let third = Self.frames(try phone.receive(reply), into: &established)
        #expect(phone.isEstablished)
        _ = Self.frames(try mac.receive(third[0]), into: &established)
        #expect(mac.isEstablished)
        #expect(established.count == 2 && established[0].handshakeHash == established[1].handshakeHash)
        let message = try phone.sendFrame(Array("after".utf8))
        #expect(Self.delivered(try mac.receive(message)) == [Array("after".utf8)])
    }

    @Test func theInitiatorPassesOverABoundedNumberOfFramesAndTheResponderNone() throws {
        let macKey = KeyPair.generate()
        let profile = CompanionProfile.herdrRemote
        var phone = Channel(
            handshake: try profile.initiatorHandshake(
                pid: "t", localStatic: .generate(), remoteStatic: macKey.publicKey))
        _ = try phone.start()
        let garbage = [UInt8](repeating: 9, count: 48)
        for _ in 0..<SecureChannelLimits.maximumStaleFrames { _ = try phone.receive(garbage) }
        #expect(kind { _ = try phone.receive(garbage) } == .handshakeFailed)
        #expect(phone.failure != nil)
        var big = Channel(
            handshake: try profile.initiatorHandshake(
                pid: "t", localStatic: .generate(), remoteStatic: macKey.publicKey))
        _ = try big.start()
        let frame = [UInt8](repeating: 9, count: SecureChannelLimits.maximumFrameLength)
        let fit = SecureChannelLimits.maximumStaleBytes / frame.count
        for _ in 0..<fit { _ = try big.receive(frame) }
        #expect(kind { _ = try big.receive(frame) } == .handshakeFailed, "past the bytes' bound")
        // The responder reads the initiator's first message or fails: nothing is passed over.
        var mac = Channel(handshake: try profile.responderHandshake(pid: "t", localStatic: macKey))
        #expect(kind { _ = try mac.receive(garbage) } == .handshakeFailed)
    }

    @Test func sendingBeforeTheHandshakeIsRefusedButNotFatal() throws {
        let macKey = KeyPair.generate()
        var phone = Channel(
            handshake: try CompanionProfile.herdrRemote.initiatorHandshake(
                pid: "p", localStatic: .generate(), remoteStatic: macKey.publicKey))
        #expect(kind { _ = try phone.send([1]) } == .notEstablished)
        #expect(phone.failure == nil)
        #expect(try phone.start().count == 1)
    }
}
