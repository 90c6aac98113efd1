import Foundation
import Testing

@testable import HerdrKit

/// Every row of the pairing payload table (interop-facts §3), both sides of each limit, the URL
/// rules, and hostile strings.
@Suite("PairingPayload")
struct PairingPayloadTests {
    typealias Code = PairingCodeBuilder
    let code = PairingCodeBuilder()

    // MARK: The whole code

    @Test("a valid code parses into every field")
    func validCode() throws {
        let payload = try #require(code.parse().payload)
        #expect(payload.pairingID == Code.pairingID)
        #expect(payload.pairingIDText == Code.base64URL(Code.pairingID))
        #expect(payload.computerName == "studio")
        #expect(payload.username == "alice")
        #expect(payload.platform == .unix)
        #expect(payload.hostnames == ["studio.tail1234.ts.net", "studio", "100.101.102.103"])
        #expect(payload.port == 22)
        #expect(payload.hostKeyFingerprints == [Code.fingerprint(1), Code.fingerprint(2)])
        #expect(payload.oneTimeKeySeed == Code.seed)
        #expect(payload.expiresAt == Code.now.addingTimeInterval(600))
        #expect(payload.session == "work")
        #expect(!payload.isExpired(now: Code.now))
        #expect(payload.isExpired(now: Code.now.addingTimeInterval(600)))
    }

    @Test("url then parse gives the same payload, escapes included")
    func roundTrip() throws {
        let names = ["studio", "Jane’s Mac mini", "a&b=c#d%e?f/g+h", "日本語のマック", "", String(repeating: "é", count: 64)]
        for name in names {
            for session in [nil, "work", "a.b_c-d"] {
                let payload = PairingPayload(
                    pairingID: Code.pairingID, computerName: name, username: "jürgen", platform: .windows,
                    hostnames: ["100.64.0.1", "fd7a:115c:a1e0::1", "box", "box.tail-net.ts.net"], port: 65535,
                    hostKeyFingerprints: [Code.fingerprint(3), Code.fingerprint(4), Code.fingerprint(5)],
                    oneTimeKeySeed: [UInt8](0..<32), expiresAt: Code.now.addingTimeInterval(900), session: session)
                let url = payload.url
                #expect(url.hasPrefix("herdr://pair?v=1&id="))
                #expect(url.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "the URL is plain ASCII: \(url)")
                #expect(Code.parse(url) == .success(payload), "\(url)")
            }
        }
    }

