/// One frame header (RFC 6455 §5.2), parsed and checked by `WebSocketDecoder`'s rules: reserved
/// bits, opcodes, masking for the role, control-frame limits, fragmentation order and the message
/// size limit — all decided from the header, before any payload is kept.
struct WebSocketFrameHeader {
    var opcode: WebSocketOpcode
    var fin: Bool
    var maskKey: UInt32?
    var length: Int
    /// Bytes the header took.
    var size: Int

    /// The header at the start of `bytes`, nil when it is not all there yet.
    /// - Parameters:
    ///   - openMessage: the opcode of the fragmented data message in progress, if any.
    ///   - messageSoFar: payload bytes of that message already received.
    static func parse(
        _ bytes: UnsafeRawBufferPointer, role: WebSocketRole, openMessage: WebSocketOpcode?, messageSoFar: Int,
        maximumMessageSize: Int
    ) throws(WebSocketProtocolError) -> WebSocketFrameHeader? {
        guard bytes.count >= 2 else { return nil }
        let first = bytes[0]
        let second = bytes[1]
        // No extension is ever negotiated, so no reserved bit may be set (§5.2).
        guard first & 0x70 == 0 else { throw .protocolError("reserved bits set") }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else { throw .protocolError("unknown opcode") }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        // §5.1: a server must refuse unmasked frames, a client masked ones.
        switch (role, masked) {
        case (.server, false): throw .protocolError("unmasked frame from a client")
        case (.client, true): throw .protocolError("masked frame from a server")
        default: break
        }
        let shortLength = Int(second & 0x7F)
        if opcode.isControl {
            guard fin else { throw .protocolError("fragmented control frame") }
            guard shortLength <= WebSocketFrameEncoder.maximumControlPayload else {
                throw .protocolError("control frame too long")
            }
        } else if opcode == .continuation {
            guard openMessage != nil else { throw .protocolError("continuation without a message") }
        } else {
            guard openMessage == nil else { throw .protocolError("new message inside a fragmented one") }
        }
        let lengthBytes = shortLength == 127 ? 8 : shortLength == 126 ? 2 : 0
        let size = 2 + lengthBytes + (masked ? 4 : 0)
        guard bytes.count >= size else { return nil }
        var cursor = 2
        // Non-minimal encodings and a set top bit are tolerated; the size limit catches huge values.
        var length = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for _ in 0..<lengthBytes {
                length = length << 8 | UInt64(bytes[cursor])
                cursor += 1
            }
        }
        if !opcode.isControl {
            let room = max(0, maximumMessageSize - (opcode == .continuation ? messageSoFar : 0))
            guard length <= UInt64(room) else {
                throw WebSocketProtocolError(closeCode: WebSocketCloseCode.messageTooBig, reason: "frame too large")
            }
        }
        var maskKey: UInt32?
        if masked {
            var key: UInt32 = 0
            for _ in 0..<4 {
                key = key << 8 | UInt32(bytes[cursor])
                cursor += 1
            }
            maskKey = key
        }
        return WebSocketFrameHeader(opcode: opcode, fin: fin, maskKey: maskKey, length: Int(length), size: size)
    }
}
