/// How an admitted peer reached us.
public enum PeerLink: String, Hashable, Sendable, Codable {
    /// Loopback: the peer runs on this machine. The HomeLink seed calls this "cable", because
    /// usbmuxd hands the cable's connections to the phone's loopback.
    case local
    /// Private (RFC 1918), link-local or unique-local: the home network. The seed calls it "wifi".
    case homeNetwork = "home-network"
    /// The tailnet's ranges.
    case tailnet
    /// A block of an operator's allow list.
    case allowList = "allow-list"
}

/// Which peers a listener or dialer admits.
public enum PeerPolicy: Hashable, Sendable, CustomStringConvertible {
    /// The HomeLink table: loopback admitted as `.local`; private, link-local and unique-local as
    /// `.homeNetwork`; tailnet, public and malformed refused.
    case homeOnly
    /// The pairing gate (RemoteAddressGate): tailnet addresses only; loopback is refused too.
    case tailnetOnly
    /// Exactly the listed blocks, whatever their kind; an empty list admits nobody.
    case allowList([CIDRBlock])

    /// An allow list from operator text, every entry parsed by `CIDRBlock(parsing:)`.
    public static func allowList(parsing entries: [String]) throws(CIDRError) -> PeerPolicy {
        var blocks: [CIDRBlock] = []
        for entry in entries { blocks.append(try CIDRBlock(parsing: entry)) }
        return .allowList(blocks)
    }

    /// "home-only", "tailnet-only" or "allow-list".
    public var name: String {
        switch self {
        case .homeOnly: "home-only"
        case .tailnetOnly: "tailnet-only"
        case .allowList: "allow-list"
        }
    }

    public var description: String {
        switch self {
        case .homeOnly, .tailnetOnly: name
        case .allowList(let blocks): "allow-list [\(blocks.map(\.description).joined(separator: ", "))]"
        }
    }

    /// Decides on peer text as a socket reports it.
    public func decide(_ peer: String) -> PeerDecision {
        decide(PeerClassification(peer), text: peer)
    }

    /// Decides on an already classified peer; `text` is what it was classified from.
    public func decide(_ classification: PeerClassification, text: String) -> PeerDecision {
        PeerDecision(
            peer: classification.address?.description ?? PeerDecision.displayText(text),
            classification: classification, outcome: outcome(for: classification))
    }

    private func outcome(for classification: PeerClassification) -> PeerDecision.Outcome {
        guard let peer = classification.address?.address else {
            let reason = classification.malformation?.reason ?? "is not an address"
            return .refused(PeerRefusal(.malformed, "the peer address \(reason)"))
        }
        let range = classification.range.map { " (\($0.block))" } ?? ""
        let what = "\(peer) is a \(classification.kind.rawValue) address\(range)"
        switch self {
        case .homeOnly:
            switch classification.kind {
            case .loopback: return .admitted(.local)
            case .private, .linkLocal, .uniqueLocal: return .admitted(.homeNetwork)
            case .tailnet, .public, .malformed:
                return .refused(
                    PeerRefusal(.outsidePolicy, "\(what); only this machine and the home network may connect here"))
            }
        case .tailnetOnly:
            if classification.kind == .tailnet { return .admitted(.tailnet) }
            return .refused(
                PeerRefusal(
                    .outsidePolicy, "\(what); only tailnet peers (100.64.0.0/10, fd7a:115c:a1e0::/48) may connect here")
            )
        case .allowList(let blocks):
            if blocks.contains(where: { $0.contains(peer) }) { return .admitted(.allowList) }
            let count = blocks.count == 1 ? "the allowed block" : "any of the \(blocks.count) allowed blocks"
            return .refused(PeerRefusal(.notAllowListed, "\(peer) is not in \(count)"))
        }
    }
}

/// Why a peer was refused. `kind` is stable for code; `message` is a sentence for people.
public struct PeerRefusal: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable, Codable {
        /// The peer text is not an address.
        case malformed
        /// A well-formed address of a kind the policy refuses.
        case outsidePolicy = "outside-policy"
        /// In none of an allow list's blocks.
        case notAllowListed = "not-allow-listed"
        /// The connection arrived on an interface the listener refuses.
        case refusedInterface = "refused-interface"
        /// Interfaces are restricted and the connection's local address belongs to no interface.
        case unknownInterface = "unknown-interface"
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// A policy's answer for one peer: admitted as what, or refused why.
public struct PeerDecision: Hashable, Sendable, CustomStringConvertible {
    public enum Outcome: Hashable, Sendable {
        case admitted(PeerLink)
        case refused(PeerRefusal)
    }

    /// Longest peer text a decision repeats; longer text is cut and marked with "…".
    public static let maximumDisplayLength = PeerAddress.maximumTextLength

    /// The peer as judged: the canonical address text (a mapped address as its IPv4, with the
    /// scope if any), or for malformed text the text made safe to print (see `displayText`).
    public let peer: String
    public let classification: PeerClassification
    public let outcome: Outcome

    public init(peer: String, classification: PeerClassification, outcome: Outcome) {
        self.peer = peer
        self.classification = classification
        self.outcome = outcome
    }

    public var isAdmitted: Bool { link != nil }

    public var link: PeerLink? {
        if case .admitted(let link) = outcome { return link }
        return nil
    }

    public var refusal: PeerRefusal? {
        if case .refused(let refusal) = outcome { return refusal }
        return nil
    }

    /// "admitted 127.0.0.1 as local (loopback)" or "refused 100.64.77.2: …".
    public var description: String {
        switch outcome {
        case .admitted(let link): "admitted \(peer) as \(link.rawValue) (\(classification.kind.rawValue))"
        case .refused(let refusal): "refused \(peer): \(refusal.message)"
        }
    }

    /// Peer text safe to log or show: bytes outside printable ASCII become "?", and text longer
    /// than `maximumDisplayLength` is cut with "…".
    public static func displayText(_ text: String) -> String {
        let bytes = text.utf8.prefix(maximumDisplayLength + 1)
        var shown = String(
            decoding: bytes.prefix(maximumDisplayLength).map { $0 >= 0x20 && $0 <= 0x7e ? $0 : UInt8(ascii: "?") },
            as: UTF8.self)
        if bytes.count > maximumDisplayLength { shown += "…" }
        return shown
    }
}
