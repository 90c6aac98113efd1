import CSQLite
import Glibc

/// The relay's store in one SQLite file, in WAL mode.
///
/// - The file is created mode 0600 when absent (umask-independent); SQLite gives the `-wal` and
///   `-shm` files it creates the main file's mode, so they are 0600 as well. An existing file's mode
///   is left as the operator set it.
/// - The schema is versioned with `PRAGMA user_version` (`schemaVersion`). A file of an unknown
///   version (one a newer relay wrote) is refused before anything is written to it; a file of an
///   older version is brought up to date in one transaction when opened.
/// - A secret is valid while `now < expires`: at its `expires` second it is expired.
/// - A room is idle, and reaped, when `lastActivity < idleBefore`.
/// - `":memory:"` opens a private in-memory database (no file, no WAL), for tests.
///
/// One owner at a time (the connection is opened `SQLITE_OPEN_NOMUTEX`); not `Sendable`.
public final class SQLiteRelayStore: RelayStore {
    /// The `PRAGMA user_version` this code writes and reads.
    public static let schemaVersion: Int64 = 2

    public let path: String
    private let connection: SQLiteConnection

    public init(path: String) throws(RelayStoreError) {
        let inMemory = path == ":memory:"
        let operation = "open \(path)"
        if !inMemory { try Self.createPrivateFile(path) }
        let connection = try SQLiteConnection(
            path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
        try connection.execute("PRAGMA busy_timeout = 5000", operation)
        // Read the version before anything that could write (journal_mode=WAL rewrites the header).
        try Self.checkVersion(Self.userVersion(connection, operation), path: path)
        var journalMode = ""
        try connection.query("PRAGMA journal_mode = WAL", operation) { row in journalMode = row.text(0) }
        guard journalMode == (inMemory ? "memory" : "wal") else {
            throw RelayStoreError("SQLite journal_mode=WAL failed for \(operation): the journal mode is \(journalMode)")
        }
        try connection.executeScript("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;", operation)
        try connection.transaction(operation) { () throws(RelayStoreError) in
            // Read again under the write lock: another process may have created the schema meanwhile.
            let version = try Self.userVersion(connection, operation)
            try Self.checkVersion(version, path: path)
            if version == 0 { try connection.executeScript(Self.schema, "create schema in \(path)") }
            if version == 1 { try connection.executeScript(Self.migrationFrom1, "upgrade the schema of \(path)") }
        }
        self.path = path
        self.connection = connection
    }

    private static let schema = """
        CREATE TABLE rooms (
            name TEXT NOT NULL PRIMARY KEY,
            verifier BLOB NULL,
            last_activity INTEGER NOT NULL,
            quota_window_start INTEGER NOT NULL,
            quota_bytes INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE secrets (
            kind TEXT NOT NULL,
            digest BLOB NOT NULL,
            room TEXT NOT NULL,
            expires INTEGER NOT NULL,
            attachment BLOB NOT NULL,
            PRIMARY KEY (kind, digest)
        ) WITHOUT ROWID;
        CREATE INDEX secrets_room_kind ON secrets (room, kind);
        CREATE INDEX secrets_expires ON secrets (expires);
        PRAGMA user_version = 2;
        """

    /// Version 1 counted quotas per UTC day (`quota_day`, days since 1970); version 2 keeps the
    /// start of a rolling 24-hour window. A day's first second is a fair start for its window.
    private static let migrationFrom1 = """
        ALTER TABLE rooms RENAME COLUMN quota_day TO quota_window_start;
        UPDATE rooms SET quota_window_start = quota_window_start * 86400;
        PRAGMA user_version = 2;
        """

    private static func userVersion(_ connection: SQLiteConnection, _ operation: String) throws(RelayStoreError)
        -> Int64
    {
        var version: Int64 = 0
        try connection.query("PRAGMA user_version", operation) { row in version = row.integer(0) }
        return version
    }

    private static func checkVersion(_ version: Int64, path: String) throws(RelayStoreError) {
        guard version >= 0 && version <= schemaVersion else {
            throw RelayStoreError(
                "SQLite open failed for \(path): schema version \(version) is unknown (this relay knows "
                    + "\(schemaVersion)); a newer relay probably wrote it. The file was left untouched.")
        }
    }

    /// Creates the file 0600 if it does not exist yet, so the database never exists with a wider mode.
    private static func createPrivateFile(_ path: String) throws(RelayStoreError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            if code == EEXIST { return }
            throw RelayStoreError("create failed for \(path): \(String(cString: strerror(code)))")
        }
        defer { close(descriptor) }
        // The umask may have narrowed the mode given to open; set it exactly.
        guard fchmod(descriptor, 0o600) == 0 else {
            throw RelayStoreError("chmod 0600 failed for \(path): \(String(cString: strerror(errno)))")
        }
    }

    public func room(named name: String) throws(RelayStoreError) -> RoomRecord? {
        var record: RoomRecord?
        try connection.query(
            "SELECT verifier, last_activity, quota_window_start, quota_bytes FROM rooms WHERE name = ?1", "room",
            .text(name)
        ) { row in
            record = RoomRecord(
                name: name, verifier: row.isNull(0) ? nil : row.blob(0), lastActivity: row.integer(1),
                quotaWindowStart: row.integer(2), quotaBytes: row.integer(3))
        }
        return record
    }

    public func save(_ room: RoomRecord) throws(RelayStoreError) {
        try connection.execute(
            """
            INSERT INTO rooms (name, verifier, last_activity, quota_window_start, quota_bytes) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (name) DO UPDATE SET verifier = excluded.verifier, last_activity = excluded.last_activity,
                quota_window_start = excluded.quota_window_start, quota_bytes = excluded.quota_bytes
            """, "save",
            .text(room.name), room.verifier.map { .blob($0) } ?? .null, .integer(room.lastActivity),
            .integer(room.quotaWindowStart), .integer(room.quotaBytes))
    }

