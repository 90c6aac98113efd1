/// What the decoder reads at each frame header: `WebSocketDecoder` itself (its handler may change
/// the limit and the streaming mid-call), or fixed values.
protocol WebSocketDecoderSettings {
    var role: WebSocketRole { get }
    var maximumMessageSize: Int { get }
    var streaming: WebSocketDecoder.Streaming { get }
}

extension WebSocketDecoder: WebSocketDecoderSettings {}

extension WebSocketDecoder.Streaming {
    /// Whether binary messages are streamed.
    var streamsBinary: Bool {
        switch self {
        case .none: false
        case .binary, .binaryAndText: true
        }
    }

    /// Whether text messages are streamed.
    var streamsText: Bool {
        switch self {
        case .none, .binary: false
        case .binaryAndText: true
        }
    }
}

/// The one RFC 6455 decoder, under both read-outs (`WebSocketDecoder`'s events and
/// `WebSocketMessageReader`'s messages): it reads frame headers (`WebSocketFrameHeader`), applies
/// the protocol's rules and limits, unmasks, assembles control frames and data messages that are
/// not streamed, checks text, and follows the data message in progress.
///
/// A struct, so the decoding loop touches its state with no run-time exclusivity checks (a
/// class's stored properties pay one on every access).
struct WebSocketDecoderCore: Sendable {
    /// A header split across calls (at most 14 bytes).
    private var partialHeader: [UInt8] = []
    /// The frame whose header has been read and whose payload is still arriving (or, when the
    /// handler stopped at its last payload, not yet finished).
    private var frame: Frame?
    /// The opcode (text or binary) of the data message in progress, nil between messages.
    private var messageOpcode: WebSocketOpcode?
    /// Payload bytes of the data message in progress (all its frames so far).
    private var messageSize = 0
    /// Whether the data message in progress is streamed (decided at its first frame).
    private var messageStreamed = false
    /// The streamed text message in progress, checked as it passes.
    private var textValidator = UTF8StreamValidator()
    /// The assembled data message so far, unmasked.
    private var message: [UInt8] = []
    /// The current control frame's payload so far, unmasked; kept apart so a ping may arrive
    /// between fragments.
    private var control: [UInt8] = []
    /// The first error; every later call throws it.
    private(set) var failure: WebSocketProtocolError?

    private struct Frame {
        var opcode: WebSocketOpcode
        var fin: Bool
        var maskKey: UInt32?
        /// Payload bytes still to come.
        var remaining: Int
        /// Payload bytes delivered so far, modulo 4: where the mask key resumes.
        var phase: Int
        /// Payload handed out as `dataPayload`, not assembled.
        var streamed: Bool
    }

    /// Bytes held for an incomplete header, assembled message or control frame.
    var bufferedByteCount: Int { partialHeader.count + message.count + control.count }

