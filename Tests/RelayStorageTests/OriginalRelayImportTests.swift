import Foundation
import RelayStorage
import TestSupport
import Testing

/// Reading the original relay's SQLite file (written by hand in its format) and carrying its
/// established rooms into our store.
@Suite struct OriginalRelayImportTests {
    let directory: TemporaryDirectory
    var originalPath: String { directory.file("relay.db").path }
    var ourPath: String { directory.file("ours.sqlite").path }

    init() throws { directory = try TemporaryDirectory(prefix: "relay-import-") }

    static let now: Int64 = 1_780_000_000
    static let thirtyDays: Int64 = 30 * 86_400
    static let nowMilliseconds = now * 1000

    static func room(_ seed: UInt8) -> String { String(repeating: String(format: "%02x", seed), count: 32) }
    static func verifier(_ seed: UInt8) -> [UInt8] { [UInt8](repeating: seed, count: 32) }

    func importOnce(into store: any RelayStore, dryRun: Bool = false) throws -> OriginalRelayImport.Report {
        let original = try OriginalRelayDatabase(path: originalPath)
        return try OriginalRelayImport.run(
            from: original, into: store, now: Self.now, idleLifetime: Self.thirtyDays, dryRun: dryRun)
    }

    /// A file with every kind of room the original leaves behind.
    func writeMixedFile() throws {
        let file = try OriginalRelayFile(path: originalPath)
        // Established, used an hour ago, with a quota window.
        try file.putEstablishedRoom(
            Self.room(1), verifier: Self.verifier(1), lastActivityMilliseconds: Self.nowMilliseconds - 3_600_000,
            quota: (Self.nowMilliseconds - 7_200_000, 123_456))
        try file.put(room: Self.room(1), key: "registrantKeyId", value: "\"a2V5\"")
        try file.put(room: Self.room(1), key: "assertcounter:a2V5", value: "3")
        try file.put(room: Self.room(1), key: "regtoken:AAAA", value: "{\"expiresAt\":\(Self.nowMilliseconds)}")
        try file.putAlarm(room: Self.room(1), at: Self.nowMilliseconds + 15_000)
        // Established before the original kept activity: no lastActivity.
        try file.putEstablishedRoom(Self.room(2), verifier: Self.verifier(2), lastActivityMilliseconds: nil)
        // Idle past 30 days.
        try file.putEstablishedRoom(
            Self.room(3), verifier: Self.verifier(3),
            lastActivityMilliseconds: (Self.now - Self.thirtyDays - 1) * 1000)
        // A pairing that never finished: only short-lived keys and the cycle count.
        try file.put(room: Self.room(4), key: "pairingCycles", value: "2")
        try file.put(room: Self.room(4), key: "ticket:QUJD", value: "{\"expiresAt\":1,\"keyId\":\"x\"}")
        // Malformed: the room is refused whole.
        try file.put(room: Self.room(5), key: "verifier", value: "not json")
        try file.put(room: Self.room(5), key: "lastActivity", value: String(Self.nowMilliseconds))
        try file.putEstablishedRoom(Self.room(6), verifier: Self.verifier(6), lastActivityMilliseconds: nil)
        try file.put(room: Self.room(6), key: "lastActivity", value: "\"yesterday\"")
        try file.putEstablishedRoom(
            Self.room(7), verifier: Self.verifier(7), lastActivityMilliseconds: Self.nowMilliseconds)
        try file.put(room: Self.room(7), key: "quota", value: "{\"dayStart\":\"today\",\"bytes\":1}")
        try file.put(room: "NOT-A-ROOM", key: "verifier", value: "\"\(Data(Self.verifier(8)).base64EncodedString())\"")
        file.close()
    }

