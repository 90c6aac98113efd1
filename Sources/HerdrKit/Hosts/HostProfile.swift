import Foundation
import PeerGate

/// One computer the user connects to: where it is, who to log in as, and which herdr session to open.
///
/// Passwords are never part of a profile; they live in ``SecretStore``.
public struct HostProfile: Codable, Identifiable, Hashable, Sendable {
    /// The default SSH port.
    public static let defaultPort = 22

    /// A stable identity, also the key for the profile's password.
    public var id: UUID
    /// The display name.
    public var name: String
    /// A MagicDNS name, an FQDN or an address such as `100.x.y.z`.
    public var hostname: String
    /// The SSH port, 22 unless the host says otherwise.
    public var port: Int
    /// The account to log in as.
    public var username: String
    /// How the attach command is spelled on this host.
    public var platform: HostPlatform
    /// The herdr session to attach to; nil means herdr's default session.
    public var herdrSession: String?
    /// A command run instead of ``HerdrCommand/attach(platform:session:)``; nil means the attach command.
    public var remoteCommand: String?
    /// Private key files (absolute paths) tried after the device key and before ssh-agent's keys,
    /// as `ssh -i` or `IdentityFile` would; empty for most hosts.
    public var identityFiles: [String]
    /// Set for a computer paired with herdr-host (`herdr://companion`): reached over the Noise
    /// roads (the home network, the relay) with the end-to-end channel instead of SSH. `hostname`
    /// and `port` then name the relay. Kept under the key `relay` in hosts.json.
    public var companion: PairedComputer?

    /// Creates a profile; everything but the name, hostname and user has a default.
    public init(
        id: UUID = UUID(),
        name: String,
        hostname: String,
        port: Int = HostProfile.defaultPort,
        username: String,
        platform: HostPlatform = .unix,
        herdrSession: String? = nil,
        remoteCommand: String? = nil,
        identityFiles: [String] = [],
        companion: PairedComputer? = nil
    ) {
        self.id = id
        self.name = name
        self.hostname = hostname
        self.port = port
        self.username = username
        self.platform = platform
        self.herdrSession = herdrSession
        self.remoteCommand = remoteCommand
        self.identityFiles = identityFiles
        self.companion = companion
    }

    /// The road to the host, for listings: `ssh`, `relay` (a companion host with a relay), or
    /// `home` (one paired on the home network alone).
    public var road: String {
        guard let companion else { return "ssh" }
        return companion.relay == nil ? "home" : "relay"
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, hostname, port, username, platform, herdrSession, remoteCommand, identityFiles
        case companion = "relay"
    }

    /// Decodes a profile, filling in the defaults for keys that older or hand-written files leave out.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(UUID.self, forKey: .id)
        name = try container.decode(String.self, forKey: .name)
        hostname = try container.decode(String.self, forKey: .hostname)
        port = try container.decodeIfPresent(Int.self, forKey: .port) ?? Self.defaultPort
        username = try container.decode(String.self, forKey: .username)
        platform = try container.decodeIfPresent(HostPlatform.self, forKey: .platform) ?? .unix
        herdrSession = try container.decodeIfPresent(String.self, forKey: .herdrSession)
        remoteCommand = try container.decodeIfPresent(String.self, forKey: .remoteCommand)
        identityFiles = try container.decodeIfPresent([String].self, forKey: .identityFiles) ?? []
        companion = try container.decodeIfPresent(PairedComputer.self, forKey: .companion)
    }
}

/// What this device keeps of a computer paired with herdr-host, to reach it over the Noise roads:
/// the relay's origin (if it has one), the computer's Noise static public key and the pairing id
/// from its `herdr://companion` code, its home addresses. The room secret is a secret and
/// lives in `secrets.json`; the device's own static key in `companion_key`.
public struct PairedComputer: Codable, Hashable, Sendable {
    /// `https://host[:port]`; nil for a computer paired on the home network only.
    public var relay: String?
    /// The computer's static public key, unpadded base64url (`rs`).
    public var computerKey: String
    /// The pairing id, as the code spells it (`pid`).
    public var pairingID: String
    /// Whether the relay took the room's verifier; until then each connection registers it.
    public var registered: Bool
    /// The name this device paired under, sent to the computer on every connection (nil for
    /// pairings older than the field: the computer name is then used).
    public var deviceName: String?
    /// Where the computer's home door listens, as it last said (the code's `home=`, then every
    /// established channel).
    public var home: [HomeAddress]
    /// When a session last got through over the home network, and over the relay.
    public var homeLastWorked: Date?
    public var relayLastWorked: Date?

    public init(
        relay: String?, computerKey: String, pairingID: String, registered: Bool, deviceName: String? = nil,
        home: [HomeAddress] = []
    ) {
        self.relay = relay
        self.computerKey = computerKey
        self.pairingID = pairingID
        self.registered = registered
        self.deviceName = deviceName
        self.home = home
    }

    private enum CodingKeys: String, CodingKey {
        case relay, computerKey, pairingID, registered, deviceName, home, homeLastWorked, relayLastWorked
    }

    /// Decodes a road; pairings older than the home road have no `home`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        relay = try container.decodeIfPresent(String.self, forKey: .relay)
        computerKey = try container.decode(String.self, forKey: .computerKey)
        pairingID = try container.decode(String.self, forKey: .pairingID)
        registered = try container.decode(Bool.self, forKey: .registered)
        deviceName = try container.decodeIfPresent(String.self, forKey: .deviceName)
        home = try container.decodeIfPresent([HomeAddress].self, forKey: .home) ?? []
        homeLastWorked = try container.decodeIfPresent(Date.self, forKey: .homeLastWorked)
        relayLastWorked = try container.decodeIfPresent(Date.self, forKey: .relayLastWorked)
    }
}
