/// An incremental RFC 6455 frame decoder: bytes go in with `append(_:)`, whole messages come out
/// of `next()`, fragments joined and control frames (which may arrive between fragments) returned
/// on their own. It does no I/O and never answers pings or closes itself.
///
/// Payload bytes are unmasked straight into the message being assembled as they arrive, so a
/// large frame is not held twice, and a frame whose header announces more than
/// `maximumMessageSize` fails before any of its payload is kept.
public struct WebSocketFrameDecoder: Sendable {
    /// Which end we are; it decides which masking the peer's frames must have.
    public let role: WebSocketRole
    /// Largest data message (all its fragments together) accepted, checked against each frame's
    /// header. It may change at any time and applies from the next frame header on.
    public var maximumMessageSize: Int

    /// Once the buffer is drained, a capacity beyond this is given back rather than kept for reuse.
    private static let retainedBufferCapacity = 64 * 1024

    /// Bytes appended and not yet consumed: at most a partial header while a frame's payload is
    /// streaming, or the queue of frames the caller has not asked for yet.
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// The frame whose header has been read and whose payload is still arriving.
    private var frame: FrameInProgress?
    /// The opcode (text or binary) of the data message being assembled, nil between messages.
    private var messageOpcode: WebSocketOpcode?
    /// The data message's payload so far, unmasked.
    private var message: [UInt8] = []
    /// The current control frame's payload so far, unmasked; kept apart so a ping may arrive between fragments.
    private var control: [UInt8] = []
    /// The first error; the decoder keeps throwing it.
    private var failure: WebSocketProtocolError?

    private struct FrameInProgress {
        var opcode: WebSocketOpcode
        var fin: Bool
        var maskKey: UInt32?
        /// Payload bytes still to come.
        var remaining: Int
        /// Payload bytes delivered so far, modulo 4: where the mask key resumes.
        var phase: Int
    }

    public init(role: WebSocketRole, maximumMessageSize: Int) {
        precondition(maximumMessageSize >= 0, "maximumMessageSize must not be negative")
        self.role = role
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes held awaiting a complete message: undecoded input plus the partial message and control frame.
    public var bufferedByteCount: Int { buffer.count - readIndex + message.count + control.count }

    /// Adds bytes received from the peer. Nothing is checked until `next()`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        var rest = bytes
        if readIndex == buffer.count {
            resetBuffer()
            // Nothing queued ahead of these bytes: payload of the frame in progress goes straight
            // to its message, skipping the buffer.
            if let frame, frame.remaining > 0 {
                let take = min(frame.remaining, rest.count)
                deliver(UnsafeRawBufferPointer(rebasing: rest[..<take]))
                rest = UnsafeRawBufferPointer(rebasing: rest[take...])
            }
        } else if readIndex >= buffer.count - readIndex {
            // At least half the buffer is consumed: moving the rest down is paid for by the bytes consumed.
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: rest)
    }

    /// Adds bytes received from the peer.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete message, or nil when more bytes are needed. After a throw the connection
    /// is unusable and every later call throws the same error.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketMessage? {
        if let failure { throw failure }
        do throws(WebSocketProtocolError) {
            return try decodeNext()
        } catch {
            failure = error
            message = []
            control = []
            buffer = []
            readIndex = 0
            throw error
        }
    }

    private mutating func decodeNext() throws(WebSocketProtocolError) -> WebSocketMessage? {
        while true {
            guard let current = frame else {
                guard try readHeader() else {
                    compactBuffer()
                    return nil
                }
                continue
            }
            var remaining = current.remaining
            let available = buffer.count - readIndex
            if remaining > 0 && available > 0 {
                let take = min(remaining, available)
                let start = readIndex
                // A second reference, so that `deliver` may mutate self while the bytes are borrowed.
                let queued = buffer
                queued.withUnsafeBytes { deliver(UnsafeRawBufferPointer(rebasing: $0[start..<(start + take)])) }
                readIndex += take
                remaining -= take
            }
            if remaining > 0 {
                compactBuffer()
                return nil
            }
            frame = nil
            if let message = try complete(current) { return message }
        }
    }

    /// Reads one frame header from the buffer and checks it; false when it is not all there yet.
    /// Every check that the header alone allows happens here, before any payload is kept.
    private mutating func readHeader() throws(WebSocketProtocolError) -> Bool {
        let start = readIndex
        let parsed = buffer.withUnsafeBytes { all in
            Result { () throws(WebSocketProtocolError) -> WebSocketFrameHeader? in
                try WebSocketFrameHeader.parse(
                    UnsafeRawBufferPointer(rebasing: all[start...]), role: role, openMessage: messageOpcode,
                    messageSoFar: message.count, maximumMessageSize: maximumMessageSize)
            }
        }
        guard let header = try parsed.get() else { return false }
        readIndex += header.size
        if header.opcode == .text || header.opcode == .binary { messageOpcode = header.opcode }
        frame = FrameInProgress(
            opcode: header.opcode, fin: header.fin, maskKey: header.maskKey, remaining: header.length, phase: 0)
        return true
    }

    /// Unmasks `bytes`, the next payload bytes of the frame in progress (no more than it has left),
    /// into the message or control payload.
    private mutating func deliver(_ bytes: UnsafeRawBufferPointer) {
        guard var current = frame else { return }
        if current.opcode.isControl {
            Self.appendPayload(bytes, of: current, to: &control)
        } else {
            Self.appendPayload(bytes, of: current, to: &message)
        }
        current.remaining -= bytes.count
        current.phase = (current.phase + bytes.count) & 3
        frame = current
    }

    private static func appendPayload(_ bytes: UnsafeRawBufferPointer, of frame: FrameInProgress, to out: inout [UInt8])
    {
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

    /// Handles a frame whose payload has fully arrived: a message when it completes one.
    private mutating func complete(_ frame: FrameInProgress) throws(WebSocketProtocolError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping:
            defer { control = [] }
            return .ping(control)
        case .pong:
            defer { control = [] }
            return .pong(control)
        case .close:
            let payload = control
            control = []
            return try Self.closeMessage(payload)
        case .text, .binary, .continuation:
            guard frame.fin, let opcode = messageOpcode else { return nil }
            messageOpcode = nil
            let payload = message
            message = []
            guard opcode == .text else { return .binary(payload) }
            // The whole message is validated: a character may straddle fragments.
            guard let text = String(validating: payload, as: UTF8.self) else {
                throw WebSocketProtocolError(
                    closeCode: WebSocketCloseCode.invalidPayload, reason: "text message is not valid UTF-8")
            }
            return .text(text)
        }
    }

    /// §5.5.1: an empty payload, or a 2-byte code and a UTF-8 reason.
    static func closeMessage(_ payload: [UInt8]) throws(WebSocketProtocolError) -> WebSocketMessage {
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

    /// Drops consumed bytes when `next()` runs dry, by then only a partial header can remain.
    private mutating func compactBuffer() {
        if readIndex == buffer.count {
            resetBuffer()
        } else if readIndex > 0 {
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
    }

    private mutating func resetBuffer() {
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedBufferCapacity)
        readIndex = 0
    }
}
