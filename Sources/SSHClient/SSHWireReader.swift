/// Just enough of the SSH wire format (RFC 4251 §5) to name a key blob's algorithm.
enum SSHWireReader {
    /// The first `string` field of `blob`, or nil if it is malformed.
    static func firstString(of blob: [UInt8]) -> String? {
        guard blob.count >= 4 else { return nil }
        let length = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
        guard length > 0, length <= 64, blob.count >= 4 + length else { return nil }
        return String(decoding: blob[4..<(4 + length)], as: UTF8.self)
    }
}
