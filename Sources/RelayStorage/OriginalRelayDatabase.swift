import CSQLite
import Foundation
import HerdrCrypto
import RelayProtocol

/// The original relay's SQLite file (`gnachman/iterm2-companion-relay`'s Node host), read-only:
/// one table `kv(room, key, value)` where every value is JSON, per room. Only the keys that make
/// an established room are read: `verifier` (a JSON string, standard base64 of the raw 32-byte
/// Ed25519 public key), `lastActivity` (a JSON number, Unix milliseconds) and `quota`
/// (`{"dayStart": ms, "bytes": n}`). Short-lived secrets (`ticket:`, `regtoken:`,
/// `attestchallenge:`) and the rest (`pairingCycles`, `registrantKeyId`, assertion counters,
/// the `alarms` table) are left behind.
public final class OriginalRelayDatabase {
    /// A value longer than this is not one the original writes for these keys.
    public static let maximumValueLength = 4096

    public let path: String
    private let connection: SQLiteConnection

    /// Opens `path` read-only and checks it has the original's `kv` table.
    public init(path: String) throws(RelayStoreError) {
        guard FileManager.default.fileExists(atPath: path) else {
            throw RelayStoreError("\(path) does not exist")
        }
        connection = try SQLiteConnection(path: path, flags: SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX)
        self.path = path
        var columns: [String] = []
        try connection.query("PRAGMA table_info(kv)", "read the schema of \(path)") { row in
            columns.append(row.text(1))
        }
        guard ["room", "key", "value"].allSatisfy(columns.contains) else {
            throw RelayStoreError(
                "\(path) is not an original relay database: it has no kv(room, key, value) table")
        }
    }

    /// One room's rows among the keys read.
    public struct Room: Sendable, Hashable {
        public var name: String
        /// Key to value text, for `verifier`, `lastActivity` and `quota` when present.
        public var values: [String: String]

        public init(name: String, values: [String: String]) {
            self.name = name
            self.values = values
        }
    }

    /// Every room of the file that holds any row, with the rows of the keys read.
    public func rooms() throws(RelayStoreError) -> [Room] {
        var rooms: [String: [String: String]] = [:]
        try connection.query("SELECT DISTINCT room FROM kv", "list the rooms of \(path)") { row in
            rooms[row.text(0)] = [:]
        }
        try connection.query(
            "SELECT room, key, value FROM kv WHERE key IN ('verifier', 'lastActivity', 'quota')",
            "read the rooms of \(path)"
        ) { row in
            rooms[row.text(0), default: [:]][row.text(1)] = row.text(2)
        }
        return rooms.map { Room(name: $0.key, values: $0.value) }.sorted { $0.name < $1.name }
    }
}

/// What one of the original's rooms becomes here.
public enum OriginalRoomVerdict: Hashable, Sendable {
    /// An established room, ready to store.
    case established(RoomRecord)
    /// No verifier: a pairing that never finished; nothing to carry.
    case notEstablished
    /// Unused past the idle TTL: the original would reap it, so it is not carried.
    case expired
    /// A row that is not what the original writes; nothing of the room is carried.
    case refused(String)

    /// Reads one room as the original wrote it. `now` and `idleLifetime` in seconds.
    public static func of(_ room: OriginalRelayDatabase.Room, now: Int64, idleLifetime: Int64) -> OriginalRoomVerdict {
        guard RoomName.isValid(room.name) else { return .refused("the room name is not 64 lowercase hex digits") }
        for (key, value) in room.values where value.utf8.count > OriginalRelayDatabase.maximumValueLength {
            return .refused("its \(key) is longer than \(OriginalRelayDatabase.maximumValueLength) bytes")
        }
        guard let verifierText = room.values["verifier"] else { return .notEstablished }
        guard let text = RelayJSON.decoded(verifierText) as? String,
            let verifier = Data(base64Encoded: text).map(Array.init), verifier.count == Ed25519PublicKey.size,
            (try? Ed25519PublicKey(raw: verifier)) != nil
        else { return .refused("its verifier is not a JSON string of base64 of a 32-byte Ed25519 public key") }
        // A room the original established before it kept activity has none; its housekeeping
        // starts the window at the next pass, so here it starts now.
        var lastActivity = now
        if let text = room.values["lastActivity"] {
            guard let milliseconds = Self.wholeNumber(RelayJSON.decoded(text)) else {
                return .refused("its lastActivity is not a whole number of milliseconds")
            }
            lastActivity = min(now, milliseconds / 1000)
        }
        guard lastActivity >= now - idleLifetime else { return .expired }
        var record = RoomRecord(name: room.name, verifier: verifier, lastActivity: lastActivity)
        if let text = room.values["quota"] {
            guard case .object(let quota) = RelayJSON.value(text),
                let start = quota["dayStart"].flatMap(Self.wholeNumber),
                let bytes = quota["bytes"].flatMap(Self.wholeNumber)
            else { return .refused("its quota is not {\"dayStart\": milliseconds, \"bytes\": count}") }
            record.quotaWindowStart = start / 1000
            record.quotaBytes = bytes
        }
        return .established(record)
    }

    /// A decoded JSON number that is a whole number, not negative (and not a boolean).
    private static func wholeNumber(_ value: Any?) -> Int64? {
        guard let number = RelayJSON.integer(value), number >= 0 else { return nil }
        return Int64(number)
    }
}
