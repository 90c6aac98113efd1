/// herdr's rule for session names (interop-facts §1).
public enum HerdrSessionName {
    /// The longest name herdr accepts, in UTF-8 bytes.
    public static let maxBytes = 64

    /// True when herdr accepts `name`: 1–64 bytes of `[A-Za-z0-9._-]`, and not `.` or `..`.
    ///
    /// A valid name needs no quoting in any shell, which is why the attach command can use it bare.
    public static func isValid(_ name: String) -> Bool {
        let bytes = name.utf8
        guard (1...maxBytes).contains(bytes.count), name != ".", name != ".." else { return false }
        return bytes.allSatisfy(isAllowed)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }
}
