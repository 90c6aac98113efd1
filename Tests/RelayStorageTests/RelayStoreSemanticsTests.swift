import RelayStorage
import TestSupport
import Testing

/// A store under test, and the directory its file lives in or the Redis server it talks to
/// (kept alive as long as the fixture).
struct StoreFixture {
    let store: any RelayStore
    let directory: TemporaryDirectory?
    var server: RedisServer? = nil
}

/// The stores every semantic test runs against.
enum StoreKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case memory
    case sqliteFile
    case sqliteInMemory
    case redis

    var testDescription: String { rawValue }

    func make() throws -> StoreFixture {
        switch self {
        case .memory:
            return StoreFixture(store: MemoryRelayStore(), directory: nil)
        case .sqliteFile:
            let directory = try TemporaryDirectory(prefix: "relay-store-")
            return StoreFixture(
                store: try SQLiteRelayStore(path: directory.file("relay.db").path), directory: directory)
        case .sqliteInMemory:
            return StoreFixture(store: try SQLiteRelayStore(path: ":memory:"), directory: nil)
        case .redis:
            let server = try RedisServer()
            return StoreFixture(
                store: try RedisRelayStore(address: try RedisAddress(url: server.url())), directory: nil,
                server: server)
        }
    }
}

func digest(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

let roomA = String(repeating: "a", count: 64)
let roomB = String(repeating: "b", count: 64)
let roomC = String(repeating: "c", count: 64)

/// The `RelayStore` contract, the same for every store.
@Suite struct RelayStoreSemanticsTests {
    @Test(arguments: StoreKind.allCases)
    func registerOnceThenRefused(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        let first = [UInt8](repeating: 1, count: 32)
        #expect(try store.registerVerifier(first, room: roomA, now: 1000))
        #expect(try store.room(named: roomA) == RoomRecord(name: roomA, verifier: first, lastActivity: 1000))
        #expect(try !store.registerVerifier([UInt8](repeating: 2, count: 32), room: roomA, now: 2000))
        #expect(try store.room(named: roomA) == RoomRecord(name: roomA, verifier: first, lastActivity: 1000))
        #expect(try store.roomCount() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func registerOnPairingRoomKeepsQuota(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.save(RoomRecord(name: roomA, lastActivity: 10, quotaWindowStart: 5, quotaBytes: 77))
        let verifier = [UInt8](repeating: 9, count: 32)
        #expect(try store.registerVerifier(verifier, room: roomA, now: 20))
        #expect(
            try store.room(named: roomA)
                == RoomRecord(name: roomA, verifier: verifier, lastActivity: 20, quotaWindowStart: 5, quotaBytes: 77))
    }

    @Test(arguments: StoreKind.allCases)
    func secretsAreSingleUse(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.addSecret(.ticket, digest: digest(1), room: roomA, expires: 500, attachment: [7, 8, 9], now: 0)
        try store.addSecret(.challenge, digest: digest(2), room: roomA, expires: 500, attachment: [], now: 0)
        #expect(try store.takeSecret(.ticket, digest: digest(1), room: roomA, now: 100) == [7, 8, 9])
        #expect(try store.takeSecret(.ticket, digest: digest(1), room: roomA, now: 100) == nil)
        // An empty attachment comes back empty, not as a miss.
        #expect(try store.takeSecret(.challenge, digest: digest(2), room: roomA, now: 100) == [])
        #expect(try store.takeSecret(.challenge, digest: digest(2), room: roomA, now: 100) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func wrongRoomKindOrDigestLeavesTheSecret(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.addSecret(.registrationToken, digest: digest(3), room: roomA, expires: 500, attachment: [1], now: 0)
        #expect(try store.takeSecret(.registrationToken, digest: digest(3), room: roomB, now: 100) == nil)
        #expect(try store.takeSecret(.ticket, digest: digest(3), room: roomA, now: 100) == nil)
        #expect(try store.takeSecret(.challenge, digest: digest(3), room: roomA, now: 100) == nil)
        #expect(try store.takeSecret(.registrationToken, digest: digest(4), room: roomA, now: 100) == nil)
        #expect(try store.countSecrets(.registrationToken, room: roomA, now: 100) == 1)
        #expect(try store.takeSecret(.registrationToken, digest: digest(3), room: roomA, now: 100) == [1])
    }

    /// A secret is valid while `now < expires`: at its `expires` second it is expired (and a take deletes it).
    @Test(arguments: StoreKind.allCases)
    func expiryBoundary(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.addSecret(.ticket, digest: digest(1), room: roomA, expires: 300, attachment: [1], now: 0)
        try store.addSecret(.ticket, digest: digest(2), room: roomA, expires: 300, attachment: [2], now: 0)
        #expect(try store.takeSecret(.ticket, digest: digest(1), room: roomA, now: 299) == [1])
        #expect(try store.takeSecret(.ticket, digest: digest(2), room: roomA, now: 300) == nil)
        // The expired match was deleted, not left for an earlier clock to find.
        #expect(try store.takeSecret(.ticket, digest: digest(2), room: roomA, now: 0) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func countExcludesExpiredAndOtherRoomsAndKinds(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        for (byte, expires) in [(UInt8(1), Int64(100)), (2, 200), (3, 300)] {
            try store.addSecret(.challenge, digest: digest(byte), room: roomA, expires: expires, attachment: [], now: 0)
        }
        try store.addSecret(.challenge, digest: digest(4), room: roomB, expires: 1000, attachment: [], now: 0)
        try store.addSecret(.ticket, digest: digest(5), room: roomA, expires: 1000, attachment: [], now: 0)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 99) == 3)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 100) == 2)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 250) == 1)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 300) == 0)
        #expect(try store.countSecrets(.challenge, room: roomB, now: 300) == 1)
        #expect(try store.countSecrets(.ticket, room: roomA, now: 300) == 1)
        #expect(try store.countSecrets(.registrationToken, room: roomA, now: 0) == 0)
    }

    @Test(arguments: StoreKind.allCases)
    func deleteRoomRemovesItsSecrets(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        #expect(try store.registerVerifier([1], room: roomA, now: 10))
        #expect(try store.registerVerifier([2], room: roomB, now: 10))
        try store.addSecret(.ticket, digest: digest(1), room: roomA, expires: 500, attachment: [], now: 0)
        try store.addSecret(.challenge, digest: digest(2), room: roomA, expires: 500, attachment: [], now: 0)
        try store.addSecret(.ticket, digest: digest(3), room: roomB, expires: 500, attachment: [3], now: 0)
        try store.deleteRoom(named: roomA)
        try store.deleteRoom(named: roomC)  // Absent: not an error.
        #expect(try store.room(named: roomA) == nil)
        #expect(try store.roomCount() == 1)
        #expect(try store.countSecrets(.ticket, room: roomA, now: 0) == 0)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 0) == 0)
        #expect(try store.takeSecret(.ticket, digest: digest(3), room: roomB, now: 0) == [3])
        // The name is free again: a new registration succeeds.
        #expect(try store.registerVerifier([4], room: roomA, now: 20))
    }

    /// A room is reaped when `lastActivity < idleBefore`, with all its secrets; expired secrets go too.
    @Test(arguments: StoreKind.allCases)
    func reapBothSidesOfIdleBefore(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.save(RoomRecord(name: roomC, lastActivity: 99))
        try store.save(RoomRecord(name: roomA, lastActivity: 98))
        try store.save(RoomRecord(name: roomB, lastActivity: 100))
        try store.addSecret(.challenge, digest: digest(1), room: roomA, expires: 10_000, attachment: [], now: 0)
        try store.addSecret(.challenge, digest: digest(2), room: roomB, expires: 10_000, attachment: [], now: 0)
        try store.addSecret(.challenge, digest: digest(3), room: roomB, expires: 500, attachment: [], now: 0)
        try store.addSecret(.ticket, digest: digest(4), room: roomB, expires: 499, attachment: [], now: 0)
        #expect(try store.reap(now: 500, idleBefore: 100) == [roomA, roomC])
        #expect(try store.room(named: roomB) == RoomRecord(name: roomB, lastActivity: 100))
        #expect(try store.roomCount() == 1)
        #expect(try store.countSecrets(.challenge, room: roomA, now: 0) == 0)
        #expect(try store.countSecrets(.challenge, room: roomB, now: 0) == 1)
        // Expired secrets are gone, not merely filtered: an earlier clock does not see them.
        #expect(try store.takeSecret(.challenge, digest: digest(3), room: roomB, now: 0) == nil)
        #expect(try store.takeSecret(.ticket, digest: digest(4), room: roomB, now: 0) == nil)
        #expect(try store.reap(now: 500, idleBefore: 100) == [])
    }

    @Test(arguments: StoreKind.allCases)
    func saveAndReadBack(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        #expect(try store.room(named: roomA) == nil)
        let record = RoomRecord(
            name: roomA, verifier: Array(0..<32), lastActivity: 1_700_000_000, quotaWindowStart: 1_699_990_000,
            quotaBytes: Int64.max)
        try store.save(record)
        #expect(try store.room(named: roomA) == record)
        var updated = record
        updated.lastActivity += 60
        updated.quotaWindowStart += 86_400
        updated.quotaBytes = 4096
        try store.save(updated)
        #expect(try store.room(named: roomA) == updated)
        updated.verifier = nil
        try store.save(updated)
        #expect(try store.room(named: roomA) == updated)
        #expect(try store.roomCount() == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func peekLeavesTheSecretInPlace(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.addSecret(.ticket, digest: digest(7), room: roomA, expires: 100, attachment: [1, 2], now: 0)
        #expect(try store.peekSecret(.ticket, digest: digest(7), room: roomA, now: 99) == [1, 2])
        #expect(try store.peekSecret(.ticket, digest: digest(7), room: roomA, now: 99) == [1, 2])
        #expect(try store.peekSecret(.ticket, digest: digest(7), room: roomB, now: 99) == nil)
        #expect(try store.peekSecret(.challenge, digest: digest(7), room: roomA, now: 99) == nil)
        #expect(try store.peekSecret(.ticket, digest: digest(7), room: roomA, now: 100) == nil)  // expired
        #expect(try store.takeSecret(.ticket, digest: digest(7), room: roomA, now: 99) == [1, 2])
        #expect(try store.peekSecret(.ticket, digest: digest(7), room: roomA, now: 99) == nil)
    }

    /// Quota bytes add up in the stored window; a window a day old restarts with the new bytes;
    /// a room with no record counts nothing.
    @Test(arguments: StoreKind.allCases)
    func quotaBytesAddUpAndTheWindowRolls(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        #expect(try store.addQuotaBytes(10, room: roomA, now: 1000, windowLength: 86_400) == nil)
        #expect(try store.room(named: roomA) == nil)
        try store.save(RoomRecord(name: roomA, verifier: [1], lastActivity: 5, quotaWindowStart: 1000, quotaBytes: 7))
        #expect(
            try store.addQuotaBytes(3, room: roomA, now: 1500, windowLength: 86_400)
                == QuotaWindow(start: 1000, bytes: 10))
        #expect(
            try store.addQuotaBytes(5, room: roomA, now: 87_399, windowLength: 86_400)
                == QuotaWindow(start: 1000, bytes: 15))
        #expect(
            try store.addQuotaBytes(4, room: roomA, now: 87_400, windowLength: 86_400)
                == QuotaWindow(start: 87_400, bytes: 4))
        #expect(
            try store.room(named: roomA)
                == RoomRecord(name: roomA, verifier: [1], lastActivity: 5, quotaWindowStart: 87_400, quotaBytes: 4))
    }

    /// Touching sets the activity only: the verifier and the quota another node counts stay.
    @Test(arguments: StoreKind.allCases)
    func touchSetsOnlyTheActivity(kind: StoreKind) throws {
        let fixture = try kind.make()
        defer { withExtendedLifetime(fixture) {} }
        let store = fixture.store
        try store.touchRoom(named: roomB, lastActivity: 50)
        #expect(try store.room(named: roomB) == nil)
        try store.save(RoomRecord(name: roomA, verifier: [2], lastActivity: 10, quotaWindowStart: 9, quotaBytes: 99))
        try store.touchRoom(named: roomA, lastActivity: 60)
        #expect(
            try store.room(named: roomA)
                == RoomRecord(name: roomA, verifier: [2], lastActivity: 60, quotaWindowStart: 9, quotaBytes: 99))
        // The new activity is what the reaper reads.
        #expect(try store.reap(now: 100, idleBefore: 60) == [])
        #expect(try store.reap(now: 100, idleBefore: 61) == [roomA])
    }
}