    public func registerVerifier(_ verifier: [UInt8], room name: String, now: Int64) throws(RelayStoreError) -> Bool {
        // One statement, so atomic: the update only happens while no verifier is set, and the
        // change count says whether it did.
        let changed = try connection.execute(
            """
            INSERT INTO rooms (name, verifier, last_activity, quota_window_start, quota_bytes) VALUES (?1, ?2, ?3, 0, 0)
            ON CONFLICT (name) DO UPDATE SET verifier = excluded.verifier, last_activity = excluded.last_activity
            WHERE rooms.verifier IS NULL
            """, "registerVerifier", .text(name), .blob(verifier), .integer(now))
        return changed == 1
    }

    public func addQuotaBytes(_ bytes: Int64, room name: String, now: Int64, windowLength: Int64)
        throws(RelayStoreError) -> QuotaWindow?
    {
        // One statement, so atomic; every expression reads the row as it was. The sum saturates
        // rather than overflowing into a REAL.
        var window: QuotaWindow?
        try connection.query(
            """
            UPDATE rooms SET
                quota_window_start = CASE WHEN ?3 - quota_window_start >= ?4 THEN ?3 ELSE quota_window_start END,
                quota_bytes = CASE WHEN ?3 - quota_window_start >= ?4 THEN ?2
                    WHEN quota_bytes > 9223372036854775807 - ?2 THEN 9223372036854775807
                    ELSE quota_bytes + ?2 END
            WHERE name = ?1 RETURNING quota_window_start, quota_bytes
            """, "addQuotaBytes", .text(name), .integer(bytes), .integer(now), .integer(windowLength)
        ) { row in window = QuotaWindow(start: row.integer(0), bytes: row.integer(1)) }
        return window
    }

    public func touchRoom(named name: String, lastActivity: Int64) throws(RelayStoreError) {
        try connection.execute(
            "UPDATE rooms SET last_activity = ?2 WHERE name = ?1", "touchRoom", .text(name), .integer(lastActivity))
    }

    public func deleteRoom(named name: String) throws(RelayStoreError) {
        try connection.transaction("deleteRoom") { () throws(RelayStoreError) in
            try connection.execute("DELETE FROM secrets WHERE room = ?1", "deleteRoom", .text(name))
            try connection.execute("DELETE FROM rooms WHERE name = ?1", "deleteRoom", .text(name))
        }
    }

    public func addSecret(
        _ kind: RelaySecretKind, digest: [UInt8], room name: String, expires: Int64, attachment: [UInt8], now: Int64
    ) throws(RelayStoreError) {
        try connection.execute(
            """
            INSERT INTO secrets (kind, digest, room, expires, attachment) VALUES (?1, ?2, ?3, ?4, ?5)
            ON CONFLICT (kind, digest) DO UPDATE SET room = excluded.room, expires = excluded.expires,
                attachment = excluded.attachment
            """, "addSecret", .text(kind.rawValue), .blob(digest), .text(name), .integer(expires), .blob(attachment))
    }

    public func takeSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        // One statement, so atomic: the match is deleted whether or not it has expired.
        var taken: (attachment: [UInt8], expires: Int64)?
        try connection.query(
            "DELETE FROM secrets WHERE kind = ?1 AND digest = ?2 AND room = ?3 RETURNING attachment, expires",
            "takeSecret", .text(kind.rawValue), .blob(digest), .text(name)
        ) { row in taken = (row.blob(0), row.integer(1)) }
        guard let taken, now < taken.expires else { return nil }
        return taken.attachment
    }

    public func peekSecret(_ kind: RelaySecretKind, digest: [UInt8], room name: String, now: Int64)
        throws(RelayStoreError) -> [UInt8]?
    {
        var found: [UInt8]?
        try connection.query(
            "SELECT attachment FROM secrets WHERE kind = ?1 AND digest = ?2 AND room = ?3 AND expires > ?4",
            "peekSecret",
            .text(kind.rawValue), .blob(digest), .text(name), .integer(now)
        ) { row in found = row.blob(0) }
        return found
    }

    public func countSecrets(_ kind: RelaySecretKind, room name: String, now: Int64) throws(RelayStoreError) -> Int {
        var count: Int64 = 0
        try connection.query(
            "SELECT count(*) FROM secrets WHERE room = ?1 AND kind = ?2 AND expires > ?3", "countSecrets",
            .text(name), .text(kind.rawValue), .integer(now)
        ) { row in count = row.integer(0) }
        return Int(count)
    }

    public func reap(now: Int64, idleBefore: Int64) throws(RelayStoreError) -> [String] {
        try connection.transaction("reap") { () throws(RelayStoreError) -> [String] in
            try connection.execute("DELETE FROM secrets WHERE expires <= ?1", "reap", .integer(now))
            try connection.execute(
                "DELETE FROM secrets WHERE room IN (SELECT name FROM rooms WHERE last_activity < ?1)", "reap",
                .integer(idleBefore))
            var names: [String] = []
            try connection.query(
                "DELETE FROM rooms WHERE last_activity < ?1 RETURNING name", "reap", .integer(idleBefore)
            ) { row in names.append(row.text(0)) }
            return names.sorted()
        }
    }

    public func roomCount() throws(RelayStoreError) -> Int {
        var count: Int64 = 0
        try connection.query("SELECT count(*) FROM rooms", "roomCount") { row in count = row.integer(0) }
        return Int(count)
    }
}
