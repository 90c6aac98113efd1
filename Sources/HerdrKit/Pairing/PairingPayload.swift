import Foundation
import PeerGate

/// The pairing code a computer shows as a QR: `herdr://pair?v=1&id=…&n=…&u=…&os=…&h=…&p=…&fp=…&k=…&x=…[&s=…]`
/// (interop-facts §3, wire-compatible with herdr-ios). Parsing enforces every rule of the phone's
/// table and names the field that broke it; a code can never carry a remote command.
public struct PairingPayload: Sendable, Equatable {
    /// The longest code accepted, in UTF-8 bytes.
    public static let maximumLength = 8192
    /// How far in the future a code may expire.
    public static let maximumLifetime: TimeInterval = 900
    public static let pairingIDSize = 16
    public static let maximumHostnames = 4
    public static let maximumFingerprints = 3
    public static let maximumNameLength = 64

    /// 16 random bytes naming this pairing (and the enroll state on the computer).
    public var pairingID: [UInt8]
    /// The computer's display name.
    public var computerName: String
    /// The SSH login on the computer.
    public var username: String
    public var platform: HostPlatform
    /// Names to try, preferred first: tailnet addresses, a short MagicDNS name, or a `.ts.net` FQDN.
    public var hostnames: [String]
    public var port: Int
    /// `SHA256:…` fingerprints of the computer's host keys (Ed25519 and ECDSA).
    public var hostKeyFingerprints: [String]
    /// The 32-byte seed of the one-time Ed25519 key that may run the enroll command once.
    public var oneTimeKeySeed: [UInt8]
    /// When the code stops working (whole Unix seconds).
    public var expiresAt: Date
    /// The herdr session to attach to after pairing; nil for herdr's default.
    public var session: String?

    public init(
        pairingID: [UInt8], computerName: String, username: String, platform: HostPlatform, hostnames: [String],
        port: Int,
        hostKeyFingerprints: [String], oneTimeKeySeed: [UInt8], expiresAt: Date, session: String? = nil
    ) {
        self.pairingID = pairingID
        self.computerName = computerName
        self.username = username
        self.platform = platform
        self.hostnames = hostnames
        self.port = port
        self.hostKeyFingerprints = hostKeyFingerprints
        self.oneTimeKeySeed = oneTimeKeySeed
        self.expiresAt = expiresAt
        self.session = session
    }

    /// The pairing id as it appears in the code: 22 characters of unpadded base64url.
    public var pairingIDText: String { Base64URL.encode(pairingID) }

    // MARK: Encoding

    /// The code as a URL string, values percent-escaped (RFC 3986) with `,` and `:` literal.
    public var url: String {
        var fields: [(String, String)] = [
            ("v", "1"), ("id", pairingIDText), ("n", computerName), ("u", username), ("os", platform.rawValue),
            ("h", hostnames.joined(separator: ",")), ("p", String(port)),
            ("fp", hostKeyFingerprints.joined(separator: ",")),
            ("k", Base64URL.encode(oneTimeKeySeed)),
            ("x", String(Int64(expiresAt.timeIntervalSince1970.rounded(.down)))),
        ]
        if let session { fields.append(("s", session)) }
        return "herdr://pair?" + fields.map { "\($0)=\(Self.escape($1))" }.joined(separator: "&")
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: ","),
                UInt8(ascii: ":"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    // MARK: Parsing

    /// Parses and validates a code. `now` decides expiry (the code must expire in the future and
    /// at most 900 s ahead).
    public init(parsing text: String, now: Date = Date()) throws(PairingPayloadError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw PairingPayloadError(
                .tooLong, field: nil, "The pairing code is longer than \(Self.maximumLength) bytes")
        }
        // RFC 3986 has no raw spaces or control characters; a value that needs one is %-escaped.
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw PairingPayloadError(
                .malformed, field: nil,
                "The pairing code contains a space or control character (values must be %-escaped)")
        }
        let fields = try Self.queryFields(of: text)
        func required(_ key: String, _ name: String) throws(PairingPayloadError) -> String {
            guard let value = fields[key] else {
                throw PairingPayloadError(.missingField, field: key, "The pairing code has no \(name) (\(key))")
            }
            return value
        }

        guard try required("v", "version") == "1" else {
            throw PairingPayloadError(
                .unsupportedVersion, field: "v", "The pairing code has an unsupported version; update herdr-remote")
        }
        let idText = try required("id", "pairing id")
        guard !idText.hasPrefix("-"), let id = Base64URL.decodeCanonical(idText), id.count == Self.pairingIDSize else {
            throw PairingPayloadError(
                .invalidField, field: "id", "The pairing id (id) must be 16 bytes of canonical unpadded base64url")
        }
        pairingID = id

        let name = try required("n", "computer name")
        guard name.count <= Self.maximumNameLength else {
            throw PairingPayloadError(
                .invalidField, field: "n", "The computer name (n) is longer than \(Self.maximumNameLength) characters")
        }
        computerName = name

