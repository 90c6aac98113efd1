import Foundation
import PeerGate

/// The pairing code a computer shows as a QR: `herdr://pair?v=1&id=…&n=…&u=…&os=…&h=…&p=…&fp=…&k=…&x=…[&s=…]`
/// (interop-facts §3, wire-compatible with herdr-ios). Parsing enforces every rule of the phone's
/// table and names the field that broke it; a code can never carry a remote command.
public struct PairingPayload: Sendable, Equatable {
    /// The longest code accepted, in UTF-8 bytes.
    public static let maximumLength = PairingCodeRules.maximumCodeLength
    /// How far in the future a code may expire.
    public static let maximumLifetime = PairingCodeRules.maximumLifetime
    public static let pairingIDSize = 16
    public static let maximumHostnames = 4
    public static let maximumFingerprints = 3
    public static let maximumNameLength = PairingCodeRules.maximumNameLength

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
        return HerdrLink.url(host: "pair", fields: fields)
    }

    // MARK: Parsing

    /// Parses and validates a code. `now` decides expiry (the code must expire in the future and
    /// at most 900 s ahead).
    public init(parsing text: String, now: Date = Date()) throws(PairingCodeError) {
        let fields = try HerdrLink.fields(
            of: text, host: "pair", knownKeys: Self.knownKeys, maximumLength: Self.maximumLength)
        func required(_ key: String, _ name: String) throws(PairingCodeError) -> String {
            guard let value = fields[key] else {
                throw PairingCodeError(.missingField, field: key, "The pairing code has no \(name) (\(key))")
            }
            return value
        }

        guard try required("v", "version") == "1" else {
            throw PairingCodeError(
                .unsupportedVersion, field: "v", "The pairing code has an unsupported version; update herdr-remote")
        }
        let idText = try required("id", "pairing id")
        guard !idText.hasPrefix("-"), let id = Base64URL.decodeCanonical(idText), id.count == Self.pairingIDSize else {
            throw PairingCodeError(
                .invalidField, field: "id", "The pairing id (id) must be 16 bytes of canonical unpadded base64url")
        }
        pairingID = id

        computerName = try PairingCodeRules.computerName(try required("n", "computer name"))

        let user = try required("u", "user name")
        guard (1...Self.maximumNameLength).contains(user.count),
            !user.unicodeScalars.contains(where: { Self.isControlOrFormat($0) || $0.properties.isWhitespace })
        else {
            throw PairingCodeError(
                .invalidField, field: "u",
                "The user name (u) must be 1-64 characters without spaces, control or format characters")
        }
        username = user

        guard let os = HostPlatform(rawValue: try required("os", "platform")) else {
            throw PairingCodeError(.invalidField, field: "os", "The platform (os) must be unix or windows")
        }
        platform = os

        let hostList = try required("h", "host list").split(separator: ",", omittingEmptySubsequences: false).map {
            CanonicalHost.hostname(String($0))
        }
        guard (1...Self.maximumHostnames).contains(hostList.count) else {
            throw PairingCodeError(
                .invalidField, field: "h", "The host list (h) must name 1-\(Self.maximumHostnames) hosts")
        }
        for host in hostList {
            guard Self.isAcceptableHostname(host) else {
                throw PairingCodeError(
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
            throw PairingCodeError(.invalidField, field: "p", "The SSH port (p) must be a number from 1 to 65535")
        }
        port = portValue

        let prints = try required("fp", "host key list").split(separator: ",", omittingEmptySubsequences: false).map(
            String.init)
        guard (1...Self.maximumFingerprints).contains(prints.count), prints.allSatisfy(Self.isCanonicalFingerprint)
        else {
            throw PairingCodeError(
                .invalidField, field: "fp",
                "The host keys (fp) must be 1-3 fingerprints of the form SHA256: and 43 base64 characters")
        }
        hostKeyFingerprints = prints

        guard let seed = Base64URL.decodeCanonical(try required("k", "one-time key")), seed.count == 32 else {
            throw PairingCodeError(
                .invalidField, field: "k", "The one-time key (k) must be 32 bytes of canonical unpadded base64url")
        }
        oneTimeKeySeed = seed

        expiresAt = try PairingCodeRules.expiry(try required("x", "expiry"), now: now)
        session = try PairingCodeRules.session(fields["s"])
    }

    /// Recomputes the expiry check, for a confirmation screen that sat open.
    public func isExpired(now: Date = Date()) -> Bool { expiresAt <= now }

    static let knownKeys: Set<String> = ["v", "id", "n", "u", "os", "h", "p", "fp", "k", "x", "s"]

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