    /// Decodes `bytes` in place (streamed payload is unmasked where it lies), calling `handler`
    /// for each event in order, and returns how many bytes it used: all of them, unless `handler`
    /// returned false to stop; the next call resumes there (with the bytes not used, even none,
    /// since a frame's end may still be owed). After a throw, every later call throws the same
    /// error.
    mutating func decode(
        _ bytes: UnsafeMutableRawBufferPointer, _ settings: some WebSocketDecoderSettings,
        _ handler: (WebSocketDecoder.Event) -> Bool
    ) throws(WebSocketProtocolError) -> Int {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            return try run(bytes, settings, handler)
        } catch {
            failure = error
            message = []
            control = []
            partialHeader = []
            throw error
        }
    }

    private mutating func run(
        _ bytes: UnsafeMutableRawBufferPointer, _ settings: some WebSocketDecoderSettings,
        _ handler: (WebSocketDecoder.Event) -> Bool
    ) throws(WebSocketProtocolError) -> Int {
        var index = 0
        while true {
            if frame == nil {
                guard index < bytes.count else { return index }
                let rest = UnsafeRawBufferPointer(rebasing: bytes[index...])
                guard let consumed = try readHeader(rest, settings) else { return bytes.count }
                index += consumed
                if let started = frame, started.streamed {
                    let start = WebSocketDecoder.Event.dataFrameStart(
                        opcode: started.opcode, fin: started.fin, length: started.remaining)
                    guard handler(start) else { return index }
                }
            }
            guard var current = frame else { return index }
            if current.remaining > 0 {
                guard index < bytes.count else { return index }
                let take = min(current.remaining, bytes.count - index)
                let chunk = UnsafeMutableRawBufferPointer(rebasing: bytes[index..<(index + take)])
                index += take
                if current.streamed {
                    if let key = current.maskKey { WebSocketMask.apply(key: key, phase: current.phase, to: chunk) }
                } else if current.opcode.isControl {
                    Self.appendPayload(UnsafeRawBufferPointer(chunk), of: current, to: &control)
                } else {
                    Self.appendPayload(UnsafeRawBufferPointer(chunk), of: current, to: &message)
                }
                current.remaining -= take
                current.phase = (current.phase + take) & 3
                // Kept until finished, even with nothing left: a handler that stops at the last
                // payload resumes at the frame's end.
                frame = current
                if current.streamed {
                    if case .text? = messageOpcode {
                        guard textValidator.feed(UnsafeRawBufferPointer(chunk)) else { throw Self.invalidText }
                    }
                    guard handler(.dataPayload(UnsafeRawBufferPointer(chunk))) else { return index }
                }
                if current.remaining > 0 { return index }
            }
            frame = nil
            guard try finish(current, handler) else { return index }
        }
    }

    /// Reads a header from `partialHeader` plus `bytes`; returns how many bytes of `bytes` it
    /// used, or nil when even all of them do not complete it (they are kept). Every check that
    /// the header alone allows happens here, before any payload is kept.
    private mutating func readHeader(
        _ bytes: UnsafeRawBufferPointer, _ settings: some WebSocketDecoderSettings
    ) throws(WebSocketProtocolError) -> Int? {
        let fromPartial = partialHeader.count
        if fromPartial == 0 {
            guard let header = try parse(bytes, settings) else {
                partialHeader.append(contentsOf: bytes)
                return nil
            }
            start(header, settings)
            return header.size
        }
        // Headers are at most 14 bytes: complete the partial one from the front of `bytes`.
        let added = min(14 - fromPartial, bytes.count)
        partialHeader.append(contentsOf: bytes[0..<added])
        let joined = partialHeader
        let parsed = joined.withUnsafeBytes { all in
            Result { () throws(WebSocketProtocolError) -> WebSocketFrameHeader? in try parse(all, settings) }
        }
        guard let header = try parsed.get() else { return nil }
        partialHeader = []
        start(header, settings)
        return header.size - fromPartial
    }

    @inline(__always)
    private func parse(
        _ bytes: UnsafeRawBufferPointer, _ settings: some WebSocketDecoderSettings
    ) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        try WebSocketFrameHeader.parse(
            bytes, role: settings.role, openMessage: messageOpcode, messageSoFar: messageSize,
            maximumMessageSize: settings.maximumMessageSize)
    }

    @inline(__always)
    private mutating func start(_ header: WebSocketFrameHeader, _ settings: some WebSocketDecoderSettings) {
        // Enums are matched rather than compared with == here: their == is generic (a call per
        // comparison), and this runs for every frame.
        switch header.opcode {
        case .binary: startMessage(.binary, streamed: settings.streaming.streamsBinary)
        case .text: startMessage(.text, streamed: settings.streaming.streamsText)
        default: break
        }
        if !header.opcode.isControl { messageSize += header.length }
        frame = Frame(
            opcode: header.opcode, fin: header.fin, maskKey: header.maskKey, remaining: header.length, phase: 0,
            streamed: !header.opcode.isControl && messageStreamed)
    }

    private mutating func startMessage(_ opcode: WebSocketOpcode, streamed: Bool) {
        messageOpcode = opcode
        messageSize = 0
        messageStreamed = streamed
        textValidator = UTF8StreamValidator()
    }

    /// Copies `bytes`, the next payload bytes of `frame` (no more than it has left), to `out` and
    /// unmasks the copy there.
    private static func appendPayload(_ bytes: UnsafeRawBufferPointer, of frame: Frame, to out: inout [UInt8]) {
        let start = out.count
        let needed = start + bytes.count
        if needed > out.capacity {
            // Room up to the frame's end, but never more than four times what has arrived: a
            // header alone must not make us allocate the length it announces.
            out.reserveCapacity(min(start + frame.remaining, max(needed, 4 * out.capacity)))
        }
        out.append(contentsOf: bytes)
        if let key = frame.maskKey {
            out.withUnsafeMutableBytes {
                WebSocketMask.apply(
                    key: key, phase: frame.phase, to: UnsafeMutableRawBufferPointer(rebasing: $0[start...]))
            }
        }
    }

    /// A frame's payload is complete: end a streamed frame, or deliver an assembled message or a
    /// control frame. Returns what the handler returned (true when it was not called).
    private mutating func finish(
        _ frame: Frame, _ handler: (WebSocketDecoder.Event) -> Bool
    ) throws(WebSocketProtocolError) -> Bool {
        if frame.streamed {
            if frame.fin {
                // A text message must not end inside a character.
                if case .text? = messageOpcode, !textValidator.isAtCharacterBoundary { throw Self.invalidText }
                messageOpcode = nil
            }
            return handler(.dataFrameEnd)
        }
        switch frame.opcode {
        case .ping:
            let payload = control
            control = []
            return handler(.message(.ping(payload)))
        case .pong:
            let payload = control
            control = []
            return handler(.message(.pong(payload)))
        case .close:
            let payload = control
            control = []
            return handler(.message(try Self.closeMessage(payload)))
        case .text, .binary, .continuation:
            guard frame.fin, let opcode = messageOpcode else { return true }
            messageOpcode = nil
            let payload = message
            message = []
            guard case .text = opcode else { return handler(.message(.binary(payload))) }
            // The whole message is validated: a character may straddle fragments.
            guard let text = String(validating: payload, as: UTF8.self) else { throw Self.invalidText }
            return handler(.message(.text(text)))
        }
    }

    /// §5.5.1: an empty payload, or a 2-byte code and a UTF-8 reason.
    private static func closeMessage(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
        guard !payload.isEmpty else { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw .protocolError("close payload of one byte") }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard WebSocketCloseCode.isValidOnWire(code) else { throw .protocolError("invalid close code \(code)") }
        guard let reason = String(validating: payload[2...], as: UTF8.self) else {
            throw WebSocketProtocolError(
                closeCode: WebSocketCloseCode.invalidPayload, reason: "close reason is not valid UTF-8")
        }
        return .close(code: code, reason: reason)
    }

    private static let invalidText = WebSocketProtocolError(
        closeCode: WebSocketCloseCode.invalidPayload, reason: "text message is not valid UTF-8")
}
