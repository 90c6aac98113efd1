import EndToEndChannel
import Foundation
import HerdrBase
import HerdrCrypto
import PeerGate
import Plumbing
import RelayClient
import RelayProtocol

/// The pairing code a computer (`herdr-host pair`) shows for the Noise roads:
/// `herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s&rs=…&pid=…&relay=…&n=…[&home=…][&s=…][&x=…]`
/// (docs/companion.md), or a web client's address with that query in its fragment
/// (`https://relay.example.com/#v=1&proto=…`). Parsed with the strictness of pairing payload v1 (interop-facts §3):
/// a size cap, a known key twice is an error, unknown keys are ignored, canonical base64url, the
/// relay reduced to a bare origin at parse time.
public struct CompanionCode: Sendable, Hashable {
    /// The longest code accepted, in UTF-8 bytes (as v1).
    public static let maximumLength = PairingCodeRules.maximumCodeLength
    public static let host = "companion"
    public static let version = "1"
    public static let staticKeySize = 32
    public static let pairingIDSize = 16

    /// The computer's Noise static public key, `rs`.
    public var staticPublicKey: [UInt8]
    /// 16 random bytes naming this pairing; its text (`pidText`) goes into the prologue and the room.
    public var pairingID: [UInt8]
    /// The relay both sides meet at, reduced to its origin; nil for a code that pairs on the home
    /// network only (its `home` then names where).
    public var relay: RelayEndpoint?
    /// The computer's display name.
    public var computerName: String
    /// The herdr session to attach to after pairing; nil for herdr's default.
    public var session: String?
    /// When the code stops working, if it says.
    public var expiresAt: Date?
    /// Where the computer's home door listens (`home=`, a comma list), home-network addresses only.
    public var home: [HomeAddress]

    public init(
        staticPublicKey: [UInt8], pairingID: [UInt8], relay: RelayEndpoint?, computerName: String,
        session: String? = nil, expiresAt: Date? = nil, home: [HomeAddress] = []
    ) {
        self.home = home
        self.staticPublicKey = staticPublicKey
        self.pairingID = pairingID
        self.relay = relay
        self.computerName = computerName
        self.session = session
        self.expiresAt = expiresAt
    }

    /// The pairing id as the code spells it: 22 characters of unpadded base64url.
    public var pidText: String { Base64URL.encode(pairingID) }

    /// A fresh pairing id from `random` (a count → that many random bytes), drawn again while its
    /// text starts with `-`: readers refuse such an id (it could pass for an option on a command
    /// line), one draw in 64.
    public static func newPairingID(
        random: (Int) -> [UInt8] = { SecureRandom.bytes($0) }
    ) -> [UInt8] {
        var pid = random(pairingIDSize)
        while Base64URL.encode(pid).hasPrefix("-") { pid = random(pairingIDSize) }
        return pid
    }

    /// The relay room of this pairing: lowercase hex SHA256(canonical("iterm2-room", [rs, pid])).
    public var room: String { RoomName.derive(staticPublicKey: staticPublicKey, pid: pidText) }

    /// The code as a link, values percent-escaped.
    public var url: String { "herdr://\(Self.host)?" + query }

    /// The code as the address of a web client (`client`, from `webClientAddress(_:)`) with the
    /// code in its fragment: a phone's camera opens the page, and the fragment never reaches a
    /// server.
    public func webAddress(client: String) -> String { client + "#" + query }

    /// The link's query: the fields after `herdr://companion?`, and a web address's fragment.
    public var query: String {
        var fields: [(String, String)] = [
            ("v", Self.version), ("proto", CompanionProfile.protocolName), ("rs", Base64URL.encode(staticPublicKey)),
            ("pid", pidText),
        ]
        if let relay { fields.append(("relay", relay.origin)) }
        fields.append(("n", computerName))
        if !home.isEmpty { fields.append(("home", HomeAddress.listText(home))) }
        if let session { fields.append(("s", session)) }
        if let expiresAt { fields.append(("x", String(Int64(expiresAt.timeIntervalSince1970.rounded(.down))))) }
        return HerdrLink.query(fields)
    }

    /// The longest web client address before its fragment.
    public static let maximumWebClientLength = 1024

    /// Whether `text` is an `https://` (or `http://`) address, which may carry a code in its
    /// fragment.
    public static func isWebAddress(_ text: String) -> Bool {
        let lowered = text.prefix(8).lowercased()
        return lowered.hasPrefix("https://") || lowered.hasPrefix("http://")
    }

