import Foundation

/// The field rules both pairing codes share (interop-facts §3): the computer name, the herdr
/// session and the expiry.
public enum PairingCodeRules {
    /// The computer's display name (`n`): at most 64 characters.
    public static func computerName(_ text: String) throws(PairingCodeError) -> String {
        guard text.count <= PairingPayload.maximumNameLength else {
            throw PairingCodeError(
                .invalidField, field: "n",
                "The computer name (n) is longer than \(PairingPayload.maximumNameLength) characters")
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
        guard expiry.timeIntervalSince(now) <= PairingPayload.maximumLifetime else {
            throw PairingCodeError(
                .invalidField, field: "x",
                "The pairing code claims to be valid for more than 15 minutes; it is not trusted")
        }
        return expiry
    }
}
