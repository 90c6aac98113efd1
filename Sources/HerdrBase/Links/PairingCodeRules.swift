import Foundation

/// The field rules both pairing codes share (interop-facts §3): the computer name, the herdr
/// session and the expiry.
public enum PairingCodeRules {
    /// The longest computer name (and the SSH code's user name), in characters.
    public static let maximumNameLength = 64
    /// The longest code accepted, in UTF-8 bytes (both kinds).
    public static let maximumCodeLength = 8192
    /// The longest a code may claim to be valid for, in seconds.
    public static let maximumLifetime: TimeInterval = 900

    /// The computer's display name (`n`): at most 64 characters.
    public static func computerName(_ text: String) throws(PairingCodeError) -> String {
        guard text.count <= maximumNameLength else {
            throw PairingCodeError(
                .invalidField, field: "n",
                "The computer name (n) is longer than \(maximumNameLength) characters")
        }
        return text
    }

    /// The herdr session to attach to (`s`): herdr's name rule.
    public static func session(_ text: String?) throws(PairingCodeError) -> String? {
        guard let text else { return nil }
        guard HerdrSessionName.isValid(text) else {
            throw PairingCodeError(
                .invalidField, field: "s", "The herdr session (s) must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)")
        }
        return text
    }

    /// The expiry (`x`): whole Unix seconds, in the future and at most 900 s after `now`.
    public static func expiry(_ text: String, now: Date) throws(PairingCodeError) -> Date {
        guard text.utf8.allSatisfy({ (0x30...0x39).contains($0) }), (1...12).contains(text.count),
            let seconds = Int64(text)
        else {
            throw PairingCodeError(.invalidField, field: "x", "The expiry (x) must be Unix seconds")
        }
        let expiry = Date(timeIntervalSince1970: TimeInterval(seconds))
        guard expiry > now else {
            throw PairingCodeError(.expired, field: "x", "The pairing code has expired; show a new one on the computer")
        }
        guard expiry.timeIntervalSince(now) <= maximumLifetime else {
            throw PairingCodeError(
                .invalidField, field: "x",
                "The pairing code claims to be valid for more than 15 minutes; it is not trusted")
        }
        return expiry
    }

    /// `raw` with only printable code points (spaces made plain), at most `limit` of them, trimmed.
    /// Also used for names shown to a person, such as the computer name from a code.
    public static func printableText(_ raw: String, limit: Int) -> String {
        var scalars = String.UnicodeScalarView()
        var count = 0
        for scalar in raw.unicodeScalars {
            guard count < limit else { break }
            switch scalar.properties.generalCategory {
            case .control, .format, .surrogate, .privateUse, .unassigned:
                continue
            case .spaceSeparator, .lineSeparator, .paragraphSeparator:
                scalars.append(" ")
            default:
                scalars.append(scalar)
            }
            count += 1
        }
        var text = Substring(String(scalars))
        while text.first == " " { text.removeFirst() }
        while text.last == " " { text.removeLast() }
        return String(text)
    }
}
