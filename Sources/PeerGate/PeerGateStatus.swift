import Foundation

/// The status document of a gated listener: how the current link arrived, how many callers were
/// admitted and refused, and the last refused peer. A refusal is counted and shown, never
/// dropped, and never overwrites the current link.
///
/// Encoded as JSON with every key present (`null` when unknown), keys sorted, times in ISO 8601 UTC.
public struct PeerGateStatus: Codable, Hashable, Sendable {
    /// The most recently admitted peer.
    public struct Link: Codable, Hashable, Sendable {
        public var peer: String
        public var link: PeerLink
        public var kind: PeerKind
        /// The interface holding the connection's local address, when the listener looked it up.
        public var interface: String?
        public var at: Date

        public init(peer: String, link: PeerLink, kind: PeerKind, interface: String?, at: Date) {
            self.peer = peer
            self.link = link
            self.kind = kind
            self.interface = interface
            self.at = at
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(peer, forKey: .peer)
            try container.encode(link, forKey: .link)
            try container.encode(kind, forKey: .kind)
            try container.encode(interface, forKey: .interface)
            try container.encode(at, forKey: .at)
        }
    }

    /// The most recently refused peer and why.
    public struct RefusedPeer: Codable, Hashable, Sendable {
        public var peer: String
        public var kind: PeerKind
        public var reason: PeerRefusal.Kind
        /// The refusal in words.
        public var message: String
        public var interface: String?
        public var at: Date

        public init(
            peer: String, kind: PeerKind, reason: PeerRefusal.Kind, message: String, interface: String?, at: Date
        ) {
            self.peer = peer
            self.kind = kind
            self.reason = reason
            self.message = message
            self.interface = interface
            self.at = at
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(peer, forKey: .peer)
            try container.encode(kind, forKey: .kind)
            try container.encode(reason, forKey: .reason)
            try container.encode(message, forKey: .message)
            try container.encode(interface, forKey: .interface)
            try container.encode(at, forKey: .at)
        }
    }

    /// The policy's name: "home-only", "tailnet-only" or "allow-list".
    public var policy: String
    public var refusedInterfaces: [String]
    public var currentLink: Link?
    public var admittedCount: Int
    public var refusedCount: Int
    public var lastRefusedPeer: RefusedPeer?

    /// A fresh document: nothing admitted or refused yet.
    public init(rules: PeerGateRules) {
        policy = rules.policy.name
        refusedInterfaces = rules.refusedInterfaces
        currentLink = nil
        admittedCount = 0
        refusedCount = 0
        lastRefusedPeer = nil
    }

    /// Records one decision: an admission becomes the current link; a refusal raises the count
    /// and replaces the last refused peer.
    public mutating func record(_ decision: PeerDecision, interface: String?, at time: Date) {
        switch decision.outcome {
        case .admitted(let link):
            admittedCount += 1
            currentLink = Link(
                peer: decision.peer, link: link, kind: decision.classification.kind, interface: interface, at: time)
        case .refused(let refusal):
            refusedCount += 1
            lastRefusedPeer = RefusedPeer(
                peer: decision.peer, kind: decision.classification.kind, reason: refusal.kind,
                message: refusal.message, interface: interface, at: time)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(policy, forKey: .policy)
        try container.encode(refusedInterfaces, forKey: .refusedInterfaces)
        try container.encode(currentLink, forKey: .currentLink)
        try container.encode(admittedCount, forKey: .admittedCount)
        try container.encode(refusedCount, forKey: .refusedCount)
        try container.encode(lastRefusedPeer, forKey: .lastRefusedPeer)
    }

    /// The document as UTF-8 JSON: sorted keys, ISO 8601 times, no trailing newline.
    public func json() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        // Every member is a string, number, enum, date or array of strings: encoding cannot fail.
        return Array((try? encoder.encode(self)) ?? Data("{}".utf8))
    }

    /// A decoder matching `json()`.
    public static func decode(_ json: [UInt8]) throws -> PeerGateStatus {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(PeerGateStatus.self, from: Data(json))
    }
}
