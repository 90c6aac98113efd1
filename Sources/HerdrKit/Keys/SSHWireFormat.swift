/// Writing SSH wire encodings (RFC 4251 §5): `uint32` big-endian and `string` (uint32 length, then bytes).
struct SSHWireWriter {
    private(set) var bytes: [UInt8] = []

    mutating func writeUInt32(_ value: UInt32) {
        bytes += [
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value),
        ]
    }

    mutating func writeString(_ value: [UInt8]) {
        writeUInt32(UInt32(value.count))
        bytes += value
    }

    mutating func writeString(_ value: String) {
        writeString(Array(value.utf8))
    }

    mutating func writeRaw(_ value: [UInt8]) {
        bytes += value
    }
}

/// Reading SSH wire encodings with bounds checks: short or lying input throws, it never traps.
struct SSHWireReader {
    private let bytes: [UInt8]
    private(set) var offset: Int
    /// Names the thing being read in error messages ("public key blob", "private key").
    private let context: String

    init(_ bytes: [UInt8], context: String) {
        self.bytes = bytes
        self.offset = 0
        self.context = context
    }

    var isAtEnd: Bool { offset == bytes.count }
    var remaining: Int { bytes.count - offset }

    mutating func readUInt32() throws(SSHKeyError) -> UInt32 {
        let raw = try readRaw(4, what: "a uint32")
        return raw.reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func readString() throws(SSHKeyError) -> [UInt8] {
        let length = try readUInt32()
        // The length is compared before any arithmetic, so a huge value cannot overflow or allocate.
        guard length <= UInt32(remaining) else {
            throw SSHKeyError(.truncated, "The \(context) ends inside a string of \(length) bytes")
        }
        return try readRaw(Int(length), what: "a string")
    }

    /// A string that must be printable ASCII, as SSH algorithm and cipher names are.
    mutating func readName() throws(SSHKeyError) -> String {
        let raw = try readString()
        // RFC 4251 §6: a name is 1 to 64 printable US-ASCII characters. An empty one would give a
        // key whose `type base64` line starts with a blank and no longer parses.
        guard !raw.isEmpty, raw.allSatisfy({ (0x21...0x7E).contains($0) }), raw.count <= 64 else {
            throw SSHKeyError(.malformed, "The \(context) holds a name that is empty or not printable ASCII")
        }
        return String(decoding: raw, as: UTF8.self)
    }

    mutating func readRaw(_ count: Int, what: String = "bytes") throws(SSHKeyError) -> [UInt8] {
        guard count >= 0, count <= remaining else {
            throw SSHKeyError(.truncated, "The \(context) ends before \(what)")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func readRest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    func expectEnd() throws(SSHKeyError) {
        guard isAtEnd else {
            throw SSHKeyError(.malformed, "The \(context) has \(remaining) unexpected trailing bytes")
        }
    }
}
