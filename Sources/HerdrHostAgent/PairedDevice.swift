import Foundation
import HerdrCrypto

/// A device paired with this computer through a relay, as `devices.json` keeps it. Nothing here
/// is secret: the room secret is in `room-secrets.json`.
public struct PairedDevice: Codable, Hashable, Sendable, Identifiable {
    public var id: UUID
    /// The name the device gave, printable, at most 64 characters.
    public var name: String
    /// The device's Noise static public key, pinned at confirmation (standard base64).
    public var deviceKey: String
    /// The pairing id (`pid`) of the code the device scanned.
    public var pairingID: String
    /// The relay room, 64 lowercase hex.
    public var room: String
    /// The relay's origin; nil for a device paired on the home network only (never parked for).
    public var relay: String?
    /// The device registered the room's verifier: only signed joins from now on.
    public var established: Bool
    public var pairedAt: Date
    /// The last time the device completed a handshake with this computer.
    public var lastSeen: Date?
    /// Set when the relay said the pairing is gone (deleted or expired on the other side), or
    /// while `unpair` removes it here (`unpairingHere`): the agent no longer parks for it.
    public var ended: String?

    /// `ended` while `herdr-host unpair` deletes the room: the agent then knows the room's end is
    /// this computer's doing.
    public static let unpairingHere = "being unpaired on this computer"
    /// The `herdr-host pair` process that is still finishing this pairing; the agent leaves the
    /// room to it while it runs.
    public var finishingProcess: HeldBy?

    /// A process, named so that a reused PID is not mistaken for it.
    public struct HeldBy: Codable, Hashable, Sendable {
        public var pid: Int32
        public var startTime: UInt64
        public var bootID: String
    }

    public init(
        id: UUID = UUID(), name: String, deviceKey: [UInt8], pairingID: String, room: String, relay: String?,
        established: Bool, pairedAt: Date, lastSeen: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.deviceKey = Data(deviceKey).base64EncodedString()
        self.pairingID = pairingID
        self.room = room
        self.relay = relay
        self.established = established
        self.pairedAt = pairedAt
        self.lastSeen = lastSeen
    }

    /// The pinned key's bytes.
    public var deviceKeyBytes: [UInt8] { Data(base64Encoded: deviceKey).map { [UInt8]($0) } ?? [] }

    /// `SHA256:` and the unpadded base64 of the key's SHA-256, as ssh shows keys.
    public var fingerprint: String { Self.fingerprint(of: deviceKeyBytes) }

    public static func fingerprint(of key: [UInt8]) -> String {
        "SHA256:" + Data(SHA256.hash(key)).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }
}
