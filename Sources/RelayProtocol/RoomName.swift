import HerdrCrypto

/// A relay room's name: 64 lowercase hex digits, sent in the `x-relay-room` header.
public enum RoomName {
    /// The canonical-encoding domain of room names.
    public static let domain = "iterm2-room"
    /// Length in characters: a SHA-256 digest in hex.
    public static let length = 64

    /// The room of a pairing (interop-facts §5): lowercase hex of
    /// `SHA256(canonical("iterm2-room", [rs, utf8(pid)]))`, where `rs` is the computer's Noise
    /// static public key (the one in the QR) and `pid` the pairing id.
    public static func derive(staticPublicKey rs: [UInt8], pid: String) -> String {
        Hex.encode(SHA256.hash(Canonical.encode(domain: domain, fields: [rs, Array(pid.utf8)])))
    }

    /// True for exactly 64 lowercase hex digits, what the relay accepts (else HTTP 400 `bad room`).
    public static func isValid(_ name: String) -> Bool {
        name.utf8.count == length
            && name.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
