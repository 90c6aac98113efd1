/// The relay's store in dictionaries: nothing survives the process. For the state-machine tests
/// and for running a relay without a database file. Same semantics as `SQLiteRelayStore`: a
/// secret is valid while `now < expires`; a room is reaped when `lastActivity < idleBefore`.
/// Never throws.
public final class MemoryRelayStore: RelayStore {
    private struct SecretKey: Hashable {
        var kind: RelaySecretKind
        var digest: [UInt8]
    }

    private struct Secret {
        var room: String
        var expires: Int64
        var attachment: [UInt8]
    }

    private var rooms: [String: RoomRecord] = [:]
    private var secrets: [SecretKey: Secret] = [:]

    public init() {}

    public func room(named name: String) throws(RelayStoreError) -> RoomRecord? { rooms[name] }

    public func save(_ room: RoomRecord) throws(RelayStoreError) { rooms[room.name] = room }

    public func registerVerifier(_ verifier: [UInt8], room name: String, now: Int64) throws(RelayStoreError) -> Bool {
        var record = rooms[name] ?? RoomRecord(name: name, lastActivity: now)
        guard record.verifier == nil else { return false }
        record.verifier = verifier
        record.lastActivity = now
        rooms[name] = record
        return true
    }

    public func addQuotaBytes(_ bytes: Int64, room name: String, now: Int64, windowLength: Int64)
        throws(RelayStoreError) -> QuotaWindow?
    {
        guard var record = rooms[name] else { return nil }
        if now - record.quotaWindowStart >= windowLength {
            record.quotaWindowStart = now
            record.quotaBytes = bytes
        } else {
            let (sum, overflow) = record.quotaBytes.addingReportingOverflow(bytes)
            record.quotaBytes = overflow ? .max : sum
        }
        rooms[name] = record
        return QuotaWindow(start: record.quotaWindowStart, bytes: record.quotaBytes)
    }

    public func touchRoom(named name: String, lastActivity: Int64) throws(RelayStoreError) {
        rooms[name]?.lastActivity = lastActivity
    }

    public func deleteRoom(named name: String) throws(RelayStoreError) {
        rooms[name] = nil
        secrets = secrets.filter { $0.value.room != name }
    }

    public func addSecret(
        _ kind: RelaySecretKind, digest: [UInt8], room name: String, expires: Int64, attachment: [UInt8], now: Int64
    ) throws(RelayStoreError) {
        secrets[SecretKey(kind: kind, digest: digest)] = Secret(room: name, expires: expires, attachment: attachment)
    }

    public func takeSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        let key = SecretKey(kind: kind, digest: digest)
        guard let secret = secrets[key], secret.room == name else { return nil }
        secrets[key] = nil
        return now < secret.expires ? secret.attachment : nil
    }

    public func peekSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        guard let secret = secrets[SecretKey(kind: kind, digest: digest)], secret.room == name, now < secret.expires
        else { return nil }
        return secret.attachment
    }

    public func countSecrets(_ kind: RelaySecretKind, room name: String, now: Int64) throws(RelayStoreError) -> Int {
        secrets.count { $0.key.kind == kind && $0.value.room == name && now < $0.value.expires }
    }

    public func reap(now: Int64, idleBefore: Int64) throws(RelayStoreError) -> [String] {
        let idle = Set(rooms.values.filter { $0.lastActivity < idleBefore }.map(\.name))
        for name in idle { rooms[name] = nil }
        secrets = secrets.filter { now < $0.value.expires && !idle.contains($0.value.room) }
        return idle.sorted()
    }

    public func roomCount() throws(RelayStoreError) -> Int { rooms.count }
}
