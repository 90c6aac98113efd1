/// Just enough of the SSH wire format (RFC 4251 §5) to name a key blob's algorithm and read the
/// head of a key file: every read is bounded by what is left and fails with nil.
struct SSHWireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// The next `count` bytes, or nil when fewer are left.
    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, count <= bytes.count - offset else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// The next `string` field's bytes, or nil when it is malformed.
    mutating func readString() -> [UInt8]? {
        guard let header = take(4) else { return nil }
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        return take(length)
    }

    /// The first `string` field of `blob` (1-64 bytes), or nil if it is malformed.
    static func firstString(of blob: [UInt8]) -> String? {
        var reader = SSHWireReader(blob)
        guard let name = reader.readString(), !name.isEmpty, name.count <= 64 else { return nil }
        return String(decoding: name, as: UTF8.self)
    }
}
