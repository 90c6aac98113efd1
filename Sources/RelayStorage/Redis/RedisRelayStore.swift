import Glibc
import HerdrCrypto

/// The relay's store in Redis, shared by every relay node that points at the same server and
/// database: same semantics as `SQLiteRelayStore` (the same contract tests run on both).
///
/// Keys, under `keyPrefix` (default `herdr-relay:`):
/// - `room:NAME`, a hash (`v` verifier, `a` last activity, `qs`/`qb` quota window and bytes),
///   living `idleLifetime` plus a day past its last write, and `rooms`, a sorted set of names by
///   last activity, which `reap` reads;
/// - `secret:KIND:HEX`, a hash (`room`, `exp`, `att`) living until its expiry, `secrets:NAME:KIND`,
///   a sorted set of the room's digests by expiry, and `expiry`, every secret by expiry.
///
/// Every change that reads before it writes (first-`V`-only registration, single-use secrets,
/// deleting a room with its secrets, reaping) is one Lua script, so atomic across nodes. Secrets
/// are stored by SHA-256 digest only, as in every store.
///
/// When Redis cannot be reached (refused, timed out, restarting) every call throws an
/// `unavailable` error at once; the store tries to connect again at most once a second, on a
/// thread of its own (`RedisConnector`), so a Redis that comes back is used again without a
/// restart. Not thread-safe: one owner.
public final class RedisRelayStore: RelayStore {
    public let address: RedisAddress
    private let keyPrefix: String
    private let idleLifetime: Int64
    private let connector: RedisConnector

    /// Connects now: a URL that names no reachable Redis, a wrong password or a database Redis does
    /// not have fails here, with what Redis said.
    /// - Parameters:
    ///   - idleLifetime: seconds a room lives without activity (the relay's idle TTL); its key
    ///     lives a day longer, so the relay's own reap is what removes it.
    ///   - timeoutMilliseconds: the longest a connect, a read or a write may take.
    public init(
        address: RedisAddress, idleLifetime: Int64 = 30 * 86_400, keyPrefix: String = "herdr-relay:",
        timeoutMilliseconds: Int = 500, retryMilliseconds: Int64 = 1000
    ) throws(RelayStoreError) {
        self.address = address
        self.keyPrefix = keyPrefix
        self.idleLifetime = idleLifetime
        connector = try RedisConnector(
            address: address, keyPrefix: keyPrefix, timeoutMilliseconds: timeoutMilliseconds,
            retryMilliseconds: retryMilliseconds)
    }

    // MARK: - The contract

    public func room(named name: String) throws(RelayStoreError) -> RoomRecord? {
        let reply = try run(["HMGET", key("room:", name), "v", "a", "qs", "qb"], "room")
        guard case .array(let fields) = reply, fields.count == 4 else { throw unexpected(reply, "room") }
        guard case .string = fields[1] else { return nil }  // no such hash
        var verifier: [UInt8]?
        if case .string(let bytes) = fields[0] { verifier = bytes }
        return RoomRecord(
            name: name, verifier: verifier, lastActivity: try integer(fields[1], "room"),
            quotaWindowStart: try integer(fields[2], "room"), quotaBytes: try integer(fields[3], "room"))
    }

    public func save(_ room: RoomRecord) throws(RelayStoreError) {
        _ = try script(
            .save,
            [
                room.name, room.verifier == nil ? "0" : "1", room.verifier ?? [], String(room.lastActivity),
                String(room.quotaWindowStart), String(room.quotaBytes), String(roomTTL),
            ], "save")
    }

    public func registerVerifier(_ verifier: [UInt8], room name: String, now: Int64) throws(RelayStoreError) -> Bool {
        let reply = try script(.register, [name, verifier, String(now), String(roomTTL)], "registerVerifier")
        return reply == .integer(1)
    }

    public func addQuotaBytes(_ bytes: Int64, room name: String, now: Int64, windowLength: Int64)
        throws(RelayStoreError) -> QuotaWindow?
    {
        let reply = try script(.addQuota, [name, String(bytes), String(now), String(windowLength)], "addQuotaBytes")
        switch reply {
        case .null: return nil
        case .array(let values) where values.count == 2:
            return QuotaWindow(
                start: try integer(values[0], "addQuotaBytes"), bytes: try integer(values[1], "addQuotaBytes"))
        default: throw unexpected(reply, "addQuotaBytes")
        }
    }