        let user = try required("u", "user name")
        guard (1...Self.maximumNameLength).contains(user.count),
            !user.unicodeScalars.contains(where: { Self.isControlOrFormat($0) || $0.properties.isWhitespace })
        else {
            throw PairingPayloadError(
                .invalidField, field: "u",
                "The user name (u) must be 1-64 characters without spaces, control or format characters")
        }
        username = user

        guard let os = HostPlatform(rawValue: try required("os", "platform")) else {
            throw PairingPayloadError(.invalidField, field: "os", "The platform (os) must be unix or windows")
        }
        platform = os

        let hostList = try required("h", "host list").split(separator: ",", omittingEmptySubsequences: false).map {
            CanonicalHost.hostname(String($0))
        }
        guard (1...Self.maximumHostnames).contains(hostList.count) else {
            throw PairingPayloadError(
                .invalidField, field: "h", "The host list (h) must name 1-\(Self.maximumHostnames) hosts")
        }
        for host in hostList {
            guard Self.isAcceptableHostname(host) else {
                throw PairingPayloadError(
                    .invalidField, field: "h",
                    "The host '\(Self.printable(host))' (h) is not a tailnet address, a single-label name or a .ts.net name"
                )
            }
        }
        hostnames = hostList

        let portText = try required("p", "port")
        guard portText.utf8.allSatisfy({ (0x30...0x39).contains($0) }), (1...5).contains(portText.count),
            !portText.hasPrefix("0"),
            let portValue = Int(portText), (1...65535).contains(portValue)
        else {
            throw PairingPayloadError(.invalidField, field: "p", "The SSH port (p) must be a number from 1 to 65535")
        }
        port = portValue

        let prints = try required("fp", "host key list").split(separator: ",", omittingEmptySubsequences: false).map(
            String.init)
        guard (1...Self.maximumFingerprints).contains(prints.count), prints.allSatisfy(Self.isCanonicalFingerprint)
        else {
            throw PairingPayloadError(
                .invalidField, field: "fp",
                "The host keys (fp) must be 1-3 fingerprints of the form SHA256: and 43 base64 characters")
        }
        hostKeyFingerprints = prints

        guard let seed = Base64URL.decodeCanonical(try required("k", "one-time key")), seed.count == 32 else {
            throw PairingPayloadError(
                .invalidField, field: "k", "The one-time key (k) must be 32 bytes of canonical unpadded base64url")
        }
        oneTimeKeySeed = seed

        let expiryText = try required("x", "expiry")
        guard expiryText.utf8.allSatisfy({ (0x30...0x39).contains($0) }), (1...12).contains(expiryText.count),
            let seconds = Int64(expiryText)
        else {
            throw PairingPayloadError(.invalidField, field: "x", "The expiry (x) must be Unix seconds")
        }
        let expiry = Date(timeIntervalSince1970: TimeInterval(seconds))
        guard expiry > now else {
            throw PairingPayloadError(
                .expired, field: "x", "The pairing code has expired; show a new one on the computer")
        }
        guard expiry.timeIntervalSince(now) <= Self.maximumLifetime else {
            throw PairingPayloadError(
                .invalidField, field: "x",
                "The pairing code claims to be valid for more than 15 minutes; it is not trusted")
        }
        expiresAt = expiry

