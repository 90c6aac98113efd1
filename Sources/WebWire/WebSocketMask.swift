/// The XOR masking of RFC 6455 §5.3, a word (8 bytes) at a time, since every byte a client sends
/// or a server receives goes through it.
enum WebSocketMask {
    /// XORs `bytes` in place with `key` (the 4 key bytes in wire order, as a big-endian number),
    /// starting `phase` bytes into the key: the payload offset of `bytes[0]` modulo 4.
    @inline(__always)
    static func apply(key: UInt32, phase: Int, to bytes: UnsafeMutableRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        let shift = UInt32(phase & 3) * 8
        let rotated = shift == 0 ? key : key << shift | key >> (32 - shift)
        // The key repeated twice, laid out in memory in wire order whatever the host's endianness.
        let word = (UInt64(rotated) << 32 | UInt64(rotated)).bigEndian
        var index = 0
        while index + 32 <= count {
            for offset in stride(from: index, to: index + 32, by: 8) {
                base.storeBytes(
                    of: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ word, toByteOffset: offset,
                    as: UInt64.self)
            }
            index += 32
        }
        while index + 8 <= count {
            base.storeBytes(
                of: base.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ word, toByteOffset: index,
                as: UInt64.self)
            index += 8
        }
        // Whole words are a multiple of 4 bytes, so the tail starts at key byte `phase` again.
        var tailKey = rotated
        while index < count {
            let byte = base.load(fromByteOffset: index, as: UInt8.self)
            base.storeBytes(of: byte ^ UInt8(truncatingIfNeeded: tailKey >> 24), toByteOffset: index, as: UInt8.self)
            tailKey = tailKey << 8 | tailKey >> 24
            index += 1
        }
    }
}
