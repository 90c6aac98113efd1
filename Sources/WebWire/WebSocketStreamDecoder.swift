/// What `WebSocketStreamDecoder` finds in the bytes it is given.
public enum WebSocketStreamEvent {
    /// A frame of a streamed data message begins: `opcode` is `.binary`, `.text` or `.continuation`,
    /// `length` its payload size. Its payload follows in `dataPayload` events, then `dataFrameEnd`.
    case dataFrameStart(opcode: WebSocketOpcode, fin: Bool, length: Int)
    /// Unmasked payload bytes of the current streamed frame; valid only during the call.
    case dataPayload(UnsafeRawBufferPointer)
    case dataFrameEnd
    /// A complete assembled text message or control frame, as `WebSocketFrameDecoder` gives them.
    case message(WebSocketMessage)
}

/// A cut-through RFC 6455 decoder for relays: binary payload (and, with `streamsText`, text
/// payload) is never assembled. It is unmasked in place in the caller's buffer and handed out
/// chunk by chunk as it arrives, so a relay can forward a frame while it is still arriving, with
/// no copy and no per-message allocation. Streamed text is checked for UTF-8 as it passes (a chunk
/// holding an invalid byte is not handed out). Control frames, and text messages while
/// `streamsText` is off, are assembled (they are small: bounded by 125 bytes and
/// `maximumMessageSize`) and checked exactly as `WebSocketFrameDecoder` checks them, with the
/// same header rules (`WebSocketFrameHeader`).
///
/// A class, owned by one thread: the handler may change `maximumMessageSize` and `streamsText` (a
/// relay raises the one and turns on the other when admission succeeds); a change applies from
/// the next message's first frame header, even within the same call.
public final class WebSocketStreamDecoder {
    public let role: WebSocketRole
    /// Largest data message (all fragments), checked against each frame header; may change any time.
    public var maximumMessageSize: Int
    /// Whether text messages are streamed like binary ones (`dataFrameStart`…) instead of
    /// assembled into `.message(.text)`.
    public var streamsText = false

    /// A header split across reads (at most 14 bytes).
    private var partialHeader: [UInt8] = []
    private var frame: Frame?
    /// The opcode of the data message in progress, nil between messages.
    private var messageOpcode: WebSocketOpcode?
    /// Payload bytes of the data message in progress (all its frames so far).
    private var messageSize = 0
    /// Whether the data message in progress is streamed (decided at its first frame).
    private var messageStreamed = false
    /// The streamed text message in progress, checked as it passes.
    private var textValidator = UTF8StreamValidator()
    /// A text message or control frame being assembled.
    private var text: [UInt8] = []
    private var control: [UInt8] = []
    private var failure: WebSocketProtocolError?

    private struct Frame {
        var opcode: WebSocketOpcode
        var fin: Bool
        var maskKey: UInt32?
        var remaining: Int
        var phase: Int
        /// Payload handed out as `dataPayload`, not assembled.
        var streamed: Bool
    }

    public init(role: WebSocketRole, maximumMessageSize: Int) {
        precondition(maximumMessageSize >= 0, "maximumMessageSize must not be negative")
        self.role = role
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes held for an incomplete text message, control frame or header.
    public var bufferedByteCount: Int { partialHeader.count + text.count + control.count }

    /// True while a streamed frame's payload is still arriving.
    public var isInsideStreamedFrame: Bool { frame?.streamed == true }

    /// Decodes `bytes` in place (payload is unmasked where it lies), calling `handler` for each
    /// event in order. `handler` returns false to stop: the rest of `bytes` is dropped and the
    /// decoder must not be used again (the connection is closing). After a throw, every later
    /// call throws the same error.
    public func decode(
        _ bytes: UnsafeMutableRawBufferPointer, _ handler: (WebSocketStreamEvent) -> Bool
    ) throws(WebSocketProtocolError) {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            try run(bytes, handler)
        } catch {
            failure = error
            text = []
            control = []
            partialHeader = []
            throw error
        }
    }

