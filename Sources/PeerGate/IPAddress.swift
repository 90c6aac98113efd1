import Glibc

/// An IPv4 or IPv6 address as its network-order bytes: 4 for IPv4, 16 for IPv6.
///
/// Only ever built from bytes or from `inet_pton`, never from a guess about the text, so two
/// spellings of one address (`::1`, `0:0::1`, `::0001`) are the same value.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Family: String, Hashable, Sendable {
        case ipv4
        case ipv6
    }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public let bytes: [UInt8]

    /// An address from its network-order bytes; nil unless there are exactly 4 or 16.
    /// Sixteen bytes are always IPv6, even in the IPv4-mapped range (see `unwrappingIPv4Mapped`).
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    public var family: Family { bytes.count == 4 ? .ipv4 : .ipv6 }

    /// Parses exactly one numeric address with `inet_pton`: dotted-quad IPv4 (four parts, no
    /// leading zeros) or any IPv6 text form. Nothing is trimmed; a scope suffix is not accepted here.
    public init?(numeric text: String) {
        // inet_pton stops at a NUL; an embedded one would let "127.0.0.1\0junk" through.
        guard !text.utf8.contains(0), text.utf8.count <= PeerAddress.maximumAddressLength else { return nil }
        if let bytes = Self.presentationToNetwork(AF_INET, text, count: 4) {
            self.bytes = bytes
        } else if let bytes = Self.presentationToNetwork(AF_INET6, text, count: 16) {
            self.bytes = bytes
        } else {
            return nil
        }
    }

    /// For an IPv6 address in `::ffff:0:0/96`, the IPv4 address it carries; otherwise self.
    public var unwrappingIPv4Mapped: IPAddress {
        guard isIPv4Mapped else { return self }
        return IPAddress(bytes: Array(bytes[12..<16]))!
    }

    /// True for IPv6 addresses in `::ffff:0:0/96` (RFC 4291 §2.5.5.2).
    public var isIPv4Mapped: Bool {
        bytes.count == 16 && bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
    }

    /// True when the first `prefixLength` bits equal those of `network` (same family only).
    public func hasPrefix(_ network: IPAddress, length prefixLength: Int) -> Bool {
        guard network.bytes.count == bytes.count, prefixLength >= 0, prefixLength <= bytes.count * 8 else {
            return false
        }
        var remaining = prefixLength
        var index = 0
        while remaining > 0 {
            let mask: UInt8 = remaining >= 8 ? 0xff : ~(0xff >> UInt8(remaining))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
            remaining -= 8
            index += 1
        }
        return true
    }

    /// The canonical text (`inet_ntop`): dotted quad, or RFC 5952 style IPv6.
    public var description: String {
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let written = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &text, socklen_t(text.count))
        }
        guard written != nil else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func presentationToNetwork(_ family: Int32, _ text: String, count: Int) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        let rc = text.withCString { cString in
            buffer.withUnsafeMutableBytes { inet_pton(family, cString, $0.baseAddress) }
        }
        return rc == 1 ? buffer : nil
    }
}
