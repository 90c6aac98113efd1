/// An IPv4 or IPv6 address as 16 bytes (IPv4 in the low four), with its family, so routes and
/// flows of both families share one type. Parsing accepts the usual text forms only.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Family: Sendable { case ipv4, ipv6 }

    public let family: Family
    /// Big-endian, as on the wire; for IPv4 the first 12 bytes are zero.
    public let bytes: [UInt8]

    /// The address in `bytes` (4 for IPv4, 16 for IPv6); nil for another length.
    public init?(bytes: some Collection<UInt8>) {
        switch bytes.count {
        case 4:
            family = .ipv4
            self.bytes = [UInt8](repeating: 0, count: 12) + bytes
        case 16:
            family = .ipv6
            self.bytes = Array(bytes)
        default: return nil
        }
    }

    /// Parses dotted IPv4 (`100.64.1.2`) or IPv6 text (`fd12::1`, with at most one `::`, no
    /// zone, no embedded IPv4).
    public init?(_ text: some StringProtocol) {
        if text.contains(":") {
            guard let parsed = Self.parseIPv6(String(text)) else { return nil }
            family = .ipv6
            bytes = parsed
        } else {
            let parts = text.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count == 4 else { return nil }
            var octets: [UInt8] = []
            for part in parts {
                guard (1...3).contains(part.count), part.allSatisfy(\.isASCII), part.allSatisfy(\.isNumber),
                    let value = UInt8(part)
                else { return nil }
                octets.append(value)
            }
            family = .ipv4
            bytes = [UInt8](repeating: 0, count: 12) + octets
        }
    }

    /// The bits that count: 32 for IPv4, 128 for IPv6.
    public var bitCount: Int { family == .ipv4 ? 32 : 128 }

    /// The 4 or 16 bytes of the address as on the wire.
    public var wireBytes: ArraySlice<UInt8> { family == .ipv4 ? bytes[12...] : bytes[...] }

    public var description: String {
        switch family {
        case .ipv4: return bytes[12...].map(String.init).joined(separator: ".")
        case .ipv6:
            let groups = stride(from: 0, to: 16, by: 2).map { UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]) }
            // The longest run of two or more zero groups becomes "::" (RFC 5952).
            var bestStart = -1
            var bestLength = 1
            var index = 0
            while index < 8 {
                guard groups[index] == 0 else {
                    index += 1
                    continue
                }
                var end = index
                while end < 8 && groups[end] == 0 { end += 1 }
                if end - index > bestLength {
                    bestStart = index
                    bestLength = end - index
                }
                index = end
            }
            let hex = groups.map { String($0, radix: 16) }
            guard bestStart >= 0 else { return hex.joined(separator: ":") }
            let head = hex[..<bestStart].joined(separator: ":")
            let tail = hex[(bestStart + bestLength)...].joined(separator: ":")
            return head + "::" + tail
        }
    }

    private static func parseIPv6(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= 39 else { return nil }
        let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
        guard halves.count <= 2 else { return nil }
        func groups(_ part: String) -> [UInt16]? {
            if part.isEmpty { return [] }
            var result: [UInt16] = []
            for group in part.split(separator: ":", omittingEmptySubsequences: false) {
                guard (1...4).contains(group.count), let value = UInt16(group, radix: 16) else { return nil }
                result.append(value)
            }
            return result
        }
        guard let head = groups(halves[0]) else { return nil }
        var all: [UInt16]
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all = head + [UInt16](repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard head.count == 8 else { return nil }
            all = head
        }
        return all.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xff)] }
    }
}

/// An address prefix (`fd12:3456::/64`, `100.64.7.2/32`): the addresses a link owns.
public struct IPPrefix: Hashable, Sendable, CustomStringConvertible {
    public let address: IPAddress
    public let length: Int

    /// A prefix of `length` bits (0 through 32 or 128); the bits past it are cleared.
    public init?(address: IPAddress, length: Int) {
        guard (0...address.bitCount).contains(length) else { return nil }
        let offset = address.family == .ipv4 ? 96 : 0
        var masked = address.bytes
        for bit in (offset + length)..<128 { masked[bit / 8] &= ~(0x80 >> UInt8(bit % 8)) }
        self.address = IPAddress(bytes: address.family == .ipv4 ? Array(masked[12...]) : masked)!
        self.length = length
    }

    /// Parses `ADDRESS/LENGTH`, or an address alone (a host prefix).
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let address = IPAddress(parts[0]) else { return nil }
        var length = address.bitCount
        if parts.count == 2 {
            guard (1...3).contains(parts[1].count), parts[1].allSatisfy(\.isNumber), let value = Int(parts[1])
            else { return nil }
            length = value
        }
        self.init(address: address, length: length)
    }

    /// Whether `candidate` is inside the prefix (never across families).
    public func contains(_ candidate: IPAddress) -> Bool {
        guard candidate.family == address.family else { return false }
        let offset = address.family == .ipv4 ? 96 : 0
        var bit = 0
        while bit < length {
            let index = (offset + bit) / 8
            if length - bit >= 8 && bit % 8 == 0 {
                guard candidate.bytes[index] == address.bytes[index] else { return false }
                bit += 8
            } else {
                let mask = UInt8(0x80) >> UInt8((offset + bit) % 8)
                guard candidate.bytes[index] & mask == address.bytes[index] & mask else { return false }
                bit += 1
            }
        }
        return true
    }

    public var description: String { "\(address)/\(length)" }
}
