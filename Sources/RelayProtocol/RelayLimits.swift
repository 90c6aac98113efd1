/// The relay protocol's numbers (interop-facts §5). Servers may be configured tighter or looser;
/// these are the defaults of the original and of `herdr-relay`.
public enum RelayLimits {
    /// A control (admission) frame before admission.
    public static let preAdmissionFrameSize = 8 * 1024
    /// A spliced frame after admission.
    public static let frameSize = 256 * 1024
    /// An HTTP request body.
    public static let httpBodySize = 64 * 1024
    /// Tickets, registration tokens and challenges, in seconds.
    public static let secretLifetime: Int64 = 5 * 60
    /// Outstanding `/attest/challenge` challenges per room.
    public static let outstandingChallenges = 16
    /// Sockets awaiting admission per room; a fifth drops the oldest.
    public static let pendingPerRoom = 4
    /// Time to complete admission, in seconds.
    public static let admissionTimeout: Int64 = 15
    /// Proofs per room per window.
    public static let proofsPerWindow = 40
    /// The proof window, in seconds.
    public static let proofWindow: Int64 = 10
    /// Phone-slot takes per Mac park in a pairing room; one more kills the room.
    public static let pairingCycles = 8
    /// Frames per second per room.
    public static let framesPerSecond = 500
    /// Spliced bytes per room per UTC day.
    public static let bytesPerDay: Int64 = 512 * 1024 * 1024
    /// Idle established rooms are reaped after this many seconds (30 days).
    public static let idleRoomLifetime: Int64 = 30 * 24 * 3600
    /// Per client address: WebSocket upgrades per minute.
    public static let upgradesPerMinute = 120
    /// Per client address: open sockets.
    public static let socketsPerAddress = 64
    /// WebSockets one relay process holds at most (upstream's single-process cap).
    public static let maximumSockets = 200_000
    /// Rooms with sockets one relay process holds at most.
    public static let maximumRooms = 200_000
    /// Per client address: `/attest*` requests per minute.
    public static let attestRequestsPerMinute = 30
    /// The relay pings every this many seconds and drops a socket that did not answer the last one.
    public static let pingInterval: Int64 = 30
    /// Clients ping every this many seconds…
    public static let clientPingInterval: Int64 = 15
    /// …and give up on a pong after this many.
    public static let clientPongTimeout: Int64 = 10
    /// Random sizes: join nonce and attest challenge, registration token and ticket.
    public static let nonceSize = 32
    public static let tokenSize = 24
    /// The fixed User-Agent of companion clients.
    public static let userAgent = "iTerm2Companion"
    /// The room header.
    public static let roomHeader = "x-relay-room"
}
