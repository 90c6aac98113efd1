/// A peer address as a listener or dialer reports it, parsed: the scope cut off, an IPv4-mapped
/// IPv6 address unwrapped to the IPv4 address it carries.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// Longest numeric address text: `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`
    /// (INET6_ADDRSTRLEN, 46, less its NUL).
    public static let maximumAddressLength = 45
    /// Longest scope after `%`: an interface name (IFNAMSIZ, 16, less its NUL) or a decimal
    /// scope id (at most 10 digits).
    public static let maximumScopeLength = 15
    /// Longest peer text accepted at all; anything longer is malformed before it is looked at.
    public static let maximumTextLength = maximumAddressLength + 1 + maximumScopeLength

    /// The address that is judged: IPv4 when the text was IPv4 or IPv4-mapped IPv6.
    public let address: IPAddress
    /// The IPv6 scope (`en0` in `fe80::1%en0`), if the text had one; always nil for a mapped
    /// address, whose scope (accepted, since the text is IPv6) means nothing to the IPv4 inside.
    public let scope: String?
    /// True when the text was an IPv6 address in `::ffff:0:0/96` and `address` is the IPv4 inside.
    public let wasIPv4Mapped: Bool

    /// Parses peer text: at most `maximumTextLength` printable ASCII characters; an optional
    /// `%scope` only after an IPv6 address; the address itself parsed by `inet_pton`.
    public static func parse(_ text: String) -> Result<PeerAddress, MalformedAddress> {
        let utf8 = text.utf8
        if utf8.isEmpty { return .failure(MalformedAddress(.empty, "the address is empty")) }
        if utf8.prefix(maximumTextLength + 1).count > maximumTextLength {
            return .failure(MalformedAddress(.tooLong, "longer than \(maximumTextLength) characters"))
        }
        if utf8.contains(where: { $0 < 0x21 || $0 > 0x7e }) {
            return .failure(MalformedAddress(.invalidCharacter, "contains a space, control or non-ASCII character"))
        }
        var addressText = Substring(text)
        var scope: String?
        if let percent = text.firstIndex(of: "%") {
            addressText = text[..<percent]
            let scopeText = text[text.index(after: percent)...]
            if scopeText.isEmpty || scopeText.contains("%") {
                return .failure(MalformedAddress(.badScope, "has an empty or doubled %scope"))
            }
            if scopeText.utf8.count > maximumScopeLength {
                return .failure(MalformedAddress(.tooLong, "has a scope longer than \(maximumScopeLength) characters"))
            }
            scope = String(scopeText)
        }
        if addressText.utf8.count > maximumAddressLength {
            return .failure(MalformedAddress(.tooLong, "has an address longer than \(maximumAddressLength) characters"))
        }
        guard let parsed = IPAddress(numeric: String(addressText)) else {
            return .failure(MalformedAddress(.notAnAddress, "is not a numeric IPv4 or IPv6 address"))
        }
        if scope != nil && parsed.family == .ipv4 {
            return .failure(MalformedAddress(.badScope, "has a %scope after an IPv4 address"))
        }
        // IPv4 has no scopes: a mapped address keeps none, so its text is plain dotted IPv4.
        let mapped = parsed.isIPv4Mapped
        return .success(
            PeerAddress(address: parsed.unwrappingIPv4Mapped, scope: mapped ? nil : scope, wasIPv4Mapped: mapped))
    }

    /// The judged address in canonical text (the IPv4 form for a mapped address), with its scope.
    public var description: String {
        scope.map { "\(address)%\($0)" } ?? address.description
    }
}

/// Why peer text is not an address. `kind` is stable; `reason` is a phrase for people that
/// completes "the peer …" and never repeats the (possibly hostile) text itself.
public struct MalformedAddress: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable, Codable {
        case empty
        /// Over `PeerAddress.maximumTextLength`, `maximumAddressLength` or `maximumScopeLength`.
        case tooLong
        /// A byte outside printable ASCII (including NUL, spaces and UTF-8).
        case invalidCharacter
        /// An empty or repeated `%scope`, or a scope after an IPv4 address.
        case badScope
        /// `inet_pton` accepts it neither as IPv4 nor as IPv6.
        case notAnAddress
    }

    public let kind: Kind
    public let reason: String

    init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "malformed address: \(reason)" }
}
