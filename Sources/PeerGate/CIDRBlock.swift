/// An address block, `network/prefixLength`, parsed strictly: an operator's allow-list entry.
public struct CIDRBlock: Hashable, Sendable, CustomStringConvertible {
    /// Longest block text: the longest address and `/128`.
    public static let maximumTextLength = PeerAddress.maximumAddressLength + 4

    /// The network address; every bit after `prefixLength` is zero.
    public let network: IPAddress
    /// 0...32 for IPv4, 0...128 for IPv6.
    public let prefixLength: Int

    /// A block from its parts; nil if the length is out of range or a host bit is set.
    public init?(network: IPAddress, prefixLength: Int) {
        guard prefixLength >= 0, prefixLength <= network.bytes.count * 8 else { return nil }
        guard Self.masked(network, prefixLength) == network else { return nil }
        self.network = network
        self.prefixLength = prefixLength
    }

    /// The block of `prefixLength` bits that holds `address` (host bits cleared); nil if the
    /// length is out of range for the family.
    public init?(holding address: IPAddress, prefixLength: Int) {
        guard prefixLength >= 0, prefixLength <= address.bytes.count * 8 else { return nil }
        self.network = Self.masked(address, prefixLength)
        self.prefixLength = prefixLength
    }

    /// Parses `address/length`, or a bare address as a single-address block (/32 or /128).
    ///
    /// Strict: printable ASCII only, no `%scope`, the address as `inet_pton` reads it, the
    /// length in plain decimal (no sign, no leading zero) within the family's range, no host
    /// bits set (`10.0.0.1/8` is refused, not rounded), and no IPv4-mapped IPv6 network
    /// (write the IPv4 block: mapped peers are judged as IPv4 anyway).
    public init(parsing text: String) throws(CIDRError) {
        let utf8 = text.utf8
        if utf8.isEmpty { throw CIDRError(.empty, "An allow-list entry is empty") }
        if utf8.prefix(Self.maximumTextLength + 1).count > Self.maximumTextLength {
            throw CIDRError(.tooLong, "An allow-list entry is longer than \(Self.maximumTextLength) characters")
        }
        if utf8.contains(where: { $0 < 0x21 || $0 > 0x7e }) {
            throw CIDRError(.invalidCharacter, "An allow-list entry contains a space, control or non-ASCII character")
        }
        if text.contains("%") {
            throw CIDRError(.scope, "\(text): an allow-list entry cannot carry a %scope")
        }
        let parts = text.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count <= 2 else { throw CIDRError(.prefixLength, "\(text): more than one '/'") }
        guard let address = IPAddress(numeric: String(parts[0])) else {
            throw CIDRError(.address, "\(text): \(parts[0]) is not a numeric IPv4 or IPv6 address")
        }
        if address.isIPv4Mapped {
            throw CIDRError(.ipv4Mapped, "\(text): write the IPv4 block; IPv4-mapped peers are judged as IPv4")
        }
        let bits = address.bytes.count * 8
        var length = bits
        if parts.count == 2 {
            let digits = parts[1]
            guard !digits.isEmpty, digits.utf8.count <= 3, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                digits == "0" || !digits.hasPrefix("0"), let value = Int(digits), value <= bits
            else {
                throw CIDRError(.prefixLength, "\(text): the prefix length must be a plain number from 0 to \(bits)")
            }
            length = value
        }
        guard let block = CIDRBlock(network: address, prefixLength: length) else {
            let network = Self.masked(address, length)
            throw CIDRError(.hostBitsSet, "\(text): host bits are set; the block is \(network)/\(length)")
        }
        self = block
    }

    /// True if `address` (an IPv4-mapped one judged as IPv4) lies in the block.
    public func contains(_ address: IPAddress) -> Bool {
        address.unwrappingIPv4Mapped.hasPrefix(network, length: prefixLength)
    }

    public var description: String { "\(network)/\(prefixLength)" }

    private static func masked(_ address: IPAddress, _ prefixLength: Int) -> IPAddress {
        var bytes = address.bytes
        for index in bytes.indices {
            let keep = min(max(prefixLength - index * 8, 0), 8)
            bytes[index] &= keep == 8 ? 0xff : ~(0xff >> UInt8(keep))
        }
        return IPAddress(bytes: bytes)!
    }
}

/// Why an allow-list entry was refused. `kind` is stable; `message` names the entry.
public struct CIDRError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        case empty
        case tooLong
        case invalidCharacter
        case scope
        case address
        case prefixLength
        case hostBitsSet
        case ipv4Mapped
    }

    public let kind: Kind
    public let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
