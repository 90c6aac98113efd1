/// Where a computer's home door listens, as the companion code and the channel carry it:
/// `addr:port` for IPv4, `[addr]:port` for IPv6, the address numeric and of a kind PeerGate calls
/// the home network (private, IPv4 link-local, unique-local). Loopback, tailnet, public and IPv6
/// link-local addresses (whose scope means nothing on another device) are refused.
public struct HomeAddress: Hashable, Sendable, CustomStringConvertible, Codable {
    /// The home door's port when the configuration names none.
    public static let defaultPort: UInt16 = 4610
    /// Longest text of one address: `[` 45 `]:` 5.
    public static let maximumTextLength = 53
    /// Most addresses a list carries (a computer on a few home networks at once).
    public static let maximumCount = 8

    public let address: IPAddress
    public let port: UInt16

    /// Why text is not a home address.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// A checked address: home-network kind, port 1…65535.
    public init(address: IPAddress, port: UInt16) throws(Invalid) {
        let text = address.description
        guard port > 0 else { throw Invalid("\(text): port 0 is not a port to connect to") }
        let classification = PeerClassification(text)
        guard PeerPolicy.homeOnly.decide(classification, text: text).link == .homeNetwork else {
            throw Invalid("\(text) is a \(classification.kind.rawValue) address, not a home-network one")
        }
        if address.family == .ipv6, address.bytes[0] == 0xfe, address.bytes[1] & 0xc0 == 0x80 {
            throw Invalid("\(text) is IPv6 link-local: its scope means nothing on another device")
        }
        self.address = address.unwrappingIPv4Mapped
        self.port = port
    }

    /// Parses `a.b.c.d:port` or `[v6]:port`.
    public init(parsing text: String) throws(Invalid) {
        let shown = PeerDecision.displayText(text)
        guard text.utf8.count <= Self.maximumTextLength else {
            throw Invalid("\(shown) is longer than \(Self.maximumTextLength) characters")
        }
        let host: Substring
        let portText: Substring
        let bracketed = text.hasPrefix("[")
        if bracketed {
            guard let close = text.firstIndex(of: "]"), text[close...].hasPrefix("]:") else {
                throw Invalid("\(shown) is not [IPv6]:port")
            }
            host = text[text.index(after: text.startIndex)..<close]
            portText = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw Invalid("\(shown) is not IPv4:port or [IPv6]:port")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard portText.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let port = UInt16(portText),
            port > 0
        else {
            throw Invalid("\(shown) has no port 1-65535")
        }
        guard let address = IPAddress(numeric: String(host)), bracketed == (address.family == .ipv6) else {
            throw Invalid("\(shown) does not hold a numeric IP address")
        }
        try self.init(address: address, port: port)
    }

    /// A comma list (`home=` in the companion code), at most `maximumCount` entries, no repeats.
    public static func parseList(_ text: String) throws(Invalid) -> [HomeAddress] {
        guard !text.isEmpty else { return [] }
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count <= maximumCount else {
            throw Invalid("more than \(maximumCount) home addresses")
        }
        var addresses: [HomeAddress] = []
        for part in parts {
            let address = try HomeAddress(parsing: String(part))
            guard !addresses.contains(address) else { throw Invalid("\(address) is listed twice") }
            addresses.append(address)
        }
        return addresses
    }

    /// The list as `home=` carries it.
    public static func listText(_ addresses: [HomeAddress]) -> String {
        addresses.map(\.description).joined(separator: ",")
    }

    /// `192.0.2.7:4610` or `[fd00::7]:4610` (as text it parses back).
    public var description: String {
        address.family == .ipv4 ? "\(address):\(port)" : "[\(address)]:\(port)"
    }

    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: error.description))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