    private func run(
        _ bytes: UnsafeMutableRawBufferPointer, _ handler: (WebSocketStreamEvent) -> Bool
    ) throws(WebSocketProtocolError) {
        var index = 0
        while true {
            if frame == nil {
                guard index < bytes.count else { return }
                guard let consumed = try readHeader(UnsafeRawBufferPointer(rebasing: bytes[index...])) else { return }
                index += consumed
                guard var current = frame else { continue }
                if current.streamed {
                    guard
                        handler(.dataFrameStart(opcode: current.opcode, fin: current.fin, length: current.remaining))
                    else { return }
                }
                if current.remaining == 0 {
                    frame = nil
                    guard try finish(current, handler) else { return }
                    continue
                }
                current.phase = 0
                frame = current
                continue
            }
            guard var current = frame, index < bytes.count else { return }
            let take = min(current.remaining, bytes.count - index)
            let chunk = UnsafeMutableRawBufferPointer(rebasing: bytes[index..<(index + take)])
            if let key = current.maskKey { WebSocketMask.apply(key: key, phase: current.phase, to: chunk) }
            index += take
            current.remaining -= take
            current.phase = (current.phase + take) & 3
            frame = current.remaining == 0 ? nil : current
            if current.streamed {
                if messageOpcode == .text {
                    guard textValidator.feed(UnsafeRawBufferPointer(chunk)) else { throw Self.invalidText }
                }
                guard handler(.dataPayload(UnsafeRawBufferPointer(chunk))) else { return }
            } else if current.opcode.isControl {
                control.append(contentsOf: chunk)
            } else {
                text.append(contentsOf: chunk)
            }
            if current.remaining == 0 {
                guard try finish(current, handler) else { return }
            }
        }
    }

    /// Reads a header from `partialHeader` plus `bytes`; returns how many bytes of `bytes` it
    /// used, or nil when even all of them do not complete it (they are kept).
    private func readHeader(_ bytes: UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> Int? {
        let header: WebSocketFrameHeader?
        let fromPartial = partialHeader.count
        if fromPartial == 0 {
            header = try parse(bytes)
            guard let header else {
                partialHeader.append(contentsOf: bytes)
                return nil
            }
            start(header)
            return header.size
        }
        // Headers are at most 14 bytes: complete the partial one from the front of `bytes`.
        let added = min(14 - fromPartial, bytes.count)
        partialHeader.append(contentsOf: bytes[0..<added])
        let joined = partialHeader
        header = try joined.withUnsafeBytes { all in
            Result { () throws(WebSocketProtocolError) -> WebSocketFrameHeader? in try parse(all) }
        }.get()
        guard let header else { return nil }
        partialHeader = []
        start(header)
        return header.size - fromPartial
    }

    private func parse(_ bytes: UnsafeRawBufferPointer) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        try WebSocketFrameHeader.parse(
            bytes, role: role, openMessage: messageOpcode, messageSoFar: messageSize,
            maximumMessageSize: maximumMessageSize)
    }

    private func start(_ header: WebSocketFrameHeader) {
        if header.opcode == .text || header.opcode == .binary {
            messageOpcode = header.opcode
            messageSize = 0
            messageStreamed = header.opcode == .binary || streamsText
            textValidator = UTF8StreamValidator()
        }
        if !header.opcode.isControl { messageSize += header.length }
        let streamed = !header.opcode.isControl && messageStreamed
        frame = Frame(
            opcode: header.opcode, fin: header.fin, maskKey: header.maskKey, remaining: header.length, phase: 0,
            streamed: streamed)
    }

    /// A frame's payload is complete: end a streamed frame, or deliver a text message or control
    /// frame.
    private func finish(
        _ frame: Frame, _ handler: (WebSocketStreamEvent) -> Bool
    ) throws(WebSocketProtocolError) -> Bool {
        if frame.streamed {
            if frame.fin {
                // A text message must not end inside a character.
                if messageOpcode == .text && !textValidator.isAtCharacterBoundary { throw Self.invalidText }
                messageOpcode = nil
            }
            return handler(.dataFrameEnd)
        }
        switch frame.opcode {
        case .ping:
            defer { control = [] }
            return handler(.message(.ping(control)))
        case .pong:
            defer { control = [] }
            return handler(.message(.pong(control)))
        case .close:
            let payload = control
            control = []
            return handler(.message(try WebSocketFrameDecoder.closeMessage(payload)))
        case .text, .binary, .continuation:
            guard frame.fin else { return true }
            messageOpcode = nil
            let payload = text
            text = []
            // The whole message is validated: a character may straddle fragments.
            guard let string = String(validating: payload, as: UTF8.self) else { throw Self.invalidText }
            return handler(.message(.text(string)))
        }
    }

    private static let invalidText = WebSocketProtocolError(
        closeCode: WebSocketCloseCode.invalidPayload, reason: "text message is not valid UTF-8")
}
