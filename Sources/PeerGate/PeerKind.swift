/// What a peer address is, judged from its parsed bytes.
public enum PeerKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// 127.0.0.0/8 (all of it) and ::1: the peer is on this machine.
    case loopback
    /// RFC 1918: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16.
    case `private`
    /// 169.254.0.0/16 (RFC 3927) and fe80::/10 (RFC 4291).
    case linkLocal = "link-local"
    /// fc00::/7 (RFC 4193), except the tailnet's fd7a:115c:a1e0::/48.
    case uniqueLocal = "unique-local"
    /// 100.64.0.0/10 (RFC 6598 shared address space, where Tailscale assigns) and fd7a:115c:a1e0::/48.
    case tailnet
    /// Every well-formed address in none of the ranges above: the internet, and also documentation,
    /// multicast, unspecified and other special-purpose addresses. No built-in policy admits them.
    case `public`
    /// Text that is not one numeric address (see `MalformedAddress`).
    case malformed

    /// The kind of parsed peer text.
    public init(peer text: String) { self = PeerClassification(text).kind }

    /// The kind of an address: the first range of `PeerRange.table` that holds it, else `.public`.
    /// An IPv4-mapped IPv6 address is judged as the IPv4 address it carries.
    public init(_ address: IPAddress) { self = PeerRange.containing(address)?.kind ?? .public }
}

/// One row of the classification table.
public struct PeerRange: Hashable, Sendable, CustomStringConvertible {
    public let block: CIDRBlock
    public let kind: PeerKind
    /// Where the range is defined.
    public let source: String

    /// The table, most specific first: the tailnet's IPv6 /48 lies inside fc00::/7 and must win.
    public static let table: [PeerRange] = [
        PeerRange("127.0.0.0", 8, .loopback, "RFC 1122 §3.2.1.3"),
        PeerRange("10.0.0.0", 8, .private, "RFC 1918"),
        PeerRange("172.16.0.0", 12, .private, "RFC 1918"),
        PeerRange("192.168.0.0", 16, .private, "RFC 1918"),
        PeerRange("169.254.0.0", 16, .linkLocal, "RFC 3927"),
        PeerRange("100.64.0.0", 10, .tailnet, "RFC 6598; Tailscale's IPv4 range"),
        PeerRange("::1", 128, .loopback, "RFC 4291 §2.5.3"),
        PeerRange("fe80::", 10, .linkLocal, "RFC 4291 §2.5.6"),
        PeerRange("fd7a:115c:a1e0::", 48, .tailnet, "Tailscale's IPv6 range"),
        PeerRange("fc00::", 7, .uniqueLocal, "RFC 4193"),
    ]

    /// The first row holding `address` (after unwrapping an IPv4-mapped address), if any.
    public static func containing(_ address: IPAddress) -> PeerRange? {
        let judged = address.unwrappingIPv4Mapped
        return table.first { $0.block.contains(judged) }
    }

    private init(_ network: String, _ prefixLength: Int, _ kind: PeerKind, _ source: String) {
        self.block = CIDRBlock(network: IPAddress(numeric: network)!, prefixLength: prefixLength)!
        self.kind = kind
        self.source = source
    }

    public var description: String { "\(block) (\(kind.rawValue), \(source))" }
}

/// Peer text classified: the parsed address and its kind, or why the text is malformed.
public struct PeerClassification: Hashable, Sendable, CustomStringConvertible {
    public let kind: PeerKind
    /// The parsed peer; nil when malformed.
    public let address: PeerAddress?
    /// Why the text is no address; nil unless `kind == .malformed`.
    public let malformation: MalformedAddress?
    /// The table row that decided the kind; nil for `.public` and `.malformed`.
    public let range: PeerRange?

    /// Classifies peer text: parse (length, characters, scope, inet_pton), unwrap, look up.
    public init(_ text: String) {
        switch PeerAddress.parse(text) {
        case .success(let peer): self.init(peer)
        case .failure(let malformation):
            self.init(kind: .malformed, address: nil, malformation: malformation, range: nil)
        }
    }

    public init(_ peer: PeerAddress) {
        let range = PeerRange.containing(peer.address)
        self.init(kind: range?.kind ?? .public, address: peer, malformation: nil, range: range)
    }

    private init(kind: PeerKind, address: PeerAddress?, malformation: MalformedAddress?, range: PeerRange?) {
        self.kind = kind
        self.address = address
        self.malformation = malformation
        self.range = range
    }

    /// "100.64.77.2 is tailnet (100.64.0.0/10)", "the peer is malformed: …".
    public var description: String {
        guard let address else { return "the peer is \(malformation?.description ?? "malformed")" }
        guard let range else { return "\(address) is public" }
        return "\(address) is \(kind.rawValue) (\(range.block))"
    }
}
