import CompanionPairing
import Foundation
import HerdrKit
import PeerGate
import RelayClient
import RelayProtocol
import Testing

/// The `herdr://companion` code: every rule, with its boundaries, and the round trip.
@Suite struct CompanionCodeTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
    static let rs = [UInt8](repeating: 0x11, count: 32)
    static let pid = [UInt8](0..<16)

    static func sample(session: String? = "work", expires: Date? = now.addingTimeInterval(120)) throws -> CompanionCode
    {
        CompanionCode(
            staticPublicKey: rs, pairingID: pid, relay: try RelayEndpoint(parsing: "https://relay.example.com"),
            computerName: "James's Mac", session: session, expiresAt: expires)
    }

    /// The link with one field replaced (or removed, with nil).
    static func link(_ changes: [String: String?] = [:], extra: String = "") throws -> String {
        var fields: [(String, String)] = [
            ("v", "1"), ("proto", "Noise_XK_25519_ChaChaPoly_BLAKE2s"), ("rs", Base64URL.encode(rs)),
            ("pid", Base64URL.encode(pid)), ("relay", "https://relay.example.com"), ("n", "studio"),
        ]
        for (key, value) in changes {
            fields.removeAll { $0.0 == key }
            if let value { fields.append((key, value)) }
        }
        return HerdrLink.url(host: "companion", fields: fields) + extra
    }

    func parse(_ text: String) throws(PairingCodeError) -> CompanionCode {
        try CompanionCode(parsing: text, now: Self.now)
    }

    @Test func roundTrip() throws {
        let code = try Self.sample()
        let parsed = try parse(code.url)
        #expect(parsed == code)
        #expect(code.url.hasPrefix("herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs="))
        #expect(code.url.contains("&relay=https:%2F%2Frelay.example.com&"))
        #expect(code.url.contains("&n=James%27s%20Mac&s=work&x=1800000120"))
        #expect(code.pidText.count == 22)
        #expect(code.room == RoomName.derive(staticPublicKey: Self.rs, pid: code.pidText))
        #expect(RoomName.isValid(code.room))
    }

    /// A pairing id whose text starts with `-` is refused by readers, so none is made: 0xF8 makes
    /// the text's first character `-`, and the next draw is taken instead.
    @Test func aFreshPairingIDNeverStartsWithADash() throws {
        var draws: [[UInt8]] = [[0xF8] + Array(repeating: 0, count: 15), Array(repeating: 7, count: 16)]
        let pid = CompanionCode.newPairingID { count in
            #expect(count == CompanionCode.pairingIDSize)
            return draws.removeFirst()
        }
        #expect(pid == Array(repeating: 7, count: 16))
        #expect(draws.isEmpty)
        #expect(throws: PairingCodeError.self) {
            try parse(
                CompanionCode(
                    staticPublicKey: Self.rs, pairingID: [0xF8] + Array(repeating: 0, count: 15), relay: nil,
                    computerName: "studio", expiresAt: nil
                ).url)
        }
        for _ in 0..<1000 { #expect(!Base64URL.encode(CompanionCode.newPairingID()).hasPrefix("-")) }
    }

    /// The same code as a web client's address: its query in the fragment, which a browser never
    /// sends to a server; the address itself is checked only for its form.
    @Test func aWebClientsAddressCarriesTheCodeInItsFragment() throws {
        let code = try Self.sample()
        let client = try CompanionCode.webClientAddress("https://relay.example.com")
        #expect(client == "https://relay.example.com/")
        let address = code.webAddress(client: client)
        #expect(address == "https://relay.example.com/#" + code.query)
        #expect(code.url == "herdr://companion?" + code.query)
        #expect(try parse(address) == code)
        #expect(try parse("HTTPS://elsewhere.example:8443/herdr/#" + code.query) == code, "any web client")
        #expect(try parse("http://127.0.0.1:9/#" + code.query) == code)
        for (text, kind) in [
            ("https://relay.example.com/", PairingCodeError.Kind.notAPairingCode),
            ("https://relay.example.com/#", .notAPairingCode),
            ("https://relay.example.com/#v=2&" + code.query.dropFirst(4), .unsupportedVersion),
            ("https://" + String(repeating: "a", count: 1100) + "/#" + code.query, .tooLong),
            ("https://relay.example.com/#" + code.query + "&v=1", .duplicateField),
        ] as [(String, PairingCodeError.Kind)] {
            #expect(throws: PairingCodeError.self, "\(text.prefix(60))") { try parse(text) }
            do throws(PairingCodeError) {
                _ = try parse(text)
            } catch {
                #expect(error.kind == kind, "\(text.prefix(60)): \(error)")
            }
        }
        #expect(!CompanionCode.isWebAddress("herdr://companion?v=1") && CompanionCode.isWebAddress("Https://x"))
        for bad in [
            "http://relay.example.com", "ftp://relay.example.com", "https://", "https://user@relay.example.com",
            "https://relay.example.com/?a=1", "https://relay.example.com/#x", "https://relay example.com",
            "https://" + String(repeating: "a", count: 1100),
        ] {
            #expect(throws: PairingCodeError.self, "\(bad.prefix(60))") { try CompanionCode.webClientAddress(bad) }
        }
        #expect(try CompanionCode.webClientAddress("https://h.example/app/") == "https://h.example/app/")
    }

    @Test func theRelayIsReducedToItsOrigin() throws {
        let cases: [(String, String)] = [
            ("https://Relay.Example.COM", "https://relay.example.com"),
            ("https://relay.example.com:443", "https://relay.example.com"),
            ("https://relay.example.com:8443/", "https://relay.example.com:8443"),
            ("http://127.0.0.1:8787", "http://127.0.0.1:8787"),
            ("https://[2001:db8::1]:444", "https://[2001:db8::1]:444"),
            ("https://xn--bcher-kva.example", "https://xn--bcher-kva.example"),
        ]
        for (given, origin) in cases {
            #expect(try parse(Self.link(["relay": given])).relay?.origin == origin, "\(given)")
        }
        for bad in [
            "https://user@relay.example.com", "https://relay.example.com/path", "https://relay.example.com?q=1",
            "https://relay.example.com#f", "http://relay.example.com", "ftp://relay.example.com", "relay.example.com",
            "https://bücher.example", "https://relay.example.com:0", "https://relay.example.com:65536", "",
        ] {
            let error = #expect(throws: PairingCodeError.self, "\(bad)") { try parse(Self.link(["relay": bad])) }
            #expect(error?.field == "relay", "\(bad)")
        }
    }

    @Test(
        arguments: [
            (["v": "2"], "v", PairingCodeError.Kind.unsupportedVersion), (["v": nil], "v", .missingField),
            (["proto": "Noise_XX_25519_ChaChaPoly_BLAKE2s"], "proto", .unsupportedVersion),
            (["proto": nil], "proto", .missingField),
            (["rs": Base64URL.encode([UInt8](repeating: 1, count: 31))], "rs", .invalidField),
            (["rs": Base64URL.encode([UInt8](repeating: 1, count: 33))], "rs", .invalidField),
            (["rs": Data([UInt8](repeating: 0xfb, count: 32)).base64EncodedString()], "rs", .invalidField),  // standard, not url
            (["rs": Base64URL.encode([UInt8](repeating: 1, count: 32)) + "="], "rs", .invalidField),
            (["pid": Base64URL.encode([UInt8](repeating: 1, count: 15))], "pid", .invalidField),
            (["pid": Base64URL.encode([UInt8](repeating: 0xf8, count: 16))], "pid", .invalidField),  // starts with -
            (["pid": nil], "pid", .missingField), (["relay": nil], "relay", .missingField),
            (["n": nil], "n", .missingField),
            (["n": String(repeating: "n", count: 65)], "n", .invalidField), (["s": "a b"], "s", .invalidField),
            (["s": ".."], "s", .invalidField), (["s": String(repeating: "s", count: 65)], "s", .invalidField),
            (["x": "1799999999"], "x", .expired), (["x": "1800000901"], "x", .invalidField),
            (["x": "soon"], "x", .invalidField),
        ] as [([String: String?], String, PairingCodeError.Kind)])
    func eachFieldsRuleNamesTheField(changes: [String: String?], field: String, kind: PairingCodeError.Kind) throws {
        let error = #expect(throws: PairingCodeError.self) { try parse(Self.link(changes)) }
        #expect(error?.field == field)
        #expect(error?.kind == kind, "\(String(describing: error))")
    }

    @Test func boundariesThatPass() throws {
        #expect(try parse(Self.link(["n": String(repeating: "n", count: 64)])).computerName.count == 64)
        #expect(try parse(Self.link(["n": ""])).computerName == "")
        #expect(try parse(Self.link(["s": String(repeating: "s", count: 64)])).session?.count == 64)
        #expect(try parse(Self.link(["x": "1800000900"])).expiresAt == Self.now.addingTimeInterval(900))
        #expect(try parse(Self.link()).expiresAt == nil)
        // Unknown keys are ignored (a later version adds `home=`), and never carry a command.
        let later = try parse(Self.link(["home": "[fd00::1]:4242", "cmd": "rm -rf /"]))
        #expect(later.relay?.origin == "https://relay.example.com")
        // Scheme and host compare case-insensitively.
        #expect(throws: Never.self) {
            try parse(Self.link().replacingOccurrences(of: "herdr://companion", with: "HERDR://Companion"))
        }
    }

    @Test func theLinkItselfFollowsTheV1Rules() throws {
        let good = try Self.link()
        let duplicate = #expect(throws: PairingCodeError.self) {
            try parse(good + "&pid=" + Base64URL.encode(Self.pid))
        }
        #expect(duplicate?.kind == .duplicateField && duplicate?.field == "pid")
        for bad in [
            good.replacingOccurrences(of: "companion?", with: "companion/x?"), good + "#frag",
            good.replacingOccurrences(of: "herdr://companion", with: "herdr://user@companion"),
            good.replacingOccurrences(of: "herdr://companion", with: "herdr://companion:80"),
            good.replacingOccurrences(of: "n=studio", with: "n=stu dio"),
            good.replacingOccurrences(of: "n=studio", with: "n=%zz"),
            good.replacingOccurrences(of: "n=studio", with: "n=%FF"), "https://companion?v=1",
            good.replacingOccurrences(of: "herdr://companion", with: "herdr://pair"),
        ] {
            #expect(throws: PairingCodeError.self, "\(bad)") { try parse(bad) }
        }
        let long = good + "&pad=" + String(repeating: "x", count: 8192 - good.utf8.count - 5)
        #expect(long.utf8.count == 8192)
        #expect(throws: Never.self) { try parse(long) }
        let tooLong = #expect(throws: PairingCodeError.self) { try parse(long + "x") }
        #expect(tooLong?.kind == .tooLong)
    }

    @Test func theTwoKindsAreToldApartByTheLinksHost() throws {
        #expect(HerdrLink.host(of: try Self.link()) == "companion")
        #expect(HerdrLink.host(of: "HERDR://Pair?v=1") == "pair")
        #expect(HerdrLink.host(of: "https://companion?v=1") == nil)
    }

    @Test func homeAddressesRoundTripAndOnlyHomeOnesPass() throws {
        var code = try Self.sample()
        code.home = [try HomeAddress(parsing: "[fd00::7]:4610"), try HomeAddress(parsing: "169.254.3.1:4610")]
        #expect(code.url.contains("&home=%5Bfd00::7%5D:4610,169.254.3.1:4610") || code.url.contains("&home="))
        #expect(try parse(code.url) == code)
        #expect(try parse(try Self.link()).home == [], "a code without home= has no home road")
        for bad in ["127.0.0.1:4610", "100.64.1.2:4610", "8.8.8.8:1", "[fe80::1]:4610", "169.254.3.1", "x"] {
            #expect {
                try parse(try Self.link(["home": bad]))
            } throws: { error in
                (error as? PairingCodeError)?.field == "home"
            }
        }
        #expect(throws: PairingCodeError.self) {
            try parse(try Self.link(extra: "&home=169.254.3.1:1&home=169.254.3.2:1"))
        }
    }

    @Test func aCodeForTheHomeNetworkAloneNamesNoRelay() throws {
        var code = try Self.sample()
        code.relay = nil
        code.home = [try HomeAddress(parsing: "169.254.3.1:4610")]
        #expect(!code.url.contains("relay="))
        let parsed = try parse(code.url)
        #expect(parsed == code)
        #expect(parsed.relay == nil)
        #expect {
            try parse(try Self.link(["relay": nil]))
        } throws: { error in
            (error as? PairingCodeError)?.field == "relay"
        }
    }
}
