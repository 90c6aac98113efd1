/// A room the relay remembers across restarts. Pseudonymous by construction: the name is a
/// derived hash and the verifier a public key.
public struct RoomRecord: Sendable, Hashable {
    /// 64 lowercase hex digits.
    public var name: String
    /// V, the raw 32-byte Ed25519 public key registered once; nil while the room is in pairing mode.
    public var verifier: [UInt8]?
    /// Unix seconds of the last authenticated use (a signed join, a park, a registration). Rooms idle
    /// for 30 days are reaped.
    public var lastActivity: Int64
    /// Unix seconds when the room's current 24-hour quota window began (its first counted byte
    /// after the previous window ended, as upstream's rolling window does); 0 when none has.
    public var quotaWindowStart: Int64
    /// Bytes spliced in this room since `quotaWindowStart`.
    public var quotaBytes: Int64

    public init(
        name: String, verifier: [UInt8]? = nil, lastActivity: Int64, quotaWindowStart: Int64 = 0, quotaBytes: Int64 = 0
    ) {
        self.name = name
        self.verifier = verifier
        self.lastActivity = lastActivity
        self.quotaWindowStart = quotaWindowStart
        self.quotaBytes = quotaBytes
    }

    /// True once a verifier is registered: pairing-mode admission is closed for good.
    public var isEstablished: Bool { verifier != nil }
}

/// A room's rolling quota window as the store counts it.
public struct QuotaWindow: Sendable, Hashable {
    /// Unix seconds when the window began.
    public var start: Int64
    /// Bytes counted in it.
    public var bytes: Int64

    public init(start: Int64, bytes: Int64) {
        self.start = start
        self.bytes = bytes
    }
}

/// The single-use, short-lived secrets the relay hands out (and the assertion counters kept beside
/// them). All live 5 minutes.
public enum RelaySecretKind: String, Sendable, CaseIterable {
    /// From `/attest`, presented in the phone's Proof `{"ticket":…}`.
    case ticket
    /// Minted at phone admission, presented to `/register`.
    case registrationToken = "registration-token"
    /// From `/attest/challenge`, consumed by `/attest` or `/delete`.
    case challenge
    /// Not a secret: the last assertion counter seen from an attested key (digest: SHA-256 of the
    /// key id; attachment: the counter, 4 bytes big-endian), kept while its registration may retry.
    case assertionCounter = "assertion-counter"
}

/// A storage failure, with the operation and the engine's message.
public struct RelayStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String
    /// True when the store could not be reached at all (a networked store that is down), as
    /// opposed to a store that answered with an error: the relay refuses with `store unavailable`.
    public let isUnavailable: Bool
    public init(_ message: String, unavailable: Bool = false) {
        self.message = message
        isUnavailable = unavailable
    }
    public var description: String { message }
}

