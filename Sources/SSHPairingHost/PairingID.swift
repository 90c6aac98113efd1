import Foundation
import HerdrCrypto
import HerdrKit

/// The id of one pairing: 16 random bytes, written as 22 characters of unpadded base64url that never
/// start with `-` (so the id can never look like an option on a command line).
public struct PairingID: Sendable, Hashable, CustomStringConvertible {
    public static let byteCount = 16
    public static let textLength = 22

    public let bytes: [UInt8]
    /// The canonical text form used in the QR code, the forced command, the comment and the state dir.
    public let text: String

    /// A fresh random id.
    public static func random() -> PairingID {
        while true {
            let bytes = SecureRandom.bytes(byteCount)
            let text = Base64URL.encode(bytes)
            if !text.hasPrefix("-") { return PairingID(bytes: bytes, text: text) }
        }
    }

    /// The id for `bytes` (16 of them), nil when its text would start with `-`.
    public init?(bytes: [UInt8]) {
        let text = Base64URL.encode(bytes)
        guard bytes.count == Self.byteCount, !text.hasPrefix("-") else { return nil }
        self.init(bytes: bytes, text: text)
    }

    /// Parses the canonical text: exactly 22 base64url characters that decode to 16 bytes and
    /// re-encode to the same text, not starting with `-`.
    public init?(text: String) {
        guard text.utf8.count == Self.textLength, !text.hasPrefix("-"), let bytes = Base64URL.decodeCanonical(text),
            bytes.count == Self.byteCount
        else { return nil }
        self.init(bytes: bytes, text: text)
    }

    private init(bytes: [UInt8], text: String) {
        self.bytes = bytes
        self.text = text
    }

    public var description: String { text }
}
