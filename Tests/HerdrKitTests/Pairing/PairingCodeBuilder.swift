import Foundation
import HerdrCrypto

@testable import HerdrKit

/// Pairing codes for parser tests: a valid code whose query items can be replaced, removed or
/// added one at a time, values given exactly as they appear in the URL (already %-escaped).
struct PairingCodeBuilder {
    /// The clock the tests parse with: whole seconds, so `x` arithmetic is exact.
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let pairingID = [UInt8](1...16)
    static let seed = [UInt8](repeating: 7, count: 32)

    var scheme = "herdr://pair?"
    var items: [(key: String, value: String)]

    init() {
        items = [
            ("v", "1"), ("id", Self.base64URL(Self.pairingID)), ("n", "studio"), ("u", "alice"), ("os", "unix"),
            ("h", "studio.tail1234.ts.net,studio,100.101.102.103"), ("p", "22"),
            ("fp", [Self.fingerprint(1), Self.fingerprint(2)].joined(separator: ",")), ("k", Self.base64URL(Self.seed)),
            ("x", String(Int(Self.now.timeIntervalSince1970) + 600)), ("s", "work"),
        ]
    }

    /// The code with `key` set to `value` (every occurrence replaced, or appended when absent).
    func with(_ key: String, _ value: String) -> PairingCodeBuilder {
        var copy = self
        if copy.items.contains(where: { $0.key == key }) {
            copy.items = copy.items.map { $0.key == key ? (key, value) : $0 }
        } else {
            copy.items.append((key, value))
        }
        return copy
    }

    func without(_ key: String) -> PairingCodeBuilder {
        var copy = self
        copy.items.removeAll { $0.key == key }
        return copy
    }

    /// The code with one more item at the end, even when the key is there already.
    func plus(_ key: String, _ value: String) -> PairingCodeBuilder {
        var copy = self
        copy.items.append((key, value))
        return copy
    }

    var url: String { scheme + items.map { "\($0.key)=\($0.value)" }.joined(separator: "&") }

    func parse(now: Date = PairingCodeBuilder.now) -> Result<PairingPayload, PairingCodeError> {
        Self.parse(url, now: now)
    }

    static func parse(_ text: String, now: Date = PairingCodeBuilder.now) -> Result<PairingPayload, PairingCodeError> {
        do throws(PairingCodeError) {
            return .success(try PairingPayload(parsing: text, now: now))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Encodings

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_"
        )
        .replacingOccurrences(of: "=", with: "")
    }

    /// `SHA256:` + unpadded standard base64 of SHA-256 of one byte `n`.
    static func fingerprint(_ n: UInt8) -> String {
        "SHA256:" + Data(SHA256.hash([n])).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }

    /// The same text with its last character's unused low bits set: it decodes to the same bytes
    /// with a lenient decoder, but is not what an encoder writes.
    static func nonCanonical(_ text: String, urlAlphabet: Bool) -> String {
        let alphabet = Array(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" + (urlAlphabet ? "-_" : "+/"))
        let last = text.last!
        let index = alphabet.firstIndex(of: last)!
        return String(text.dropLast()) + String(alphabet[index | 1])
    }
}

extension Result where Success == PairingPayload, Failure == PairingCodeError {
    var payload: PairingPayload? {
        if case .success(let payload) = self { return payload }
        return nil
    }

    var error: PairingCodeError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