/// Where the relay keeps what must survive a restart: rooms (verifiers, activity, quotas) and
/// secrets (tickets, registration tokens, challenges).
///
/// Secrets are stored and looked up by their SHA-256 digest only: a dump of the store holds
/// nothing a client could present, and the lookup is not a timing oracle on the secret itself.
/// Not thread-safe: one owner (the relay's event-loop thread) calls it.
public protocol RelayStore: AnyObject {
    /// The room, or nil if the relay has no record of it.
    func room(named name: String) throws(RelayStoreError) -> RoomRecord?
    /// Inserts or replaces the room's record (verifier included; use `registerVerifier` to set one
    /// for the first time).
    func save(_ room: RoomRecord) throws(RelayStoreError)
    /// Sets the room's verifier if it has none, creating the room if absent, atomically. Returns
    /// false, changing nothing, when a verifier is already registered.
    func registerVerifier(_ verifier: [UInt8], room name: String, now: Int64) throws(RelayStoreError) -> Bool
    /// Adds relayed bytes to an established room's quota, atomically: a window `windowLength`
    /// seconds old or older restarts at `now` with these bytes. Returns the window after the
    /// addition; nil, changing nothing, when there is no record of the room.
    func addQuotaBytes(_ bytes: Int64, room name: String, now: Int64, windowLength: Int64) throws(RelayStoreError)
        -> QuotaWindow?
    /// Sets an existing room's last activity, leaving its verifier and quota as they are (another
    /// node may be counting them); an absent room stays absent.
    func touchRoom(named name: String, lastActivity: Int64) throws(RelayStoreError)
    /// Removes the room and every secret bound to it. Removing an absent room is not an error.
    func deleteRoom(named name: String) throws(RelayStoreError)
    /// Remembers a secret (by digest) bound to a room until `expires` (Unix seconds), with an
    /// optional attachment (e.g. the attest key id a ticket carries).
    /// `now` is the caller's clock, from which a store that expires keys itself (Redis) sets the
    /// key's lifetime.
    func addSecret(
        _ kind: RelaySecretKind, digest: [UInt8], room name: String, expires: Int64, attachment: [UInt8], now: Int64
    ) throws(RelayStoreError)
    /// Single use: when an unexpired secret of this kind and digest is bound to this room, deletes
    /// it and returns its attachment; otherwise nil (and an expired match is deleted too).
    func takeSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64) throws(RelayStoreError)
        -> [UInt8]?
    /// The attachment of an unexpired secret of this kind and digest bound to this room, leaving it
    /// in place (to check a credential before the checks that may still refuse the attempt, and
    /// take it only once the attempt succeeds); nil when there is none.
    func peekSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64) throws(RelayStoreError)
        -> [UInt8]?
    /// The room's unexpired secrets of this kind (to cap outstanding challenges).
    func countSecrets(_ kind: RelaySecretKind, room name: String, now: Int64) throws(RelayStoreError) -> Int
    /// Deletes expired secrets, and rooms (with their secrets) whose last activity is before
    /// `idleBefore`. Returns the names of the rooms removed.
    func reap(now: Int64, idleBefore: Int64) throws(RelayStoreError) -> [String]
    /// How many rooms the store holds (for /metrics).
    func roomCount() throws(RelayStoreError) -> Int
    /// Nil when the store can be used; otherwise why not (a networked store that is down). May
    /// try to reach the store again, at most about once a second.
    func checkHealth() -> String?

    // MARK: Several nodes on one store

    /// True when several relay nodes may share this store: the per-room attempt limit is then
    /// counted in it, and rooms are leased to one node at a time.
    var isShared: Bool { get }
    /// Counts an admission attempt in the room's window (of `length` milliseconds from its first
    /// attempt, by the store's clock); false once more than `limit` fall in it.
    func admitAttempt(room name: String, limit: Int, length: Int64) throws(RelayStoreError) -> Bool
    /// Says this node is alive for the next `lifetime` milliseconds; its leases are void once it
    /// has not said so for that long.
    func beat(node: String, lifetime: Int64) throws(RelayStoreError)
    /// Leases the room to `node` unless another live node holds it. Nil: granted (or already
    /// held); otherwise the holder's id.
    func acquireLease(room name: String, node: String, lifetime: Int64) throws(RelayStoreError) -> String?
    /// Gives the room's lease up if `node` holds it.
    func releaseLease(room name: String, node: String) throws(RelayStoreError)
    /// The live node other than `node` that holds the room's lease, if any.
    func leaseHolder(room name: String, node: String) throws(RelayStoreError) -> String?
    /// Asks `holder` to let the room go: sockets for it now arrive elsewhere (the balancer moved
    /// it), so the holder's sockets should follow.
    func requestMove(room name: String, from holder: String) throws(RelayStoreError)
    /// The rooms other nodes asked `node` to let go since the last call (each at most once).
    func takeMoveRequests(node: String) throws(RelayStoreError) -> [String]
}

extension RelayStore {
    /// A local store is always there: its failures are errors of one call, not an outage.
    public func checkHealth() -> String? { nil }

    /// A local store belongs to one node: no lease to hold, the limit counted in memory.
    public var isShared: Bool { false }
    public func admitAttempt(room name: String, limit: Int, length: Int64) throws(RelayStoreError) -> Bool { true }
    public func beat(node: String, lifetime: Int64) throws(RelayStoreError) {}
    public func acquireLease(room name: String, node: String, lifetime: Int64) throws(RelayStoreError) -> String? {
        nil
    }
    public func releaseLease(room name: String, node: String) throws(RelayStoreError) {}
    public func leaseHolder(room name: String, node: String) throws(RelayStoreError) -> String? { nil }
    public func requestMove(room name: String, from holder: String) throws(RelayStoreError) {}
    public func takeMoveRequests(node: String) throws(RelayStoreError) -> [String] { [] }
}
