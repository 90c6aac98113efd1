import CSQLite

/// `SQLITE_TRANSIENT` (the C macro `((sqlite3_destructor_type)-1)` does not import): SQLite copies
/// the bound bytes before the bind call returns, so Swift's temporary buffers are safe to pass.
private var sqliteTransient: sqlite3_destructor_type { unsafeBitCast(-1, to: sqlite3_destructor_type.self) }

/// A value bound to a statement parameter.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    /// A BLOB; an empty array binds a zero-length BLOB, not NULL.
    case blob([UInt8])
    case null
}

/// One `sqlite3*`, owned by one thread at a time (opened with `SQLITE_OPEN_NOMUTEX`), with its
/// prepared statements cached per SQL text. Closed with `sqlite3_close_v2` when released.
final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]

    init(path: String, flags: Int32) throws(RelayStoreError) {
        var db: OpaquePointer?
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            // A handle is returned even when the open fails and must be closed; close_v2 on a handle
            // with no statements returns SQLITE_OK, and nothing more can be done if it did not.
            _ = sqlite3_close_v2(db)
            throw RelayStoreError("SQLite open failed for \(path): \(message)")
        }
        handle = db
    }

    deinit {
        // Finalize the statements first so the close is immediate rather than deferred.
        statements.removeAll()
        let status = sqlite3_close_v2(handle)
        assert(status == SQLITE_OK, "sqlite3_close_v2: \(status)")
    }

    /// The error of the last failed call on this connection, worded "SQLite <what> failed for <operation>: <message>".
    func error(_ what: String, _ operation: String) -> RelayStoreError {
        RelayStoreError("SQLite \(what) failed for \(operation): \(String(cString: sqlite3_errmsg(handle)))")
    }

    /// Runs one or more SQL statements that take no parameters (schema, pragmas), discarding rows.
    func executeScript(_ sql: String, _ operation: String) throws(RelayStoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard status == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            throw RelayStoreError("SQLite exec failed for \(operation): \(text)")
        }
    }

    /// Runs a cached statement to completion, discarding rows; returns the rows it changed.
    @discardableResult
    func execute(_ sql: String, _ operation: String, _ values: SQLiteValue...) throws(RelayStoreError) -> Int64 {
        try use(sql, operation, values) { statement throws(RelayStoreError) in
            while try statement.step() {}
        }
        return sqlite3_changes64(handle)
    }

    /// Runs a cached statement to completion, handing each row to `row`.
    func query(
        _ sql: String, _ operation: String, _ values: SQLiteValue...,
        row: (SQLiteStatement) throws(RelayStoreError) -> Void
    ) throws(RelayStoreError) {
        try use(sql, operation, values) { statement throws(RelayStoreError) in
            while try statement.step() { try row(statement) }
        }
    }

    /// `BEGIN IMMEDIATE` … `COMMIT`, rolled back when `body` or the commit fails.
    func transaction<Result>(
        _ operation: String, _ body: () throws(RelayStoreError) -> Result
    ) throws(RelayStoreError) -> Result {
        try execute("BEGIN IMMEDIATE", operation)
        do {
            let result = try body()
            try execute("COMMIT", operation)
            return result
        } catch {
            // The first failure is the one to report; when the rollback fails too, say so beside it.
            do {
                try execute("ROLLBACK", operation)
            } catch let rollback {
                throw RelayStoreError("\(error.message) (and the rollback failed: \(rollback.message))")
            }
            throw error
        }
    }

    /// Binds `values` to the cached statement for `sql`, runs `body`, then resets it and clears its
    /// bindings whatever happened, so it holds no lock and no data between uses.
    private func use(
        _ sql: String, _ operation: String, _ values: [SQLiteValue],
        _ body: (SQLiteStatement) throws(RelayStoreError) -> Void
    ) throws(RelayStoreError) {
        let statement = try prepared(sql, operation)
        statement.operation = operation
        do {
            for (index, value) in values.enumerated() { try statement.bind(value, at: Int32(index + 1)) }
            try body(statement)
        } catch {
            statement.resetAfterFailure()
            throw error
        }
        try statement.reset()
    }

    private func prepared(_ sql: String, _ operation: String) throws(RelayStoreError) -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        var raw: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &raw, nil)
        guard status == SQLITE_OK else {
            let failure = error("prepare", operation)
            _ = sqlite3_finalize(raw)  // nil on failure; finalize(nil) is a harmless no-op.
            throw failure
        }
        guard let raw else { throw RelayStoreError("SQLite prepare failed for \(operation): empty statement") }
        let statement = SQLiteStatement(raw, connection: self)
        statements[sql] = statement
        return statement
    }
}

/// One `sqlite3_stmt*`, prepared once and reused; finalized when released.
final class SQLiteStatement {
    private let handle: OpaquePointer
    /// Unowned: the connection owns its statements and finalizes them before it closes.
    private unowned let connection: SQLiteConnection
    /// The operation using the statement now, for error messages.
    fileprivate var operation = ""

    fileprivate init(_ handle: OpaquePointer, connection: SQLiteConnection) {
        self.handle = handle
        self.connection = connection
    }

    deinit {
        // finalize only repeats the error of the last step, which was reported when it happened.
        _ = sqlite3_finalize(handle)
    }

    fileprivate func bind(_ value: SQLiteValue, at index: Int32) throws(RelayStoreError) {
        let status: Int32
        switch value {
        case .integer(let integer):
            status = sqlite3_bind_int64(handle, index, integer)
        case .text(let text):
            status = sqlite3_bind_text64(
                handle, index, text, sqlite3_uint64(text.utf8.count), sqliteTransient, UInt8(SQLITE_UTF8))
        case .blob(let bytes) where bytes.isEmpty:
            status = sqlite3_bind_zeroblob(handle, index, 0)
        case .blob(let bytes):
            status = bytes.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(handle, index, buffer.baseAddress, sqlite3_uint64(buffer.count), sqliteTransient)
            }
        case .null:
            status = sqlite3_bind_null(handle, index)
        }
        guard status == SQLITE_OK else { throw connection.error("bind", operation) }
    }

    /// Steps once: true when a row is ready, false when the statement is done.
    fileprivate func step() throws(RelayStoreError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.error("step", operation)
        }
    }

    fileprivate func reset() throws(RelayStoreError) {
        guard sqlite3_reset(handle) == SQLITE_OK else { throw connection.error("reset", operation) }
        guard sqlite3_clear_bindings(handle) == SQLITE_OK else { throw connection.error("clear bindings", operation) }
    }

    /// After a failed step, reset returns that step's error again (already being reported), and
    /// clear_bindings cannot fail on a valid statement: both results are deliberately dropped.
    fileprivate func resetAfterFailure() {
        _ = sqlite3_reset(handle)
        _ = sqlite3_clear_bindings(handle)
    }

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// The column's bytes; NULL and a zero-length BLOB both read as empty (use `isNull` to tell them apart).
    func blob(_ column: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, column))
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}
