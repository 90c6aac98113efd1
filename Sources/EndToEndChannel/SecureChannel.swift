import HerdrCrypto
import Noise

/// Limits of the companion channel's framing.
public enum SecureChannelLimits {
    /// One frame is one Noise message: at most 65535 bytes (Noise revision 34, section 3).
    public static let maximumFrameLength = NoiseLimits.maximumMessageLength
    /// The ChaChaPoly tag on every transport message.
    public static let tagLength = NoiseLimits.tagLength
    /// The flag byte starting each chunk's plaintext: 1 = more chunks follow, 0 = last chunk.
    public static let flagLength = 1
    /// The most application bytes one frame carries: 65535 − 16 − 1 = 65518 (interop-facts §5).
    public static let maximumChunkLength = maximumFrameLength - tagLength - flagLength
    /// The smallest valid transport frame: an empty last chunk (flag byte and tag).
    public static let minimumFrameLength = flagLength + tagLength
    /// Default bound on one reassembled message. The relay caps frames, not messages, so the
    /// receiver bounds what a peer can make it buffer.
    public static let defaultMaximumMessageLength = 64 * 1024 * 1024

    /// While the initiator waits for the responder's handshake message, at most this many
    /// frames that do not read as it are passed over, of at most `maximumStaleBytes` in all: on
    /// the relay road a device's new connection is spliced to the computer's socket at once,
    /// and the computer sends its old channel's frames until it reads the new handshake (its
    /// send queue of 1 MiB, the relay's and the kernels' buffers).
    public static let maximumStaleFrames = 1024
    public static let maximumStaleBytes = 8 * 1024 * 1024

    public static let flagMore: UInt8 = 1
    public static let flagLast: UInt8 = 0
}

/// The end-to-end channel over a message pipe (a WebSocket, a length-prefixed stream): a Noise
/// handshake with empty payloads, then transport messages, one Noise message per frame. Messages
/// longer than one frame are chunked, each chunk's plaintext being a flag byte (1 = more, 0 =
/// last) followed by at most 65518 bytes.
///
/// A pure state machine: it does no I/O. `start`, `receive` and `send` return what the caller
/// must do (frames to write, messages to hand up). Any failure after `init` (a handshake message
/// refused, a frame that fails authentication, a malformed chunk) is fatal: the channel moves to a
/// failed state and every later call throws the same error, so the caller tears the pipe down and
/// starts over with a fresh handshake. Nothing is ever skipped once the channel is established
/// (specs/002, "AEAD failure is fatal"): a dropped, reordered, replayed or altered frame surfaces
/// as a failure of the next frame that arrives, because each side's receive nonce counts frames.
/// The one exception comes before anything is accepted: the initiator, waiting for the
/// responder's handshake message, passes over frames that do not read as it (a bounded number),
/// since on the relay road the responder's socket may still carry its old channel's frames when
/// the initiator's new connection is spliced to it. Nothing of a passed-over frame is kept, and a
/// forged handshake message cannot read (it is authenticated with the responder's static key), so
/// an attacker gains nothing a dropped frame would not give.
public struct SecureChannel<Cipher: NoiseCipher, Hash: NoiseHash>: Sendable {
    public enum Action: Sendable, Equatable {
        /// Write this frame to the pipe.
        case send([UInt8])
        /// The handshake has finished; the channel carries messages from now on.
        case established(Established)
        /// A complete message from the peer.
        case deliver([UInt8])
    }

    public struct Established: Sendable, Equatable {
        /// The Noise handshake hash, from which the SAS is derived.
        public let handshakeHash: [UInt8]
        /// The peer's static public key, which the handshake authenticated.
        public let remoteStaticPublicKey: [UInt8]?
    }

    private struct Transport: Sendable {
        var send: CipherState<Cipher>
        var receive: CipherState<Cipher>
        /// The message whose last chunk has not arrived yet.
        var pending: [UInt8] = []
        var assembling = false
    }

    private enum State: Sendable {
        case handshaking(HandshakeState<Cipher, Hash>)
        case established(Transport)
        case failed(SecureChannelError)
        /// Held only while the transport is mutated in place, so its CipherStates stay uniquely
        /// referenced and their OpenSSL contexts are not copied.
        case modifying
    }

    private var state: State
    /// Frames (and their bytes) the initiator passed over while waiting for the responder's
    /// handshake message.
    public private(set) var staleFrames = 0
    private var staleBytes = 0
    public let maximumMessageLength: Int
    /// The handshake hash and peer key, once established.
    public private(set) var established: Established?

    /// A channel that will run `handshake` (freshly initialized, nothing written or read yet, and
    /// an interactive pattern: the channel carries messages both ways).
    public init(
        handshake: HandshakeState<Cipher, Hash>,
        maximumMessageLength: Int = SecureChannelLimits.defaultMaximumMessageLength
    ) {
        precondition(!handshake.pattern.isOneWay, "SecureChannel needs an interactive handshake pattern")
        state = .handshaking(handshake)
        self.maximumMessageLength = maximumMessageLength
    }

