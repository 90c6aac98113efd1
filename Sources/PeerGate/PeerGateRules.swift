/// Everything a listener decides about an accepted connection before reading a byte: the peer
/// policy, and the interfaces it never serves (HomeLink's "never on cellular").
public struct PeerGateRules: Hashable, Sendable {
    public var policy: PeerPolicy
    /// Interface names refused whole: an exact name (`wwan0`) or a prefix ending in `*` (`wwan*`).
    public var refusedInterfaces: [String]

    public init(policy: PeerPolicy, refusedInterfaces: [String] = []) {
        self.policy = policy
        self.refusedInterfaces = refusedInterfaces
    }

    /// True when decisions need the connection's interface (some interface is refused).
    public var needsInterface: Bool { !refusedInterfaces.isEmpty }

    /// True if `name` matches a refused pattern.
    public func refuses(interface name: String) -> Bool {
        refusedInterfaces.contains { pattern in
            if pattern.hasSuffix("*") { return name.hasPrefix(pattern.dropLast()) }
            return name == pattern
        }
    }

    /// Decides on one connection: interface first, then the policy.
    ///
    /// `localInterface` is the interface holding the connection's local address, nil when none
    /// does; it is only consulted when `needsInterface`, and then an unknown interface is refused
    /// (fail closed). `localAddress` only words that refusal.
    public func decide(peer: String, localInterface: String?, localAddress: String = "") -> PeerDecision {
        let decision = policy.decide(peer)
        guard needsInterface else { return decision }
        let refusal: PeerRefusal
        if let localInterface {
            guard refuses(interface: localInterface) else { return decision }
            refusal = PeerRefusal(
                .refusedInterface, "the connection arrived on \(localInterface), which this listener refuses")
        } else {
            refusal = PeerRefusal(
                .unknownInterface,
                "the local address \(PeerDecision.displayText(localAddress)) belongs to no interface, "
                    + "and this listener refuses some interfaces")
        }
        return PeerDecision(peer: decision.peer, classification: decision.classification, outcome: .refused(refusal))
    }
}