    public func touchRoom(named name: String, lastActivity: Int64) throws(RelayStoreError) {
        _ = try script(.touch, [name, String(lastActivity), String(roomTTL)], "touchRoom")
    }

    public func deleteRoom(named name: String) throws(RelayStoreError) {
        _ = try script(.deleteRoom, [name], "deleteRoom")
    }

    public func addSecret(
        _ kind: RelaySecretKind, digest: [UInt8], room name: String, expires: Int64, attachment: [UInt8], now: Int64
    ) throws(RelayStoreError) {
        // The key outlives its last valid second by one, then Redis drops it even if no relay reaps.
        let ttl = max(1, expires - now + 1)
        _ = try script(
            .addSecret,
            [kind.rawValue, Hex.encode(digest), name, String(expires), attachment, String(ttl), String(now)],
            "addSecret")
    }

    public func takeSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        let reply = try script(.takeSecret, [kind.rawValue, Hex.encode(digest), name, String(now)], "takeSecret")
        switch reply {
        case .null: return nil
        case .array(let values) where values.count == 1:
            guard case .string(let attachment) = values[0] else { return [] }
            return attachment
        default: throw unexpected(reply, "takeSecret")
        }
    }

    public func peekSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        let reply = try run(
            ["HMGET", key("secret:", kind.rawValue, ":", Hex.encode(digest)), "room", "exp", "att"], "peekSecret")
        guard case .array(let fields) = reply, fields.count == 3 else { throw unexpected(reply, "peekSecret") }
        guard fields[0] == .string(Array(name.utf8)), now < (try integer(fields[1], "peekSecret")) else { return nil }
        if case .string(let attachment) = fields[2] { return attachment }
        return []
    }

    public func countSecrets(_ kind: RelaySecretKind, room name: String, now: Int64) throws(RelayStoreError) -> Int {
        let reply = try run(["ZCOUNT", key("secrets:", name, ":", kind.rawValue), "(\(now)", "+inf"], "countSecrets")
        return Int(try integer(reply, "countSecrets"))
    }

    public func reap(now: Int64, idleBefore: Int64) throws(RelayStoreError) -> [String] {
        var names: [String] = []
        // Bounded batches keep each script short (Redis runs one at a time); loop until done.
        for _ in 0..<1000 {
            let reply = try script(.reap, [String(now), String(idleBefore), String(Self.reapBatch)], "reap")
            guard case .array(let values) = reply, values.count >= 1 else { throw unexpected(reply, "reap") }
            for value in values.dropFirst() {
                guard case .string(let bytes) = value else { throw unexpected(reply, "reap") }
                names.append(String(decoding: bytes, as: UTF8.self))
            }
            guard try integer(values[0], "reap") == 1 else { break }
        }
        return names.sorted()
    }

    public func roomCount() throws(RelayStoreError) -> Int {
        Int(try integer(try run(["ZCARD", key("rooms")], "roomCount"), "roomCount"))
    }

    // MARK: - Several nodes

    public var isShared: Bool { true }

    public func admitAttempt(room name: String, limit: Int, length: Int64) throws(RelayStoreError) -> Bool {
        try script(.attempt, [name, String(limit), String(max(1, length))], "admitAttempt") == .integer(1)
    }

    /// The heartbeat's value is the node's presence token (`1` without one): while the key lives,
    /// other nodes also ask Redis whether that token's subscription is still there.
    public func beat(node: String, lifetime: Int64) throws(RelayStoreError) {
        let live = try connector.live()
        _ = try run(["SET", key("node:", node), Self.mark(live), "PX", String(max(1, lifetime))], "beat", on: live)
    }

    public func acquireLease(room name: String, node: String, lifetime: Int64) throws(RelayStoreError) -> String? {
        let live = try connector.live()
        return try holder(
            try script(.acquireLease, [name, node, String(max(1, lifetime)), Self.mark(live)], "acquireLease"),
            "acquireLease")
    }

    /// Why this node has no presence in Redis (so a killed node's rooms wait for its heartbeat to
    /// lapse), when Redis refused it; nil when it has one or Redis cannot be reached.
    public var presenceRefusal: String? { (try? connector.live())?.presenceRefusal }

    /// What the node's heartbeat key holds: its presence token while the subscription is held.
    private static func mark(_ live: RedisConnector.Live) -> String {
        guard let presence = live.presence, presence.isHeld else { return "1" }
        return presence.token
    }

    public func releaseLease(room name: String, node: String) throws(RelayStoreError) {
        _ = try script(.releaseLease, [name, node], "releaseLease")
    }

    public func leaseHolder(room name: String, node: String) throws(RelayStoreError) -> String? {
        try holder(try script(.leaseHolder, [name, node], "leaseHolder"), "leaseHolder")
    }

    public func requestMove(room name: String, from holder: String) throws(RelayStoreError) {
        _ = try script(.requestMove, [name, holder], "requestMove")
    }

    public func takeMoveRequests(node: String) throws(RelayStoreError) -> [String] {
        let reply = try script(.takeMoves, [node], "takeMoveRequests")
        guard case .array(let values) = reply else { throw unexpected(reply, "takeMoveRequests") }
        var rooms: [String] = []
        for value in values {
            guard case .string(let bytes) = value else { throw unexpected(reply, "takeMoveRequests") }
            rooms.append(String(decoding: bytes, as: UTF8.self))
        }
        return Array(Set(rooms)).sorted()
    }

    private func holder(_ reply: RedisReply, _ operation: String) throws(RelayStoreError) -> String? {
        switch reply {
        case .null: return nil
        case .string(let bytes): return String(decoding: bytes, as: UTF8.self)
        default: throw unexpected(reply, operation)
        }
    }

    public func checkHealth() -> String? {
        do {
            let reply = try run(["PING"], "PING")
            return reply == .status("PONG") ? nil : "Redis at \(address) answered PING with \(reply.text)"
        } catch {
            return error.message
        }
    }

    // MARK: - Connection

    private static let reapBatch = 500

    private var roomTTL: Int64 { idleLifetime + 86_400 }

    /// One command. A lost connection, or Redis saying it cannot serve now (loading its data,
    /// a read-only replica, out of memory), is an outage; any other error reply is an error.
    private func run(_ arguments: [any RedisArgument], _ operation: String) throws(RelayStoreError) -> RedisReply {
        try run(arguments, operation, on: try connector.live())
    }

    private func run(_ arguments: [any RedisArgument], _ operation: String, on live: RedisConnector.Live)
        throws(RelayStoreError) -> RedisReply
    {
        let reply: RedisReply
        do {
            reply = try live.connection.command(arguments.map(\.redisBytes))
        } catch {
            connector.lost(error.message)
            throw error
        }
        if case .error(let message) = reply {
            let text = "Redis at \(address) refused \(operation): \(message)"
            let busy = ["LOADING", "READONLY", "MASTERDOWN", "OOM", "BUSY", "NOAUTH"].contains {
                message.hasPrefix($0)
            }
            if busy { connector.lost(text) }
            throw RelayStoreError(text, unavailable: busy)
        }
        return reply
    }

    /// Runs a script by digest, loading it again if Redis lost it (`SCRIPT FLUSH`).
    private func script(_ script: Script, _ arguments: [any RedisArgument], _ operation: String)
        throws(RelayStoreError) -> RedisReply
    {
        let live = try connector.live()
        let tail: [any RedisArgument] = ["0", keyPrefix] + arguments
        do {
            return try run(["EVALSHA", live.scripts[script] ?? []] + tail, operation, on: live)
        } catch  where error.message.contains("NOSCRIPT") {
            return try run(["EVAL", script.source] + tail, operation, on: live)
        }
    }

    private func key(_ parts: String...) -> String { keyPrefix + parts.joined() }

    private func integer(_ reply: RedisReply, _ operation: String) throws(RelayStoreError) -> Int64 {
        switch reply {
        case .integer(let value): return value
        case .string(let bytes):
            if let value = Int64(String(decoding: bytes, as: UTF8.self)) { return value }
        default: break
        }
        throw unexpected(reply, operation)
    }

    private func unexpected(_ reply: RedisReply, _ operation: String) -> RelayStoreError {
        RelayStoreError("Redis at \(address) gave \(operation) an unexpected reply: \(reply.text.prefix(200))")
    }
}

/// What a Redis command argument can be: text or raw bytes.
protocol RedisArgument {
    var redisBytes: [UInt8] { get }
}

extension String: RedisArgument {
    var redisBytes: [UInt8] { Array(utf8) }
}

extension Array: RedisArgument where Element == UInt8 {
    var redisBytes: [UInt8] { self }
}
