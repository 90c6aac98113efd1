import Glibc
import PeerGate

/// The machine's interface addresses (a getifaddrs snapshot) and which interface holds a
/// connection's local address: the analog of knowing a connection came in over cellular.
///
/// Linux is a weak-host system: a packet for wlan0's address may arrive on any interface and is
/// still delivered. What this finds is the interface that owns the local address the peer
/// connected to, which is the interface the peer reached when routing is ordinary.
public struct InterfaceAddresses: Hashable, Sendable {
    public struct Entry: Hashable, Sendable {
        public var name: String
        /// The interface's address (a link-local IPv6 one together with `scopeID`).
        public var address: IPAddress
        /// The length of the interface's network prefix (from its netmask).
        public var prefixLength: Int
        /// The interface index for link-local IPv6 addresses, 0 otherwise.
        public var scopeID: UInt32

        public init(name: String, address: IPAddress, prefixLength: Int, scopeID: UInt32 = 0) {
            self.name = name
            self.address = address
            self.prefixLength = prefixLength
            self.scopeID = scopeID
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    /// The addresses of every interface now (IPv4 and IPv6), or nil if getifaddrs fails.
    public static func current() -> InterfaceAddresses? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var entries: [Entry] = []
        var cursor = list
        while let item = cursor {
            defer { cursor = item.pointee.ifa_next }
            guard let addressPointer = item.pointee.ifa_addr, let name = item.pointee.ifa_name,
                let address = SocketAddress(copying: addressPointer), let ip = address.ip
            else { continue }
            var prefixLength = ip.bytes.count * 8
            if let maskPointer = item.pointee.ifa_netmask, let mask = SocketAddress(copying: maskPointer)?.ip,
                mask.family == ip.family
            {
                prefixLength = mask.bytes.reduce(0) { $0 + $1.nonzeroBitCount }
            }
            entries.append(
                Entry(name: String(cString: name), address: ip, prefixLength: prefixLength, scopeID: address.scopeID))
        }
        return InterfaceAddresses(entries: entries)
    }

    /// The interface holding `address` (an IPv4-mapped one judged as IPv4): an exact address match
    /// first (with the scope for link-local IPv6); failing that, the interface whose network holds
    /// it with the longest prefix (127.0.0.2 is lo's, though lo carries 127.0.0.1/8). Nil if none.
    public func interface(holding address: IPAddress, scopeID: UInt32 = 0) -> String? {
        let judged = address.unwrappingIPv4Mapped
        let scoped = judged.family == .ipv6 && PeerKind(judged) == .linkLocal
        func sameScope(_ entry: Entry) -> Bool { !scoped || scopeID == 0 || entry.scopeID == scopeID }
        if let exact = entries.first(where: { $0.address == judged && sameScope($0) }) { return exact.name }
        let holding = entries.filter { entry in
            guard sameScope(entry), let network = CIDRBlock(holding: entry.address, prefixLength: entry.prefixLength)
            else {
                return false
            }
            return network.contains(judged)
        }
        return holding.max { $0.prefixLength < $1.prefixLength }?.name
    }
}
