import Foundation

/// Unpadded base64url (RFC 4648 §5), decoding only the canonical spelling. Pairing ids and keys
/// in both pairing codes use it; `herdr-pair` (SSHPairingHost) writes them with the same code.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// The bytes, or nil unless `text` is exactly what `encode` would produce for them.
    public static func decodeCanonical(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.count % 4 != 1,
            text.utf8.allSatisfy({ byte in
                (0x41...0x5a).contains(byte) || (0x61...0x7a).contains(byte) || (0x30...0x39).contains(byte)
                    || byte == 0x2d || byte == 0x5f
            })
        else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        guard let data = Data(base64Encoded: standard) else { return nil }
        let bytes = [UInt8](data)
        return encode(bytes) == text ? bytes : nil
    }
}
