import HomeRoad
import PeerGate
import PeerGateListener

/// Where and how `herdr-host run` listens for devices on the home network: the bind address and
/// port (`home-listen`, `--home-listen`), and the interfaces it never serves (`home-refuse`,
/// cellular by default: the seed's "cellular never gets a socket").
public struct HomeDoorConfiguration: Sendable, Hashable {
    /// Every address, both families, on the home road's port.
    public static let defaultListen = "[::]:\(HomeAddress.defaultPort)"
    /// Mobile-broadband interface names on Linux (ModemManager's wwan, Qualcomm's rmnet, MediaTek's
    /// ccmni) and on Apple systems (pdp_ip).
    public static let defaultRefusedInterfaces = ["wwan*", "wwp*", "rmnet*", "ccmni*", "pdp_ip*"]
    /// The value that turns the door off.
    public static let off = "off"

    /// Numeric: `::`, `0.0.0.0`, or one home-network address of this computer.
    public let bindAddress: IPAddress
    public let port: UInt16
    public let refusedInterfaces: [String]

    /// Why a `home-listen` value is unusable.
    public struct Invalid: Error, Hashable, Sendable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// Parses `[::]:4610`, `0.0.0.0:4610` or a home address with its port (`[fd00::7]:4610`,
    /// `169.254.3.1:4610`); port 0 lets the kernel pick.
    public init(listen text: String, refusedInterfaces: [String] = defaultRefusedInterfaces) throws(Invalid) {
        let shown = PeerDecision.displayText(text)
        guard text.utf8.count <= HomeAddress.maximumTextLength, let colon = text.lastIndex(of: ":") else {
            throw Invalid("home-listen must be ADDRESS:PORT, e.g. \(Self.defaultListen) (not '\(shown)')")
        }
        var host = text[..<colon]
        if host.hasPrefix("[") && host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        let portText = text[text.index(after: colon)...]
        guard let address = IPAddress(numeric: String(host)), host.contains(":") == text.hasPrefix("["),
            !portText.isEmpty, portText.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let port = UInt16(portText)
        else {
            throw Invalid(
                "home-listen must be a numeric ADDRESS:PORT ([IPv6]:PORT), e.g. \(Self.defaultListen) (not '\(shown)')")
        }
        let wildcard = address.bytes.allSatisfy { $0 == 0 }
        if !wildcard {
            do {
                _ = try HomeAddress(address: address, port: max(port, 1))
            } catch {
                throw Invalid("home-listen \(shown): \(error); listen on [::] or on a home-network address")
            }
        }
        for pattern in refusedInterfaces where pattern.isEmpty || pattern.utf8.count > 16 || pattern.contains(",") {
            throw Invalid("'\(PeerDecision.displayText(pattern))' is not an interface name or NAME* pattern")
        }
        self.bindAddress = address
        self.port = port
        self.refusedInterfaces = refusedInterfaces
    }

    /// A gated listener with these rules on the bind address and `port` (0: the kernel's pick);
    /// each admitted socket goes to `opened` as a `HomeConnection`, on the accept thread.
    func openListener(port: UInt16, opened: @escaping @Sendable (HomeConnection) -> Void) throws(ListenerError)
        -> GatedListener
    {
        try GatedListener(GatedListener.Configuration(bindAddress: bindAddress.description, port: port, rules: rules)) {
            admitted in
            let fd = admitted.takeDescriptor()
            guard fd >= 0, let connection = try? HomeConnection(socket: fd) else { return }
            opened(connection)
        }
    }

    /// The gate's rules: home-only, the refused interfaces.
    public var rules: PeerGateRules { PeerGateRules(policy: .homeOnly, refusedInterfaces: refusedInterfaces) }

    /// `[::]:4610`.
    public var listenText: String {
        bindAddress.family == .ipv4 ? "\(bindAddress):\(port)" : "[\(bindAddress)]:\(port)"
    }

    /// The addresses a device may dial, on `port` (the bound one): the bind address when it is one,
    /// else this computer's home-network addresses on interfaces the door serves (IPv4 only on
    /// `0.0.0.0`), at most `HomeAddress.maximumCount`.
    public func advertised(port: UInt16, interfaces: InterfaceAddresses?) -> [HomeAddress] {
        guard port > 0 else { return [] }
        guard bindAddress.bytes.allSatisfy({ $0 == 0 }) else {
            return (try? HomeAddress(address: bindAddress, port: port)).map { [$0] } ?? []
        }
        var found: [HomeAddress] = []
        for entry in interfaces?.entries ?? [] where !rules.refuses(interface: entry.name) {
            if bindAddress.family == .ipv4 && entry.address.family == .ipv6 { continue }
            guard let address = try? HomeAddress(address: entry.address, port: port), !found.contains(address) else {
                continue
            }
            found.append(address)
        }
        // Unique-local and link-local first: they survive a router's DHCP renumbering.
        let stable = found.filter { PeerKind($0.address) != .private }
        return Array((stable + found.filter { PeerKind($0.address) == .private }).prefix(HomeAddress.maximumCount))
    }
}