    public var isEstablished: Bool {
        if case .established = state { return true }
        return false
    }

    /// The error that ended the channel, if it has failed.
    public var failure: SecureChannelError? {
        if case .failed(let error) = state { return error }
        return nil
    }

    /// Starts the handshake: the initiator's first message, or nothing for the responder.
    public mutating func start() throws(SecureChannelError) -> [Action] {
        try guardNotFailed()
        guard case .handshaking(let handshake) = state, handshake.turn == .write else { return [] }
        return try advanceHandshake(with: nil)
    }

    /// Processes one frame from the peer.
    public mutating func receive(_ frame: [UInt8]) throws(SecureChannelError) -> [Action] {
        try guardNotFailed()
        if case .handshaking = state { return try advanceHandshake(with: frame) }
        return try receiveTransport(frame).map { [.deliver($0)] } ?? []
    }

    /// Processes one frame of an established channel (`receive` without its array of actions):
    /// the message the frame completes, or nil while a chunked message is still arriving.
    public mutating func receiveTransport(_ frame: [UInt8]) throws(SecureChannelError) -> [UInt8]? {
        let limit = maximumMessageLength
        return try withTransport { transport throws(SecureChannelError) in
            try Self.open(frame, with: &transport, limit: limit)
        }
    }

    /// The frames that carry `message` to the peer, in order: one frame for up to 65518 bytes
    /// (and for an empty message), more for longer ones.
    public mutating func send(_ message: [UInt8]) throws(SecureChannelError) -> [[UInt8]] {
        try withTransport { transport throws(SecureChannelError) in
            try message.withBytes { bytes throws(SecureChannelError) in try Self.seal(bytes, with: &transport) }
        }
    }

    /// The one frame that carries `message`, of at most `maximumChunkLength` bytes (`send`
    /// without its array of frames).
    public mutating func sendFrame(_ message: [UInt8]) throws(SecureChannelError) -> [UInt8] {
        guard message.count <= SecureChannelLimits.maximumChunkLength else {
            throw SecureChannelError(
                .messageTooLarge,
                "one frame carries at most \(SecureChannelLimits.maximumChunkLength) bytes, not \(message.count)")
        }
        return try withTransport { transport throws(SecureChannelError) in
            try message.withBytes { bytes throws(SecureChannelError) in
                try Self.sealChunk(bytes, last: true, with: &transport)
            }
        }
    }

    /// Runs `body` on the established transport, in place; a failure is fatal.
    private mutating func withTransport<Result>(
        _ body: (inout Transport) throws(SecureChannelError) -> Result
    ) throws(SecureChannelError) -> Result {
        try guardNotFailed()
        guard case .established(var transport) = state else {
            throw SecureChannelError(.notEstablished, "the handshake has not finished")
        }
        state = .modifying
        do {
            let result = try body(&transport)
            state = .established(transport)
            return result
        } catch {
            try fail(error)
        }
    }

    // MARK: - Handshake

    private mutating func advanceHandshake(with frame: [UInt8]?) throws(SecureChannelError) -> [Action] {
        guard case .handshaking(var handshake) = state else { preconditionFailure("not handshaking") }
        var actions: [Action] = []
        do {
            if let frame {
                guard handshake.turn == .read else {
                    throw SecureChannelError(.handshakeFailed, "a handshake frame arrived when this side must write")
                }
                guard frame.count <= SecureChannelLimits.maximumFrameLength else {
                    throw SecureChannelError(.frameTooLong, "handshake frame of \(frame.count) bytes")
                }
                // Handshake payloads are empty in this protocol; anything there is authenticated
                // but has no meaning yet, so it is ignored.
                var attempt = handshake
                if (try? attempt.readMessage(frame)) != nil {
                    handshake = attempt
                } else if handshake.initiator, staleFrames < SecureChannelLimits.maximumStaleFrames,
                    staleBytes + frame.count <= SecureChannelLimits.maximumStaleBytes
                {
                    // Not the responder's message: passed over, the handshake as it was.
                    staleFrames += 1
                    staleBytes += frame.count
                    return []
                } else {
                    _ = try handshake.readMessage(frame)  // fails as the attempt did, saying why
                }
            }
            if handshake.turn == .write {
                actions.append(.send(try handshake.writeMessage([])))
            }
            if handshake.isHandshakeComplete {
                let (send, receive) = try handshake.transportCipherStates()
                let done = Established(
                    handshakeHash: handshake.handshakeHash, remoteStaticPublicKey: handshake.remoteStaticPublicKey)
                established = done
                state = .established(Transport(send: send, receive: receive))
                actions.append(.established(done))
            } else {
                state = .handshaking(handshake)
            }
            return actions
        } catch let error as SecureChannelError {
            try fail(error)
        } catch let error as NoiseError {
            try fail(SecureChannelError(.handshakeFailed, "handshake refused", underlying: error))
        } catch {
            try fail(SecureChannelError(.noise, "\(error)"))
        }
    }