    @Test("the url keeps , and : literal and escapes the rest like RFC 3986")
    func urlEscaping() throws {
        let payload = try #require(code.with("n", "a%20b%2Cc%3Ad%2B").parse().payload)
        #expect(payload.computerName == "a b,c:d+")
        #expect(payload.url.contains("&n=a%20b,c:d%2B&"))
        #expect(
            payload.url.contains(
                "&fp=\(Code.fingerprint(1).replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")),"
            ))
    }

    @Test("at most 8192 bytes")
    func lengthLimit() throws {
        let base = code.url + "&pad="
        let exact = base + String(repeating: "a", count: PairingPayload.maximumLength - base.utf8.count)
        #expect(exact.utf8.count == 8192)
        #expect(Code.parse(exact).payload != nil)
        #expect(Code.parse(exact + "a").error?.kind == .tooLong)
        // Multi-byte characters count as their UTF-8 bytes.
        let wide = base + String(repeating: "é", count: (PairingPayload.maximumLength - base.utf8.count) / 2 + 1)
        #expect(wide.count < 8192 && wide.utf8.count > 8192)
        #expect(Code.parse(wide).error?.kind == .tooLong)
        #expect(Code.parse(String(repeating: "x", count: 1_000_000)).error?.kind == .tooLong)
    }

    // MARK: Scheme, authority, path, fragment

    @Test(
        "scheme and host compare case-insensitively",
        arguments: ["herdr://pair?", "HERDR://PAIR?", "Herdr://Pair?", "hErDr://pAiR?"])
    func caseInsensitiveSchemeAndHost(prefix: String) {
        var variant = code
        variant.scheme = prefix
        #expect(variant.parse().payload != nil)
    }

    @Test(
        "not a pairing code, or a user, password, port, path or fragment",
        arguments: [
            ("https://pair?", PairingCodeError.Kind.notAPairingCode), ("herdrs://pair?", .notAPairingCode),
            ("herdr:pair?", .notAPairingCode), ("herdr:/pair?", .notAPairingCode), ("pair?", .notAPairingCode),
            ("herdr://pairs?", .malformed), ("herdr://?", .malformed), ("herdr://user@pair?", .malformed),
            ("herdr://user:secret@pair?", .malformed), ("herdr://pair:22?", .malformed), ("herdr://pair:?", .malformed),
            ("herdr://pair/?", .malformed), ("herdr://pair/enroll?", .malformed), ("herdr://pair.example?", .malformed),
        ])
    func refusedPrefixes(prefix: String, kind: PairingCodeError.Kind) {
        var variant = code
        variant.scheme = prefix
        #expect(variant.parse().error?.kind == kind, "\(prefix)")
    }

    @Test("user, password and port are named in the refusal")
    func userInfoMessage() {
        var variant = code
        variant.scheme = "herdr://me:pw@pair?"
        #expect(variant.parse().error?.message.contains("user, password or port") == true)
    }

    @Test("no query, or a fragment, is refused")
    func noQueryOrFragment() {
        #expect(Code.parse("herdr://pair").error?.kind == .malformed)
        #expect(Code.parse("herdr://").error?.kind == .malformed)
        #expect(Code.parse(code.url + "#frag").error?.kind == .malformed)
        #expect(Code.parse(code.url + "#").error?.kind == .malformed)
        #expect(code.with("n", "a#b").parse().error?.kind == .malformed)
        // An escaped # is just a character of a value.
        #expect(code.with("n", "a%23b").parse().payload?.computerName == "a#b")
    }

    // MARK: Keys

    @Test("unknown keys are ignored, and a cmd key never sets a command")
    func unknownKeys() throws {
        let hostile = code.plus("cmd", "rm%20-rf%20~").plus("command", "sh").plus("remoteCommand", "x").plus("c", "y")
            .plus("V", "2").plus("", "z").plus("novalue", "")
        let payload = try #require(hostile.parse().payload)
        #expect(payload == code.parse().payload)
        #expect(!payload.url.contains("cmd"))
        // Unknown keys may repeat.
        #expect(code.plus("cmd", "a").plus("cmd", "b").parse().payload != nil)
        // A key with no = at all is ignored too when unknown.
        #expect(Code.parse(code.url + "&flag").payload != nil)
    }

    @Test(
        "a known key twice is refused, whatever the values",
        arguments: ["v", "id", "n", "u", "os", "h", "p", "fp", "k", "x", "s"])
    func duplicateKey(key: String) throws {
        let value = try #require(code.items.first { $0.key == key }?.value)
        let error = code.plus(key, value).parse().error
        #expect(error?.kind == .duplicateField)
        #expect(error?.field == key)
    }

    @Test("a key spelled with %-escapes is the same key")
    func escapedKey() {
        #expect(code.plus("%76", "1").parse().error?.kind == .duplicateField)
        #expect(code.without("v").plus("%76", "1").parse().payload != nil)
    }

    @Test("every required field missing is named", arguments: ["v", "id", "n", "u", "os", "h", "p", "fp", "k", "x"])
    func missingField(key: String) {
        let error = code.without(key).parse().error
        #expect(error?.kind == .missingField)
        #expect(error?.field == key)
        #expect(error?.message.contains("(\(key))") == true)
    }

    @Test("a key with no = is an empty value")
    func keyWithoutValue() {
        #expect(Code.parse(code.without("v").url + "&v").error?.kind == .unsupportedVersion)
    }

    // MARK: v

    @Test("version is exactly 1", arguments: ["2", "0", "01", "1.0", "", "%31%30", "1%20", "one"])
    func version(value: String) {
        let error = code.with("v", value).parse().error
        #expect(error?.kind == .unsupportedVersion)
        #expect(error?.field == "v")
    }

    @Test("version 1 spelled with an escape is 1")
    func escapedVersion() {
        #expect(code.with("v", "%31").parse().payload != nil)
    }

    // MARK: id

    @Test("the pairing id is 16 bytes of canonical base64url")
    func pairingID() throws {
        let canonical = Code.base64URL(Code.pairingID)
        #expect(canonical.count == 22)
        #expect(code.with("id", canonical).parse().payload != nil)
        let refused = [
            Code.base64URL([UInt8](1...15)), Code.base64URL([UInt8](1...17)), String(canonical.dropLast()),
            canonical + "A",
            canonical + "==", Code.nonCanonical(canonical, urlAlphabet: true), "", "!!!!!!!!!!!!!!!!!!!!!!",
            Data([UInt8](repeating: 0xfb, count: 16)).base64EncodedString().replacingOccurrences(of: "=", with: ""),
        ]
        for value in refused {
            let error = code.with("id", value).parse().error
            #expect(error?.field == "id", "\(value)")
            #expect(error?.kind == .invalidField, "\(value)")
        }
    }

    @Test("the pairing id never starts with -")
    func pairingIDDash() throws {
        let bytes = [0xF8] + [UInt8](repeating: 0, count: 15)
        let dashed = Code.base64URL(bytes)
        #expect(dashed.hasPrefix("-"))
        #expect(code.with("id", dashed).parse().error?.field == "id")
        let underscored = Code.base64URL([0xFC] + [UInt8](repeating: 0, count: 15))
        #expect(underscored.hasPrefix("_"))
        #expect(code.with("id", underscored).parse().payload?.pairingID.first == 0xFC)
    }

    // MARK: n

    @Test("the computer name is at most 64 characters, and may be empty")
    func computerName() throws {
        #expect(code.with("n", "").parse().payload?.computerName == "")
        #expect(code.with("n", String(repeating: "a", count: 64)).parse().payload != nil)
        #expect(code.with("n", String(repeating: "a", count: 65)).parse().error?.field == "n")
        let emoji = String(repeating: "%F0%9F%92%BB", count: 64)
        #expect(code.with("n", emoji).parse().payload?.computerName.count == 64)
        #expect(code.with("n", emoji + "a").parse().error?.field == "n")
        #expect(code.with("n", String(repeating: "x", count: 7000)).parse().error?.field == "n")
    }

    // MARK: u

    @Test(
        "the user is 1-64 characters without control, format or whitespace characters",
        arguments: [
            ("a", true), (String(repeating: "u", count: 64), true), ("j%C3%BCrgen", true), ("DOMAIN%5Cjane", true),
            ("first.last@example.com", true), ("", false), (String(repeating: "u", count: 65), false), ("a%20b", false),
            ("a%09b", false), ("a%0Ab", false), ("a%00b", false), ("a%7Fb", false), ("a%C2%85b", false),
            ("a%C2%A0b", false), ("a%E2%80%8Fb", false), ("a%E2%80%AEb", false), ("a%E3%80%80b", false),
        ])
    func username(value: String, accepted: Bool) {
        let result = code.with("u", value).parse()
        if accepted {
            #expect(result.payload != nil, "\(value)")
        } else {
            #expect(result.error?.field == "u", "\(value)")
        }
    }

    // MARK: os

    @Test(
        "the platform is unix or windows",
        arguments: [
            ("unix", true), ("windows", true), ("Unix", false), ("WINDOWS", false), ("linux", false), ("macos", false),
            ("", false),
        ])
    func platform(value: String, accepted: Bool) {
        let result = code.with("os", value).parse()
        if accepted {
            #expect(result.payload?.platform.rawValue == value)
        } else {
            #expect(result.error?.field == "os")
        }
    }

    // MARK: h

    static let label63 = String(repeating: "a", count: 63)
    /// A .ts.net name of exactly `length` bytes.
    static func tsNetName(length: Int) -> String {
        var labels: [String] = []
        var remaining = length - ".ts.net".count
        while remaining > 0 {
            let size = min(63, remaining - (labels.isEmpty ? 0 : 1))
            labels.append(String(repeating: "b", count: max(size, 1)))
            remaining -= size + (labels.count > 1 ? 1 : 0)
        }
        return labels.joined(separator: ".") + ".ts.net"
    }

    @Test(
        "each host form and its edges",
        arguments: [
            // Tailnet IPv4: 100.64.0.0/10 is 100.64.0.0 through 100.127.255.255.
            ("100.64.0.0", true), ("100.64.0.1", true), ("100.127.255.255", true), ("100.100.100.100", true),
            ("100.63.255.255", false), ("100.128.0.0", false), ("127.0.0.1", false), ("10.0.0.1", false),
            ("192.168.1.10", false), ("8.8.8.8", false), ("0.0.0.0", false), ("100.64.0", false),
            ("100.64.0.1.5", false),
            ("100.064.0.1", false), ("100.64.0.256", false), ("1684275201", false), ("123", false),
            // Tailnet IPv6: fd7a:115c:a1e0::/48, lowercase, no scope, no brackets.
            ("fd7a:115c:a1e0::1", true), ("fd7a:115c:a1e0:ffff:ffff:ffff:ffff:ffff", true), ("fd7a:115c:a1e0::", true),
            ("FD7A:115C:A1E0::1", true), ("fd7a:115c:a1e1::1", false), ("fd7a:115c:a1df::1", false), ("fd00::1", false),
            ("::1", false), ("fe80::1", false), ("2001:db8::1", false), ("fd7a:115c:a1e0::1%25eth0", false),
            ("%5Bfd7a:115c:a1e0::1%5D", false), ("::ffff:100.64.0.1", false), ("fd7a:115c:a1e0::1::2", false),
            // A single DNS label.
            ("studio", true), ("Studio", true), ("studio.", true), ("a", true), ("0studio", true), ("my-box", true),
            ("x\(String(repeating: "y", count: 62))", true), ("-studio", false), ("studio-", false), ("stu_dio", false),
            ("x\(String(repeating: "y", count: 63))", false), ("st%C3%BCdio", false), ("localhost", true),
            // 3+ labels ending .ts.net.
            ("studio.tail1234.ts.net", true), ("Studio.Tail1234.TS.NET.", true), ("a.b.c.ts.net", true),
            ("a.ts.net", true),
            ("ts.net", false), ("studio.ts.net.evil.com", false), ("studio.local", false),
            ("studio.example.com", false),
            ("studio..ts.net", false), (".studio.ts.net", false), ("stu%20dio.ts.net", false), ("-a.b.ts.net", false),
            ("a-.b.ts.net", false), ("\(label63).ts.net", true), ("\(label63)a.b.ts.net", false),
            // Empty and whitespace.
            ("", false), ("%20", false), ("%20studio%20", true), ("studio%09", true), ("stu%00dio", false),
        ])
    func hostForms(host: String, accepted: Bool) {
        let result = code.with("h", host).parse()
        if accepted {
            #expect(result.payload?.hostnames.count == 1, "\(host): \(result.error?.message ?? "")")
        } else {
            #expect(result.error?.field == "h", "\(host)")
            #expect(result.error?.kind == .invalidField, "\(host)")
        }
    }

    @Test("a .ts.net name is at most 253 bytes")
    func fqdnLength() {
        let longest = Self.tsNetName(length: 253)
        #expect(longest.utf8.count == 253)
        #expect(code.with("h", longest).parse().payload?.hostnames == [longest])
        let tooLong = Self.tsNetName(length: 254)
        #expect(tooLong.utf8.count == 254)
        #expect(code.with("h", tooLong).parse().error?.field == "h")
    }

    @Test("host names are trimmed, lowercased and lose a trailing dot, in order")
    func hostCanonicalization() {
        let payload = code.with("h", "%20Studio.Tail1234.TS.NET.%20,FD7A:115C:A1E0::1,BOX.,100.64.0.1").parse().payload
        #expect(payload?.hostnames == ["studio.tail1234.ts.net", "fd7a:115c:a1e0::1", "box", "100.64.0.1"])
    }

    @Test("1 to 4 hosts")
    func hostCount() {
        #expect(code.with("h", "a").parse().payload?.hostnames == ["a"])
        #expect(code.with("h", "a,b,c,d").parse().payload?.hostnames == ["a", "b", "c", "d"])
        #expect(code.with("h", "a,b,c,d,e").parse().error?.field == "h")
        #expect(code.with("h", "").parse().error?.field == "h")
        #expect(code.with("h", "a,,b").parse().error?.field == "h")
        #expect(code.with("h", "a,").parse().error?.field == "h")
        #expect(code.with("h", ",a").parse().error?.field == "h")
    }

    @Test("one bad host refuses the code and is shown safely")
    func badHostMessage() throws {
        let error = try #require(code.with("h", "studio,evil%1B%5B31m%E2%80%AE.com").parse().error)
        #expect(error.field == "h")
        #expect(!error.message.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x202E })
    }

    // MARK: p

    @Test(
        "the port is 1-65535 in plain decimal",
        arguments: [
            ("1", 1), ("22", 22), ("2222", 2222), ("65535", 65535), ("0", nil), ("65536", nil), ("99999", nil),
            ("022", nil), ("00022", nil), ("01", nil), ("-1", nil), ("+22", nil), ("22a", nil), ("0x16", nil),
            ("", nil),
            ("%2022", nil), ("２２", nil), ("100000", nil), ("18446744073709551639", nil),
        ])
    func port(value: String, expected: Int?) {
        let result = code.with("p", value).parse()
        if let expected {
            #expect(result.payload?.port == expected)
        } else {
            #expect(result.error?.field == "p", "\(value)")
        }
    }

    // MARK: fp

    @Test("1 to 3 canonical SHA256 fingerprints")
    func fingerprints() {
        let (a, b, c, d) = (Code.fingerprint(1), Code.fingerprint(2), Code.fingerprint(3), Code.fingerprint(4))
        #expect(code.with("fp", a).parse().payload?.hostKeyFingerprints == [a])
        #expect(code.with("fp", "\(a),\(b),\(c)").parse().payload?.hostKeyFingerprints == [a, b, c])
        #expect(code.with("fp", "\(a),\(b),\(c),\(d)").parse().error?.field == "fp")
        #expect(code.with("fp", "").parse().error?.field == "fp")
        #expect(code.with("fp", "\(a),").parse().error?.field == "fp")
        // Escaped + and / decode to the base64 characters.
        let escaped = a.replacingOccurrences(of: "+", with: "%2B").replacingOccurrences(of: "/", with: "%2F")
        #expect(code.with("fp", escaped).parse().payload?.hostKeyFingerprints == [a])
    }

    @Test("a fingerprint that is not canonical is refused")
    func nonCanonicalFingerprints() throws {
        let a = Code.fingerprint(1)
        let body = String(a.dropFirst(7))
        let refused = [
            "SHA256:" + Code.nonCanonical(body, urlAlphabet: false), "sha256:" + body, "SHA-256:" + body, "MD5:" + body,
            body,
            "SHA256:" + body + "=", "SHA256:" + String(body.dropLast()), "SHA256:" + body + "A",
            "SHA256:" + body.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_") + "",
            "SHA256:" + String(repeating: "A", count: 42) + "%20", "SHA256:%20" + body,
            "SHA256:" + String(repeating: "=", count: 43),
        ].filter { $0 != a }
        for value in refused {
            #expect(code.with("fp", value).parse().error?.field == "fp", "\(value)")
        }
        // The url-alphabet variant differs only when the digest has + or /; make sure one does.
        let withPlus = (1...50).map { Code.fingerprint(UInt8($0)) }.first { $0.contains("+") || $0.contains("/") }
        let urlStyle = try #require(withPlus).replacingOccurrences(of: "+", with: "-").replacingOccurrences(
            of: "/", with: "_")
        #expect(code.with("fp", urlStyle).parse().error?.field == "fp")
    }

    // MARK: k

    @Test("the one-time key seed is 32 bytes of canonical base64url")
    func seed() {
        let canonical = Code.base64URL(Code.seed)
        #expect(canonical.count == 43)
        #expect(code.with("k", canonical).parse().payload?.oneTimeKeySeed == Code.seed)
        let refused = [
            Code.base64URL([UInt8](repeating: 7, count: 31)), Code.base64URL([UInt8](repeating: 7, count: 33)),
            Code.nonCanonical(canonical, urlAlphabet: true), canonical + "=", Data(Code.seed).base64EncodedString(), "",
            Code.base64URL([UInt8](repeating: 0xfb, count: 32)).replacingOccurrences(of: "-", with: "+")
                .replacingOccurrences(
                    of: "_", with: "/"),
        ]
        for value in refused {
            #expect(code.with("k", value).parse().error?.field == "k", "\(value)")
        }
    }

    // MARK: x

    @Test(
        "the expiry is in the future and at most 900 s ahead",
        arguments: [
            (0, PairingCodeError.Kind?.some(.expired)), (-1, .expired), (-100_000, .expired), (1, nil), (600, nil),
            (900, nil), (901, .invalidField), (86_400, .invalidField),
        ])
    func expiry(offset: Int, refusal: PairingCodeError.Kind?) {
        let value = String(Int(Code.now.timeIntervalSince1970) + offset)
        let result = code.with("x", value).parse()
        if let refusal {
            #expect(result.error?.kind == refusal, "\(offset)")
            #expect(result.error?.field == "x")
        } else {
            #expect(result.payload?.expiresAt == Code.now.addingTimeInterval(TimeInterval(offset)))
        }
    }

    @Test("a fractional now still allows exactly 900 s of whole seconds")
    func fractionalNow() {
        let now = Code.now.addingTimeInterval(0.25)
        #expect(code.with("x", String(Int(Code.now.timeIntervalSince1970) + 900)).parse(now: now).payload != nil)
        #expect(code.with("x", String(Int(Code.now.timeIntervalSince1970) + 901)).parse(now: now).error?.field == "x")
    }

    @Test(
        "the expiry is plain Unix seconds",
        arguments: ["", "-5", "+1800000600", "1800000600.5", "1e9", "0x6B49D200", "1234567890123", "%201800000600"])
    func expiryFormat(value: String) {
        #expect(code.with("x", value).parse().error?.field == "x")
    }

    // MARK: s

    @Test(
        "the session follows herdr's name rule and is optional",
        arguments: [
            ("work", true), ("a", true), ("A.b_c-9", true), (String(repeating: "s", count: 64), true),
            ("default", true),
            ("", false), (".", false), ("..", false), (String(repeating: "s", count: 65), false), ("a%20b", false),
            ("a/b", false), ("..%2Fx", false), ("%24(touch%20pwned)", false), ("a'b", false), ("%C3%A9", false),
        ])
    func session(value: String, accepted: Bool) {
        let result = code.with("s", value).parse()
        if accepted {
            #expect(result.payload?.session == value)
        } else {
            #expect(result.error?.field == "s", "\(value)")
        }
    }

    @Test("no s means herdr's default session")
    func noSession() {
        #expect(code.without("s").parse().payload?.session == nil)
        #expect(code.without("s").parse().payload.map { $0.url.contains("&s=") } == false)
    }

    // MARK: Percent-escapes

    @Test("valid escapes decode, in either case of hex")
    func validEscapes() {
        #expect(code.with("n", "%41%62%63").parse().payload?.computerName == "Abc")
        #expect(code.with("n", "caf%c3%a9").parse().payload?.computerName == "café")
        #expect(code.with("n", "caf%C3%A9").parse().payload?.computerName == "café")
        #expect(code.with("n", "a+b").parse().payload?.computerName == "a+b")
        #expect(code.with("n", "100%25").parse().payload?.computerName == "100%")
        #expect(code.with("n", "a%26v%3D2").parse().payload?.computerName == "a&v=2")
        // Raw UTF-8 (an IRI) is read as it is.
        #expect(code.with("n", "café").parse().payload?.computerName == "café")
    }

    @Test("broken escapes are refused", arguments: ["%", "%4", "abc%", "%zz", "%%41", "%G0", "%4g", "%-1", "%%"])
    func brokenEscapes(value: String) {
        #expect(code.with("n", value).parse().error?.kind == .malformed, "\(value)")
    }

    @Test(
        "escapes that are not UTF-8 are refused",
        arguments: ["%FF", "%C3", "%C3%28", "%C0%AF", "%E0%80%AF", "%ED%A0%80", "%F4%90%80%80", "%80", "a%FEb"])
    func invalidUTF8(value: String) {
        #expect(code.with("n", value).parse().error?.kind == .malformed, "\(value)")
    }

    // MARK: Hostile strings

    @Test(
        "raw spaces and control characters anywhere are refused",
        arguments: ["\u{0}", "\n", "\r", "\t", " ", "\u{7F}", "\u{1B}[31m"])
    func rawControlCharacters(character: String) {
        #expect(code.with("n", "a\(character)b").parse().error?.kind == .malformed)
        #expect(Code.parse(character + code.url).error != nil)
        #expect(Code.parse(code.url + character).error?.kind == .malformed)
    }

    @Test("escaped control, NUL and bidi characters in the computer name are kept out of what a person sees")
    func hostileComputerName() throws {
        let payload = try #require(code.with("n", "%E2%80%AEcod.exe%00%1B%5B2J%07studio").parse().payload)
        #expect(payload.computerName.unicodeScalars.contains { $0.value == 0 })
        let shown = PairingCodeRules.printableText(payload.computerName, limit: 64)
        #expect(shown == "cod.exe[2Jstudio")
    }

    @Test("very long values are refused by the field rules or the length limit")
    func veryLongValues() {
        for key in ["id", "n", "u", "h", "p", "fp", "k", "x", "s", "v", "os"] {
            let result = code.with(key, String(repeating: "a", count: 7000)).parse()
            #expect(result.error?.field == key || result.error?.kind == .unsupportedVersion, "\(key)")
        }
        #expect(code.with("n", String(repeating: "a", count: 9000)).parse().error?.kind == .tooLong)
    }

    @Test("right-to-left marks and zero-width characters do not sneak into hosts or users")
    func bidiInNames() {
        for mark in ["%E2%80%8F", "%E2%80%8E", "%E2%80%AE", "%E2%80%8B", "%EF%BB%BF"] {
            #expect(code.with("h", "studio\(mark)").parse().error?.field == "h", "\(mark)")
            #expect(code.with("u", "alice\(mark)").parse().error?.field == "u", "\(mark)")
        }
    }

    @Test("errors name the field and read as sentences")
    func errorText() throws {
        let error = try #require(code.with("p", "0").parse().error)
        #expect(error.description == error.message)
        #expect(error.message.contains("(p)"))
        #expect(error.message.first?.isUppercase == true)
    }
}
