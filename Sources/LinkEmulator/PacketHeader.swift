/// What the emulator reads of an IP packet: its addresses, transport protocol and ports. Only
/// the headers are read, with every length checked; the rest is carried as it is.
public struct PacketHeader: Hashable, Sendable {
    public let source: IPAddress
    public let destination: IPAddress
    /// The transport protocol number (6 TCP, 17 UDP, 1 ICMP, 58 ICMPv6…), after IPv6 extension headers.
    public let transport: UInt8
    /// The ports of TCP and UDP; 0 for other protocols and for IPv4 fragments after the first.
    public let sourcePort: UInt16
    public let destinationPort: UInt16

    /// IPv6 extension headers that may stand before the transport header (hop-by-hop, routing,
    /// fragment, destination options); a packet with more than `maximumExtensionHeaders` has
    /// no ports read.
    static let extensionHeaders: Set<UInt8> = [0, 43, 44, 60]
    static let maximumExtensionHeaders = 8

    /// Parses the headers of `packet`; nil when it is not a well-formed IPv4 or IPv6 packet.
    public init?(parsing packet: some RandomAccessCollection<UInt8>) {
        guard let first = packet.first else { return nil }
        let bytes = Array(packet.prefix(128))  // every header the emulator reads fits in 128 bytes
        var transportOffset: Int
        var fragmentAfterFirst = false
        switch first >> 4 {
        case 4:
            guard bytes.count >= 20 else { return nil }
            let headerLength = Int(first & 0x0f) * 4
            let totalLength = Int(bytes[2]) << 8 | Int(bytes[3])
            guard headerLength >= 20, totalLength >= headerLength, totalLength <= packet.count else { return nil }
            source = IPAddress(bytes: bytes[12..<16])!
            destination = IPAddress(bytes: bytes[16..<20])!
            transport = bytes[9]
            fragmentAfterFirst = (Int(bytes[6] & 0x1f) << 8 | Int(bytes[7])) != 0
            transportOffset = headerLength
        case 6:
            guard bytes.count >= 40 else { return nil }
            let payloadLength = Int(bytes[4]) << 8 | Int(bytes[5])
            guard 40 + payloadLength <= packet.count else { return nil }
            source = IPAddress(bytes: bytes[8..<24])!
            destination = IPAddress(bytes: bytes[24..<40])!
            var next = bytes[6]
            transportOffset = 40
            var seen = 0
            while Self.extensionHeaders.contains(next), seen < Self.maximumExtensionHeaders,
                transportOffset + 8 <= bytes.count
            {
                if next == 44 {
                    // Fragment header: 8 bytes; the ports are only in the first fragment.
                    fragmentAfterFirst =
                        (Int(bytes[transportOffset + 2]) << 5 | Int(bytes[transportOffset + 3]) >> 3) != 0
                    next = bytes[transportOffset]
                    transportOffset += 8
                } else {
                    next = bytes[transportOffset]
                    transportOffset += (Int(bytes[transportOffset + 1]) + 1) * 8
                }
                seen += 1
            }
            transport = next
            if Self.extensionHeaders.contains(next) { fragmentAfterFirst = true }  // too many to walk: no ports
        default:
            return nil
        }
        if transport == 6 || transport == 17, !fragmentAfterFirst, transportOffset + 4 <= bytes.count {
            sourcePort = UInt16(bytes[transportOffset]) << 8 | UInt16(bytes[transportOffset + 1])
            destinationPort = UInt16(bytes[transportOffset + 2]) << 8 | UInt16(bytes[transportOffset + 3])
        } else {
            sourcePort = 0
            destinationPort = 0
        }
    }

    /// The flow the packet belongs to, the same for both of its directions.
    public var flow: FlowKey { FlowKey(self) }
}

/// A flow: the 5-tuple of a packet (addresses, protocol, ports), ordered so that a packet and
/// its reply have the same key.
public struct FlowKey: Hashable, Sendable {
    public let lowAddress: IPAddress
    public let lowPort: UInt16
    public let highAddress: IPAddress
    public let highPort: UInt16
    public let transport: UInt8

    public init(_ header: PacketHeader) {
        let forward = (header.source.bytes, header.sourcePort)
        let backward = (header.destination.bytes, header.destinationPort)
        let sourceIsLow =
            forward.0.lexicographicallyPrecedes(backward.0) || (forward.0 == backward.0 && forward.1 <= backward.1)
        lowAddress = sourceIsLow ? header.source : header.destination
        lowPort = sourceIsLow ? header.sourcePort : header.destinationPort
        highAddress = sourceIsLow ? header.destination : header.source
        highPort = sourceIsLow ? header.destinationPort : header.sourcePort
        transport = header.transport
    }
}
