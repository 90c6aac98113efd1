import CSQLite
import Foundation
import Glibc
import TestSupport
import Testing

@testable import RelayStorage

/// What only the file-backed store promises: durability, file mode, WAL, versioning, corruption.
@Suite struct SQLiteRelayStoreTests {
    let directory: TemporaryDirectory
    var path: String { directory.file("relay.db").path }

    init() throws { directory = try TemporaryDirectory(prefix: "relay-sqlite-") }

    func bytes(_ path: String) throws -> [UInt8] { try [UInt8](Data(contentsOf: URL(fileURLWithPath: path))) }

    func mode(_ path: String) -> mode_t? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    @Test func survivesARestart() throws {
        let verifier = [UInt8](repeating: 5, count: 32)
        do {
            let store = try SQLiteRelayStore(path: path)
            #expect(try store.registerVerifier(verifier, room: roomA, now: 10))
            try store.save(RoomRecord(name: roomB, lastActivity: 20, quotaWindowStart: 3, quotaBytes: 4))
            try store.addSecret(.ticket, digest: digest(1), room: roomA, expires: 100, attachment: [42], now: 0)
        }
        let store = try SQLiteRelayStore(path: path)
        #expect(try store.room(named: roomA) == RoomRecord(name: roomA, verifier: verifier, lastActivity: 10))
        #expect(
            try store.room(named: roomB)
                == RoomRecord(name: roomB, lastActivity: 20, quotaWindowStart: 3, quotaBytes: 4))
        #expect(try !store.registerVerifier([6], room: roomA, now: 30))
        #expect(try store.takeSecret(.ticket, digest: digest(1), room: roomA, now: 50) == [42])
        #expect(try store.roomCount() == 2)
    }

    @Test func fileIsPrivateAndInWALMode() throws {
        let store = try SQLiteRelayStore(path: path)
        try store.save(RoomRecord(name: roomA, lastActivity: 1))
        #expect(mode(path) == 0o600)
        // SQLite gives the WAL and shared-memory files the main file's mode.
        #expect(mode(path + "-wal") == 0o600)
        #expect(mode(path + "-shm") == 0o600)
        // Header bytes 18 and 19 (file format write/read versions) are 2 in WAL mode.
        let header = try bytes(path)
        #expect(header.starts(with: Array("SQLite format 3\0".utf8)))
        #expect(header[18] == 2 && header[19] == 2)
    }

    @Test func newerSchemaVersionIsRefusedAndTheFileUntouched() throws {
        do {
            let store = try SQLiteRelayStore(path: path)
            try store.save(RoomRecord(name: roomA, lastActivity: 1))
        }
        // user_version is the big-endian 32-bit integer at offset 60 of the header.
        var contents = try bytes(path)
        #expect(contents[60..<64] == [0, 0, 0, 2])
        contents[60..<64] = [0, 0, 0, 99]
        try Data(contents).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RelayStoreError.self) { try SQLiteRelayStore(path: path) }
        #expect(error?.message.contains("schema version 99 is unknown") == true)
        #expect(try bytes(path) == contents)
    }

    /// A version-1 file (quotas counted per UTC day) opens as version 2 with each room's day turned
    /// into the start of its quota window, and nothing else changed.
    @Test func aVersionOneFileIsUpgradedInPlace() throws {
        do {
            let connection = try SQLiteConnection(
                path: path, flags: SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX)
            try connection.executeScript(
                """
                CREATE TABLE rooms (name TEXT NOT NULL PRIMARY KEY, verifier BLOB NULL,
                    last_activity INTEGER NOT NULL, quota_day INTEGER NOT NULL, quota_bytes INTEGER NOT NULL)
                    WITHOUT ROWID;
                CREATE TABLE secrets (kind TEXT NOT NULL, digest BLOB NOT NULL, room TEXT NOT NULL,
                    expires INTEGER NOT NULL, attachment BLOB NOT NULL, PRIMARY KEY (kind, digest)) WITHOUT ROWID;
                CREATE INDEX secrets_room_kind ON secrets (room, kind);
                CREATE INDEX secrets_expires ON secrets (expires);
                PRAGMA user_version = 1;
                """, "v1 schema")
            try connection.execute(
                "INSERT INTO rooms VALUES (?1, ?2, 1700000000, 19675, 1234)", "v1 room", .text(roomA),
                .blob([UInt8](repeating: 9, count: 32)))
        }
        do {
            let store = try SQLiteRelayStore(path: path)
            #expect(
                try store.room(named: roomA)
                    == RoomRecord(
                        name: roomA, verifier: [UInt8](repeating: 9, count: 32), lastActivity: 1_700_000_000,
                        quotaWindowStart: 19_675 * 86_400, quotaBytes: 1234))
        }
        // Closed, the WAL is checkpointed into the file: its header says version 2.
        #expect(try bytes(path)[60..<64] == [0, 0, 0, 2])
    }

    @Test func corruptFileIsAClearError() throws {
        var generator = SystemRandomNumberGenerator()
        let garbage = (0..<8192).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        try Data(garbage).write(to: URL(fileURLWithPath: path))
        let error = #expect(throws: RelayStoreError.self) { try SQLiteRelayStore(path: path) }
        #expect(error?.message.contains("file is not a database") == true)
        #expect(try bytes(path) == garbage)
    }

    @Test func unopenablePathIsAClearError() throws {
        let missing = directory.file("no-such-directory/relay.db").path
        let error = #expect(throws: RelayStoreError.self) { try SQLiteRelayStore(path: missing) }
        #expect(error?.message.contains("No such file or directory") == true)
    }
}
