import AppAttest
import RelayProtocol
import WebClient

/// How a relay behaves: its origin, attestation mode and every limit (defaults: interop-facts §5).
public struct RelayConfiguration: Sendable {
    /// The origin clients believe they talk to (`https://host[:port]`), bound into every join and
    /// delete signature; a signature made for another origin is refused.
    public var origin: String
    /// Whether phones must attest before pairing. Only the exact text `false` turns it off.
    public var attestationRequired: Bool
    /// The App Attest evidence accepted while attestation is required: the app id, the
    /// environment and the trust anchor (`APP_ID`, `APPATTEST_ENV`, `APPATTEST_ROOT_PEM`).
    public var appAttest = AppAttestPolicy.iTerm2Buddy
    /// The web client this relay serves at its origin (`--web-client`), or nil: then, as the
    /// original relay, every request with an `Origin` is refused. With it, requests whose
    /// `Origin` is exactly `origin` are admitted (the room may come in the query), and GETs
    /// without a room are answered from these files.
    public var webClient: WebClientFiles?

    public var preAdmissionFrameSize = RelayLimits.preAdmissionFrameSize
    public var frameSize = RelayLimits.frameSize
    public var httpBodySize = RelayLimits.httpBodySize
    public var secretLifetime = RelayLimits.secretLifetime
    public var outstandingChallenges = RelayLimits.outstandingChallenges
    public var pendingPerRoom = RelayLimits.pendingPerRoom
    /// Milliseconds to complete admission.
    public var admissionTimeout = RelayLimits.admissionTimeout * 1000
    public var proofsPerWindow = RelayLimits.proofsPerWindow
    /// Milliseconds.
    public var proofWindow = RelayLimits.proofWindow * 1000
    public var pairingCycles = RelayLimits.pairingCycles
    public var framesPerSecond = RelayLimits.framesPerSecond
    public var bytesPerDay = RelayLimits.bytesPerDay
    /// Seconds.
    public var idleRoomLifetime = RelayLimits.idleRoomLifetime
    public var upgradesPerMinute = RelayLimits.upgradesPerMinute
    public var socketsPerAddress = RelayLimits.socketsPerAddress
    /// WebSockets the relay holds at most (503 `capacity` beyond).
    public var maximumSockets = RelayLimits.maximumSockets
    /// Rooms with sockets the relay holds at most; a request for a new one beyond is 503 `capacity`.
    public var maximumRooms = RelayLimits.maximumRooms
    public var attestRequestsPerMinute = RelayLimits.attestRequestsPerMinute
    /// Milliseconds between the relay's pings.
    public var pingInterval = RelayLimits.pingInterval * 1000
    /// Milliseconds between store maintenance passes (reaping, quota flushes).
    public var maintenanceInterval: Int64 = 10_000
    /// Milliseconds a node's room leases outlive its last heartbeat in a shared store: how long
    /// the rooms of a node that died stay closed to the others (a heartbeat goes every fifth).
    public var leaseLifetime: Int64 = 5000
    /// Milliseconds between quota flushes to a shared store, so a node that dies loses at most
    /// this much of its rooms' counted traffic.
    public var sharedQuotaFlushInterval: Int64 = 1000

    public init(origin: String, attestationRequired: Bool) {
        self.origin = origin
        self.attestationRequired = attestationRequired
    }

    /// `ATTEST_REQUIRED` fails closed: only the exact string `false` disables attestation; unset,
    /// empty, `False`, `0` or `no` all mean required, so one botched edit cannot open a relay.
    public static func attestationRequired(setting value: String?) -> Bool { value != "false" }
}