    // MARK: - Transport

    /// Decrypts one frame; returns a message when this frame completes one. The flag byte is
    /// decrypted apart from the payload, which lands directly in the array handed up: a
    /// single-frame message is never copied, and a chunked one is appended chunk by chunk.
    private static func open(_ frame: [UInt8], with transport: inout Transport, limit: Int) throws(SecureChannelError)
        -> [UInt8]?
    {
        guard frame.count <= SecureChannelLimits.maximumFrameLength else {
            throw SecureChannelError(.frameTooLong, "frame of \(frame.count) bytes is over the 65535-byte Noise limit")
        }
        guard frame.count >= SecureChannelLimits.tagLength else {
            throw SecureChannelError(.decryptionFailed, "frame of \(frame.count) bytes is shorter than the tag")
        }
        let payloadLength = max(frame.count - SecureChannelLimits.minimumFrameLength, 0)
        // A full-size frame that starts a message usually has more chunks after it (only a message
        // of exactly 65518 bytes fits one full frame), so its array gets room for the next chunk
        // too: then a 64 KiB message is never copied.
        let capacity =
            frame.count == SecureChannelLimits.maximumFrameLength && !transport.assembling
            ? 2 * SecureChannelLimits.maximumChunkLength : payloadLength
        var flag: UInt8 = 0
        let plaintextLength: Int
        var payload = [UInt8].overwritable(count: payloadLength, capacity: capacity)
        do {
            plaintextLength = try frame.withBytes { ciphertext throws(NoiseError) in
                try withUnsafeMutableBytes(of: &flag) { header throws(NoiseError) in
                    try payload.withMutableBytes { output throws(NoiseError) in
                        try transport.receive.decryptWithAd(
                            UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: ciphertext, header: header,
                            into: output)
                    }
                }
            }
        } catch {
            throw SecureChannelError(
                error.kind == .nonceExhausted ? .nonceExhausted : .decryptionFailed,
                "transport frame \(transport.receive.n) refused", underlying: error)
        }
        guard plaintextLength >= SecureChannelLimits.flagLength else {
            throw SecureChannelError(.invalidChunk, "chunk without a flag byte")
        }
        guard flag == SecureChannelLimits.flagLast || flag == SecureChannelLimits.flagMore else {
            throw SecureChannelError(.invalidChunk, "chunk flag \(flag)")
        }
        if !transport.assembling {
            if flag == SecureChannelLimits.flagLast { return payload }
            guard payload.count <= limit else {
                throw SecureChannelError(.messageTooLarge, "chunked message over \(limit) bytes")
            }
            transport.pending = payload
            transport.assembling = true
            return nil
        }
        guard transport.pending.count + payload.count <= limit else {
            throw SecureChannelError(.messageTooLarge, "chunked message over \(limit) bytes")
        }
        transport.pending += payload
        guard flag == SecureChannelLimits.flagLast else { return nil }
        let message = transport.pending
        transport.pending = []
        transport.assembling = false
        return message
    }

    /// Encrypts `message` as frames. Each frame's flag byte and chunk are encrypted straight from
    /// where they are into the frame: nothing is copied first.
    private static func seal(_ message: UnsafeRawBufferPointer, with transport: inout Transport)
        throws(SecureChannelError)
        -> [[UInt8]]
    {
        let chunk = SecureChannelLimits.maximumChunkLength
        let count = max(1, (message.count + chunk - 1) / chunk)
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for index in 0..<count {
            let start = index * chunk
            let end = min(start + chunk, message.count)
            frames.append(
                try sealChunk(
                    UnsafeRawBufferPointer(rebasing: message[start..<end]), last: index == count - 1, with: &transport))
        }
        return frames
    }

    /// One frame: the flag byte and `chunk`, encrypted straight into it.
    private static func sealChunk(_ chunk: UnsafeRawBufferPointer, last: Bool, with transport: inout Transport)
        throws(SecureChannelError) -> [UInt8]
    {
        var flag = last ? SecureChannelLimits.flagLast : SecureChannelLimits.flagMore
        let frameLength = SecureChannelLimits.flagLength + chunk.count + SecureChannelLimits.tagLength
        var frame = [UInt8].overwritable(count: frameLength)
        do {
            _ = try withUnsafeBytes(of: &flag) { header throws(NoiseError) in
                try frame.withMutableBytes { output throws(NoiseError) in
                    try transport.send.encryptWithAd(
                        UnsafeRawBufferPointer(start: nil, count: 0), header: header, plaintext: chunk, into: output)
                }
            }
        } catch {
            throw SecureChannelError(
                error.kind == .nonceExhausted ? .nonceExhausted : .noise, "cannot encrypt", underlying: error)
        }
        return frame
    }

    // MARK: - Failure

    private func guardNotFailed() throws(SecureChannelError) {
        if case .failed(let error) = state { throw error }
    }

    private mutating func fail(_ error: SecureChannelError) throws(SecureChannelError) -> Never {
        state = .failed(error)
        throw error
    }
}
