import CSQLite
import Foundation

/// A database file in the original relay's format, written by hand with the sqlite3 library from
/// the schema its operators know: `kv(room TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
/// PRIMARY KEY (room, key))` and `alarms(room TEXT PRIMARY KEY, at INTEGER NOT NULL)`, in WAL
/// mode, every value JSON text. For the import tests only.
public final class OriginalRelayFile {
    public let path: String
    private var handle: OpaquePointer?

    public init(path: String) throws {
        self.path = path
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
            throw OriginalRelayFileError("open \(path): \(message)")
        }
        try execute(
            """
            PRAGMA journal_mode = WAL;
            CREATE TABLE IF NOT EXISTS kv (room TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
                PRIMARY KEY (room, key));
            CREATE TABLE IF NOT EXISTS alarms (room TEXT PRIMARY KEY, at INTEGER NOT NULL);
            """)
    }

    deinit { close() }

    /// Closes the file (its WAL checkpointed), as the original does on a clean stop.
    public func close() {
        guard let handle else { return }
        sqlite3_close_v2(handle)
        self.handle = nil
    }

    /// One row; `value` is JSON text, written as given.
    public func put(room: String, key: String, value: String) throws {
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(
                handle, "INSERT OR REPLACE INTO kv (room, key, value) VALUES (?1, ?2, ?3)", -1, &statement, nil)
                == SQLITE_OK
        else { throw OriginalRelayFileError("prepare: \(message)") }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, text) in [room, key, value].enumerated() {
            guard sqlite3_bind_text(statement, Int32(index + 1), text, -1, transient) == SQLITE_OK else {
                throw OriginalRelayFileError("bind: \(message)")
            }
        }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw OriginalRelayFileError("insert: \(message)") }
    }

    /// The housekeeping timer of a room (Unix milliseconds).
    public func putAlarm(room: String, at milliseconds: Int64) throws {
        try execute("INSERT OR REPLACE INTO alarms (room, at) VALUES ('\(room)', \(milliseconds))")
    }

    /// An established room the way the original stores one: `verifier` (a JSON string of standard
    /// base64), `lastActivity` (Unix milliseconds) and, when given, `quota`.
    public func putEstablishedRoom(
        _ room: String, verifier: [UInt8], lastActivityMilliseconds: Int64?,
        quota: (dayStart: Int64, bytes: Int64)? = nil
    ) throws {
        try put(room: room, key: "verifier", value: "\"\(Data(verifier).base64EncodedString())\"")
        if let lastActivityMilliseconds {
            try put(room: room, key: "lastActivity", value: String(lastActivityMilliseconds))
        }
        if let quota {
            try put(room: room, key: "quota", value: "{\"dayStart\":\(quota.dayStart),\"bytes\":\(quota.bytes)}")
        }
    }

    public func execute(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        defer { sqlite3_free(error) }
        guard sqlite3_exec(handle, sql, nil, nil, &error) == SQLITE_OK else {
            throw OriginalRelayFileError("exec: \(error.map { String(cString: $0) } ?? message)")
        }
    }

    private var message: String { handle.map { String(cString: sqlite3_errmsg($0)) } ?? "no handle" }
}

public struct OriginalRelayFileError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