    @Test func establishedRoomsAreCarriedAndTheRestAccountedFor() throws {
        try writeMixedFile()
        let before = try Data(contentsOf: URL(fileURLWithPath: originalPath))
        let store = try SQLiteRelayStore(path: ourPath)
        let report = try importOnce(into: store)
        #expect(report.carried == 2)
        #expect(report.alreadyPresent == 0)
        #expect(report.expired == 1)
        #expect(report.notEstablished == 1)
        #expect(report.refused.map(\.room) == [Self.room(5), Self.room(6), Self.room(7), "NOT-A-ROOM"])
        #expect(report.refused.first { $0.room == Self.room(5) }?.reason.contains("verifier") == true)
        #expect(report.refused.first { $0.room == Self.room(6) }?.reason.contains("lastActivity") == true)
        #expect(report.refused.first { $0.room == Self.room(7) }?.reason.contains("quota") == true)
        #expect(
            try store.room(named: Self.room(1))
                == RoomRecord(
                    name: Self.room(1), verifier: Self.verifier(1), lastActivity: Self.now - 3600,
                    quotaWindowStart: Self.now - 7200, quotaBytes: 123_456))
        #expect(
            try store.room(named: Self.room(2))
                == RoomRecord(name: Self.room(2), verifier: Self.verifier(2), lastActivity: Self.now))
        for seed: UInt8 in 3...7 { #expect(try store.room(named: Self.room(seed)) == nil, "room \(seed)") }
        #expect(try store.roomCount() == 2, "a refused room leaves nothing behind")
        // Nothing of the original's short-lived secrets came along.
        #expect(try store.countSecrets(.registrationToken, room: Self.room(1), now: Self.now) == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: originalPath)) == before, "the original is only read")
    }

    /// Running it again changes nothing and reports the rooms as already here.
    @Test func importIsIdempotent() throws {
        try writeMixedFile()
        let store = try SQLiteRelayStore(path: ourPath)
        let first = try importOnce(into: store)
        let records = try [1, 2].map { try store.room(named: Self.room($0)) }
        let second = try importOnce(into: store)
        #expect(second.carried == 0 && second.alreadyPresent == first.carried)
        #expect(second.refused == first.refused && second.expired == first.expired)
        #expect(try [1, 2].map { try store.room(named: Self.room($0)) } == records)
    }

    /// A room this relay already holds with another verifier is refused, never overwritten; one
    /// held as a pairing record only takes the verifier; newer activity here is kept.
    @Test func existingRoomsAreNeverOverwritten() throws {
        try writeMixedFile()
        let store = try SQLiteRelayStore(path: ourPath)
        #expect(try store.registerVerifier(Self.verifier(9), room: Self.room(1), now: Self.now - 10))
        try store.save(RoomRecord(name: Self.room(2), verifier: Self.verifier(2), lastActivity: Self.now + 5))
        let report = try importOnce(into: store)
        #expect(report.refused.first { $0.room == Self.room(1) }?.reason.contains("another verifier") == true)
        #expect(try store.room(named: Self.room(1))?.verifier == Self.verifier(9))
        #expect(report.alreadyPresent == 1)
        #expect(try store.room(named: Self.room(2))?.lastActivity == Self.now + 5)
    }

    @Test func aDryRunWritesNothing() throws {
        try writeMixedFile()
        let store = try SQLiteRelayStore(path: ourPath)
        let report = try importOnce(into: store, dryRun: true)
        #expect(report.carried == 2)
        #expect(try store.roomCount() == 0)
    }

    /// The verdict on each kind of malformed row, one room at a time.
    @Test(arguments: [
        ("verifier", "5", "verifier"), ("verifier", "\"!!!\"", "verifier"),
        ("verifier", "\"\(Data([UInt8](repeating: 1, count: 31)).base64EncodedString())\"", "verifier"),
        ("verifier", "{\"key\":1}", "verifier"), ("lastActivity", "-1", "lastActivity"),
        ("lastActivity", "1.5", "lastActivity"), ("lastActivity", "true", "lastActivity"),
        ("quota", "[]", "quota"), ("quota", "{\"dayStart\":1}", "quota"),
        ("quota", "{\"bytes\":-3,\"dayStart\":0}", "quota"),
        ("verifier", "\"" + String(repeating: "A", count: 5000) + "\"", "longer than 4096"),
    ])
    func malformedRowsAreRefusedByName(key: String, value: String, reason: String) throws {
        var values = ["verifier": "\"\(Data(Self.verifier(1)).base64EncodedString())\"", "lastActivity": "0"]
        values["lastActivity"] = String(Self.nowMilliseconds)
        values[key] = value
        let verdict = OriginalRoomVerdict.of(
            OriginalRelayDatabase.Room(name: Self.room(1), values: values), now: Self.now, idleLifetime: Self.thirtyDays
        )
        guard case .refused(let text) = verdict else {
            Issue.record("\(key)=\(value): \(verdict)")
            return
        }
        #expect(text.contains(reason), "\(text)")
    }

    @Test func aFileThatIsNotTheOriginalsIsAClearError() throws {
        do { _ = try SQLiteRelayStore(path: ourPath) }
        let ours = #expect(throws: RelayStoreError.self) { try OriginalRelayDatabase(path: ourPath) }
        #expect(ours?.message.contains("no kv(room, key, value) table") == true)
        let missing = #expect(throws: RelayStoreError.self) {
            try OriginalRelayDatabase(path: directory.file("absent.db").path)
        }
        #expect(missing?.message.contains("does not exist") == true)
        try Data("not a database at all, just text".utf8).write(to: URL(fileURLWithPath: originalPath))
        #expect(throws: RelayStoreError.self) { try OriginalRelayDatabase(path: originalPath).rooms() }
    }
}