        if let name = fields["s"] {
            guard HerdrSessionName.isValid(name) else {
                throw PairingPayloadError(
                    .invalidField, field: "s", "The herdr session (s) must be 1-64 of A-Z a-z 0-9 . _ - (not . or ..)")
            }
            session = name
        } else {
            session = nil
        }
    }

    /// Recomputes the expiry check, for a confirmation screen that sat open.
    public func isExpired(now: Date = Date()) -> Bool { expiresAt <= now }

    static let knownKeys: Set<String> = ["v", "id", "n", "u", "os", "h", "p", "fp", "k", "x", "s"]

    /// The query of a `herdr://pair?…` URL as decoded key/value pairs; known keys at most once.
    private static func queryFields(of text: String) throws(PairingPayloadError) -> [String: String] {
        let bytes = Array(text.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")),
            String(decoding: bytes[..<colon], as: UTF8.self).lowercased() == "herdr"
        else {
            throw PairingPayloadError(
                .notAPairingCode, field: nil, "This is not a herdr pairing code (it must start with herdr://pair?)")
        }
        var rest = bytes[(colon + 1)...]
        guard rest.starts(with: Array("//".utf8)) else {
            throw PairingPayloadError(
                .notAPairingCode, field: nil, "This is not a herdr pairing code (it must start with herdr://pair?)")
        }
        rest = rest.dropFirst(2)
        if rest.contains(UInt8(ascii: "#")) {
            throw PairingPayloadError(.malformed, field: nil, "The pairing code must not have a fragment (#)")
        }
        let authorityEnd = rest.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "/") } ?? rest.endIndex
        let authority = String(decoding: rest[rest.startIndex..<authorityEnd], as: UTF8.self)
        guard authority.lowercased() == "pair" else {
            let reason =
                authority.contains("@") || authority.contains(":")
                ? "The pairing code must not carry a user, password or port"
                : "This is not a herdr pairing code (its host must be pair)"
            throw PairingPayloadError(.malformed, field: nil, reason)
        }
        guard authorityEnd < rest.endIndex, rest[authorityEnd] == UInt8(ascii: "?") else {
            throw PairingPayloadError(
                .malformed, field: nil, "The pairing code must have no path and a query (herdr://pair?…)")
        }
        var fields: [String: String] = [:]
        let query = rest[(authorityEnd + 1)...]
        for part in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = part.firstIndex(of: UInt8(ascii: "="))
            let rawKey = equals.map { part[part.startIndex..<$0] } ?? part[...]
            let rawValue = equals.map { part[($0 + 1)...] } ?? []
            let key = try percentDecode(rawKey)
            let value = try percentDecode(rawValue)
            guard knownKeys.contains(key) else { continue }  // unknown keys (like `cmd`) never matter
            guard fields[key] == nil else {
                throw PairingPayloadError(.duplicateField, field: key, "The pairing code has the field \(key) twice")
            }
            fields[key] = value
        }
        return fields
    }

    private static func percentDecode<Bytes: Collection<UInt8>>(_ bytes: Bytes) throws(PairingPayloadError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                throw PairingPayloadError(.malformed, field: nil, "The pairing code has a broken %-escape")
            }
            out.append(high << 4 | low)
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw PairingPayloadError(.malformed, field: nil, "The pairing code is not valid UTF-8")
        }
        return text
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: Field rules

    /// A dotted IPv4 in 100.64.0.0/10, an IPv6 in fd7a:115c:a1e0::/48, a single DNS label, or
    /// three or more labels ending in `.ts.net`.
    static func isAcceptableHostname(_ host: String) -> Bool {
        guard !host.isEmpty, host.utf8.count <= 253 else { return false }
        if host.contains(":") {
            guard case .success(let address) = PeerAddress.parse(host), address.scope == nil, !address.wasIPv4Mapped,
                host == host.lowercased()
            else { return false }
            return PeerKind(address.address) == .tailnet
        }
        if host.utf8.allSatisfy({ (0x30...0x39).contains($0) || $0 == UInt8(ascii: ".") }) {
            guard case .success(let address) = PeerAddress.parse(host) else { return false }
            return address.address.family == .ipv4 && PeerKind(address.address) == .tailnet
        }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy(isDNSLabel) else { return false }
        return labels.count == 1 || (labels.count >= 3 && labels.suffix(2) == ["ts", "net"])
    }

    private static func isDNSLabel<S: StringProtocol>(_ label: S) -> Bool {
        let bytes = Array(label.utf8)
        guard (1...63).contains(bytes.count) else { return false }
        func alphanumeric(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x61...0x7a).contains(byte) }
        return alphanumeric(bytes.first!) && alphanumeric(bytes.last!)
            && bytes.allSatisfy { alphanumeric($0) || $0 == UInt8(ascii: "-") }
    }

    /// `SHA256:` and 43 characters of canonical unpadded standard base64 (a 32-byte digest).
    static func isCanonicalFingerprint(_ text: String) -> Bool {
        guard text.hasPrefix("SHA256:") else { return false }
        let body = String(text.dropFirst(7))
        guard body.utf8.count == 43, let data = Data(base64Encoded: body + "="), data.count == 32 else { return false }
        return data.base64EncodedString().dropLast() == body
    }

    /// Control characters (Cc) and invisible format characters such as bidirectional overrides (Cf).
    static func isControlOrFormat(_ scalar: Unicode.Scalar) -> Bool {
        let category = scalar.properties.generalCategory
        return category == .control || category == .format
    }

    /// Text safe to show in an error: control and format characters replaced, at most 64 code points.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.prefix(64).map { isControlOrFormat($0) ? "?" : $0 }))
    }
}

/// Why a pairing code was refused, naming the field (`h`, `fp`, …) when one field is at fault.
public struct PairingPayloadError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case tooLong, notAPairingCode, malformed, missingField, duplicateField, unsupportedVersion, invalidField,
            expired
    }

    public let kind: Kind
    /// The query key at fault, if one is.
    public let field: String?
    public let message: String

    public init(_ kind: Kind, field: String?, _ message: String) {
        self.kind = kind
        self.field = field
        self.message = message
    }

    public var description: String { message }
}

/// Unpadded base64url (RFC 4648 §5), decoding only the canonical spelling. Pairing ids and keys
/// in the QR code use it; `herdr-pair` (HerdrHost) writes them with the same code.
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
