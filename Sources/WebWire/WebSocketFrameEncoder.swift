/// Builds RFC 6455 frames (§5.2) with the minimal length encoding. A client passes a fresh random
/// `maskKey` for every frame; a server passes nil.
public enum WebSocketFrameEncoder {
    /// Longest payload of a control frame (RFC 6455 §5.5).
    public static let maximumControlPayload = 125

    /// Header bytes for a payload of `payloadCount` bytes: 2, plus 2 or 8 for the length, plus 4 for a mask key.
    public static func headerLength(payloadCount: Int, masked: Bool) -> Int {
        let lengthBytes = payloadCount < 126 ? 0 : payloadCount <= 0xFFFF ? 2 : 8
        return 2 + lengthBytes + (masked ? 4 : 0)
    }

    /// Appends one frame to `out`. Control frames must be final and carry at most 125 bytes.
    public static func append(
        opcode: WebSocketOpcode, payload: UnsafeRawBufferPointer, fin: Bool = true, maskKey: UInt32?,
        to out: inout [UInt8]
    ) {
        let count = payload.count
        precondition(
            !opcode.isControl || (fin && count <= maximumControlPayload),
            "control frames are final and carry at most 125 bytes")
        let needed = out.count + headerLength(payloadCount: count, masked: maskKey != nil) + count
        // One allocation for header and payload, still growing geometrically when frames pile up in `out`.
        if needed > out.capacity { out.reserveCapacity(max(needed, 2 * out.capacity)) }
        out.append((fin ? 0x80 : 0) | opcode.rawValue)
        let maskBit: UInt8 = maskKey == nil ? 0 : 0x80
        if count < 126 {
            out.append(maskBit | UInt8(count))
        } else if count <= 0xFFFF {
            out.append(maskBit | 126)
            out.append(UInt8(truncatingIfNeeded: count >> 8))
            out.append(UInt8(truncatingIfNeeded: count))
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift)))
            }
        }
        if let maskKey {
            for shift in stride(from: 24, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: maskKey >> UInt32(shift)))
            }
        }
        let start = out.count
        out.append(contentsOf: payload)
        if let maskKey, count > 0 {
            out.withUnsafeMutableBytes { bytes in
                WebSocketMask.apply(
                    key: maskKey, phase: 0, to: UnsafeMutableRawBufferPointer(rebasing: bytes[start...]))
            }
        }
    }

    /// One frame carrying `payload`.
    public static func frame(_ opcode: WebSocketOpcode, _ payload: [UInt8], fin: Bool = true, maskKey: UInt32?)
        -> [UInt8]
    {
        var out: [UInt8] = []
        payload.withUnsafeBytes { append(opcode: opcode, payload: $0, fin: fin, maskKey: maskKey, to: &out) }
        return out
    }

    /// A single-frame text message.
    public static func text(_ text: String, maskKey: UInt32?) -> [UInt8] {
        var text = text
        var out: [UInt8] = []
        text.withUTF8 { append(opcode: .text, payload: UnsafeRawBufferPointer($0), maskKey: maskKey, to: &out) }
        return out
    }

    /// A close frame with `code` and as much of `reason` as fits in 123 bytes, cut on a character
    /// boundary so the peer still sees valid UTF-8.
    public static func closeFrame(code: UInt16, reason: String, maskKey: UInt32?) -> [UInt8] {
        var reasonBytes = Array(reason.utf8)
        if reasonBytes.count > maximumControlPayload - 2 {
            var end = maximumControlPayload - 2
            // Back up over continuation bytes (10xxxxxx) to the start of the character that straddles the cut.
            while end > 0 && reasonBytes[end] & 0xC0 == 0x80 { end -= 1 }
            reasonBytes.removeSubrange(end...)
        }
        return frame(.close, [UInt8(code >> 8), UInt8(truncatingIfNeeded: code)] + reasonBytes, maskKey: maskKey)
    }
}
