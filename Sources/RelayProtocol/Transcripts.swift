import HerdrCrypto

/// The two roles that join a room.
public enum RelayRole: String, Sendable, CaseIterable {
    /// The computer's place in a room: the original protocol's `mac` (the wire string).
    case computer = "mac"
    /// The device's place: the original protocol's `phone`.
    case device = "phone"

    /// The role's byte in the join transcript: mac = 0x01, phone = 0x02.
    public var transcriptByte: UInt8 {
        switch self {
        case .computer: 0x01
        case .device: 0x02
        }
    }
}

/// What relay clients sign and the relay verifies (interop-facts §5). Each binds the protocol
/// version, the room and the relay's origin, so a signature cannot be replayed into another room,
/// role or relay; the join's fresh nonce keeps it from being replayed at all.
public enum RelayTranscript {
    /// The protocol version byte, the first field of every transcript.
    public static let version: UInt8 = 0x01
    public static let joinDomain = "iterm2-relay-join"
    public static let deleteDomain = "iterm2-relay-delete"
    public static let attestDomain = "iterm2-relay-attest"

    /// The established-room join, Ed25519-signed with the join key:
    /// `canonical("iterm2-relay-join", [0x01, role, nonce, utf8(room), utf8(origin)])`.
    public static func join(role: RelayRole, nonce: [UInt8], room: String, origin: String) -> [UInt8] {
        Canonical.encode(
            domain: joinDomain, fields: [[version], [role.transcriptByte], nonce, Array(room.utf8), Array(origin.utf8)])
    }

    /// The room deletion, Ed25519-signed with the join key:
    /// `canonical("iterm2-relay-delete", [0x01, challenge, utf8(room), utf8(origin)])`.
    public static func delete(challenge: [UInt8], room: String, origin: String) -> [UInt8] {
        Canonical.encode(domain: deleteDomain, fields: [[version], challenge, Array(room.utf8), Array(origin.utf8)])
    }

    /// The App Attest client data hash: `SHA256(canonical("iterm2-relay-attest", [challenge, utf8(origin)]))`.
    public static func attestClientDataHash(challenge: [UInt8], origin: String) -> [UInt8] {
        SHA256.hash(Canonical.encode(domain: attestDomain, fields: [challenge, Array(origin.utf8)]))
    }
}