    /// A web client's address as `herdr-host pair --web-client` takes it: https://host[:port][/path]
    /// (http:// only for a loopback host), no user, query or fragment; "/" when it has no path.
    public static func webClientAddress(_ text: String) throws(PairingCodeError) -> String {
        func invalid(_ why: String) -> PairingCodeError {
            PairingCodeError(.invalidField, field: nil, "The web client's address \(why)")
        }
        guard text.utf8.count <= maximumWebClientLength, !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }),
            let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw invalid("must be https://host[:port][/path] (at most \(maximumWebClientLength) bytes)") }
        let loopback = ["localhost", "127.0.0.1", "[::1]", "::1"].contains(host.lowercased())
        guard scheme == "https" || (scheme == "http" && loopback) else {
            throw invalid("must be https:// (http:// only for a loopback host)")
        }
        guard components.user == nil, components.password == nil, components.query == nil,
            components.fragment == nil
        else { throw invalid("must not have a user, a query or a fragment") }
        return components.path.isEmpty ? text + "/" : text
    }

    /// The `herdr://` link of a web address's fragment; nil when `text` is no web address.
    static func link(fromWebAddress text: String) throws(PairingCodeError) -> String? {
        guard isWebAddress(text) else { return nil }
        guard let hash = text.firstIndex(of: "#"), text.index(after: hash) < text.endIndex else {
            throw PairingCodeError(
                .notAPairingCode, field: nil,
                "This address carries no pairing code (nothing after #): scan the code herdr-host pair shows")
        }
        guard text[..<hash].utf8.count <= maximumWebClientLength else {
            throw PairingCodeError(
                .tooLong, field: nil,
                "The address before its pairing code is longer than \(maximumWebClientLength) bytes")
        }
        return "herdr://\(host)?" + text[text.index(after: hash)...]
    }

    static let knownKeys: Set<String> = ["v", "proto", "rs", "pid", "relay", "n", "home", "s", "x"]

    /// Parses and checks a code; `now` decides expiry when the code has one.
    public init(parsing text: String, now: Date = Date()) throws(PairingCodeError) {
        let fields = try HerdrLink.fields(
            of: try Self.link(fromWebAddress: text) ?? text, host: Self.host, knownKeys: Self.knownKeys,
            maximumLength: Self.maximumLength)
        func required(_ key: String, _ name: String) throws(PairingCodeError) -> String {
            guard let value = fields[key] else {
                throw PairingCodeError(.missingField, field: key, "The pairing code has no \(name) (\(key))")
            }
            return value
        }
        guard try required("v", "version") == Self.version else {
            throw PairingCodeError(
                .unsupportedVersion, field: "v", "The pairing code has an unsupported version; update herdr-remote")
        }
        guard try required("proto", "protocol") == CompanionProfile.protocolName else {
            throw PairingCodeError(
                .unsupportedVersion, field: "proto",
                "The pairing code asks for a protocol other than \(CompanionProfile.protocolName); update herdr-remote")
        }
        guard let key = Base64URL.decodeCanonical(try required("rs", "computer key")), key.count == Self.staticKeySize
        else {
            throw PairingCodeError(
                .invalidField, field: "rs", "The computer key (rs) must be 32 bytes of canonical unpadded base64url")
        }
        staticPublicKey = key
        let pidText = try required("pid", "pairing id")
        guard !pidText.hasPrefix("-"), let pid = Base64URL.decodeCanonical(pidText), pid.count == Self.pairingIDSize
        else {
            throw PairingCodeError(
                .invalidField, field: "pid", "The pairing id (pid) must be 16 bytes of canonical unpadded base64url")
        }
        pairingID = pid
        do throws(ConnectionError) {
            relay = try fields["relay"].map { text throws(ConnectionError) in try RelayEndpoint(parsing: text) }
        } catch {
            throw PairingCodeError(
                .invalidField, field: "relay",
                "The relay (relay) must be https://host[:port] with nothing after it (\(error.message))")
        }
        computerName = try PairingCodeRules.computerName(try required("n", "computer name"))
        do throws(HomeAddress.Invalid) {
            home = try HomeAddress.parseList(fields["home"] ?? "")
        } catch {
            throw PairingCodeError(
                .invalidField, field: "home",
                "The home addresses (home) must be up to \(HomeAddress.maximumCount) home-network addr:port entries (\(error))"
            )
        }
        guard relay != nil || !home.isEmpty else {
            throw PairingCodeError(
                .missingField, field: "relay", "The pairing code has no relay (relay) and no home address (home)")
        }
        session = try PairingCodeRules.session(fields["s"])
        expiresAt = try fields["x"].map { text throws(PairingCodeError) in
            try PairingCodeRules.expiry(text, now: now)
        }
    }
}
