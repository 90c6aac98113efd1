/// The canonical encoding the relay protocol signs and hashes (interop-facts §5):
/// `be32(len(domain)) ‖ domain ‖` then, for each field, `be32(len(field)) ‖ field`.
/// Length-prefixing every part makes the encoding injective, so no two field lists collide.
public enum Canonical {
    /// `canonical(domain, fields)`. Vector: `canonical("test", [0x0102, "hi"])` =
    /// `0000000474657374000000020102000000026869`.
    public static func encode(domain: String, fields: [[UInt8]]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 + domain.utf8.count + fields.reduce(0) { $0 + 4 + $1.count })
        append(Array(domain.utf8), to: &out)
        for field in fields { append(field, to: &out) }
        return out
    }

    private static func append(_ part: [UInt8], to out: inout [UInt8]) {
        precondition(part.count <= Int(UInt32.max), "canonical field longer than 2^32 - 1 bytes")
        let length = UInt32(part.count)
        out += [
            UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length),
        ]
        out += part
    }
}
