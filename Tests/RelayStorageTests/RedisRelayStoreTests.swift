import Dispatch
import Foundation
import RelayStorage
import Synchronization
import TestSupport
import Testing

/// What only the Redis store has: several nodes on one server, outages, restarts, credentials.
/// Every test starts its own `redis-server`; the shared contract is in RelayStoreSemanticsTests.
@Suite struct RedisRelayStoreTests {
    private func store(_ server: RedisServer, database: Int = 0, retry: Int64 = 0) throws -> RedisRelayStore {
        try RedisRelayStore(address: RedisAddress(url: server.url(database: database)), retryMilliseconds: retry)
    }

    /// Two nodes register different verifiers into the same rooms at the same moment: each room
    /// gets exactly one, the one whose registration said true.
    @Test func twoNodesRaceForTheFirstVerifier() throws {
        let server = try RedisServer()
        let rooms = (0..<200).map { String(format: "%064x", $0) }
        let url = server.url()
        let wins = Mutex<[[Bool]]>([[], []])
        // Each node's store is made and used on its own thread, as each relay node owns its own.
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            guard let store = try? RedisRelayStore(address: RedisAddress(url: url)) else { return }
            let verifier = [UInt8](repeating: UInt8(node + 1), count: 32)
            let results = rooms.map { (try? store.registerVerifier(verifier, room: $0, now: 100)) ?? false }
            wins.withLock { $0[node] = results }
        }
        let results = wins.withLock { $0 }
        try #require(results.allSatisfy { $0.count == rooms.count })
        let check = try store(server)
        for (index, room) in rooms.enumerated() {
            #expect(results[0][index] != results[1][index], "room \(index): exactly one registration wins")
            let winner = results[0][index] ? 1 : 2
            #expect(try check.room(named: room)?.verifier == [UInt8](repeating: UInt8(winner), count: 32))
        }
        #expect(try check.roomCount() == rooms.count)
    }

    /// A secret is single use across nodes: of two nodes taking the same tickets at once, one
    /// gets each.
    @Test func twoNodesTakeEachSecretOnce() throws {
        let server = try RedisServer()
        let first = try store(server)
        let url = server.url()
        let room = String(repeating: "d", count: 64)
        for byte in 0..<200 {
            try first.addSecret(
                .ticket, digest: [UInt8](repeating: UInt8(byte), count: 32), room: room, expires: 1000,
                attachment: [UInt8(byte)], now: 0)
        }
        let taken = Mutex<[[[UInt8]]]>([[], []])
        DispatchQueue.concurrentPerform(iterations: 2) { node in
            guard let store = try? RedisRelayStore(address: RedisAddress(url: url)) else { return }
            let got = (0..<200).compactMap { byte in
                try? store.takeSecret(
                    .ticket, digest: [UInt8](repeating: UInt8(byte), count: 32), room: room, now: 10)
            }
            taken.withLock { $0[node] = got }
        }
        let all = taken.withLock { $0[0] + $0[1] }
        #expect(all.count == 200)
        #expect(Set(all) == Set((0..<200).map { [UInt8($0)] }))
        #expect(try first.countSecrets(.ticket, room: room, now: 10) == 0)
    }

    /// Redis killed: every call says the store is unavailable (and why), health says so too;
    /// Redis back: the same store object works again with no restart.
    @Test func outageThenRecovery() throws {
        let server = try RedisServer()
        let store = try store(server)
        let room = String(repeating: "e", count: 64)
        #expect(try store.registerVerifier([1], room: room, now: 1))
        #expect(store.checkHealth() == nil)
        server.stop()
        let error = #expect(throws: RelayStoreError.self) { try store.room(named: room) }
        #expect(error?.isUnavailable == true)
        #expect(error?.message.contains(server.socketPath) == true, "\(String(describing: error))")
        let health = try #require(store.checkHealth())
        #expect(health.contains("Redis at unix://\(server.socketPath)"), "\(health)")
        #expect(throws: RelayStoreError.self) { try store.takeSecret(.ticket, digest: [1], room: room, now: 1) }
        try server.start()
        // The reconnect runs on a thread of its own: calls fail at once until it has finished.
        #expect(try waitUntilHealthy(store))
        // No AOF: the data went with the process, and the store serves the fresh server.
        #expect(try store.room(named: room) == nil)
        #expect(try store.registerVerifier([2], room: room, now: 2))
    }

    /// Asks `store` for its health until it is healthy, at most 10 s.
    private func waitUntilHealthy(_ store: RedisRelayStore) throws -> Bool {
        for _ in 0..<1000 {
            if store.checkHealth() == nil { return true }
            usleep(10_000)
        }
        return false
    }

    /// A Redis that stops answering (SIGSTOP: the socket stays open, nothing comes back) costs
    /// the owner one timeout; the reconnects that follow happen off its thread, so its calls fail
    /// at once while the server stays silent.
    @Test func aSilentRedisCostsOneTimeoutThenCallsFailAtOnce() throws {
        let server = try RedisServer()
        let store = try RedisRelayStore(
            address: RedisAddress(url: server.url()), timeoutMilliseconds: 300, retryMilliseconds: 0)
        let pid = try #require(server.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let first = #expect(throws: RelayStoreError.self) { try store.roomCount() }
        #expect(first?.isUnavailable == true, "\(String(describing: first))")
        // The connects now wait on the stopped server in the background; each call returns at
        // once instead of waiting its timeout (100 calls would take 30 s if they waited).
        let start = ContinuousClock.now
        for _ in 0..<100 { #expect(throws: RelayStoreError.self) { try store.roomCount() } }
        #expect(ContinuousClock.now - start < .seconds(5))
        kill(pid, SIGCONT)
        #expect(try waitUntilHealthy(store))
    }

    /// While an outage is recent, calls fail at once without trying to connect: with a minute
    /// between attempts, a Redis that is back is not seen until the minute has passed.
    @Test func reconnectAttemptsAreSpacedOut() throws {
        let server = try RedisServer()
        let store = try store(server, retry: 60_000)
        server.stop()
        #expect(store.checkHealth() != nil)
        try server.start()
        let error = #expect(throws: RelayStoreError.self) { try store.roomCount() }
        #expect(error?.isUnavailable == true)
    }

    /// With the append-only file on, a Redis killed and started again has every room, verifier,
    /// quota and secret it acknowledged.
    @Test func appendOnlyRestartLosesNoRoom() throws {
        let server = try RedisServer(appendOnly: true)
        let store = try store(server)
        var records: [RoomRecord] = []
        for index in 0..<100 {
            let record = RoomRecord(
                name: String(format: "%064x", index), verifier: [UInt8](repeating: UInt8(index), count: 32),
                lastActivity: 1_700_000_000 + Int64(index), quotaWindowStart: 1_699_999_000, quotaBytes: Int64(index))
            try store.save(record)
            records.append(record)
        }
        try store.addSecret(
            .registrationToken, digest: [UInt8](repeating: 9, count: 32), room: records[0].name,
            expires: 1_700_000_300, attachment: [4, 2], now: 1_700_000_000)
        server.stop()
        try server.start()
        let fresh = try self.store(server)
        for record in records { #expect(try fresh.room(named: record.name) == record) }
        #expect(try fresh.roomCount() == 100)
        #expect(
            try fresh.takeSecret(
                .registrationToken, digest: [UInt8](repeating: 9, count: 32), room: records[0].name,
                now: 1_700_000_001) == [4, 2])
    }

    /// The scripts are loaded by digest; a Redis that forgot them (SCRIPT FLUSH) gets them again.
    @Test func flushedScriptsAreSentAgain() throws {
        let server = try RedisServer()
        let store = try store(server)
        let room = String(repeating: "f", count: 64)
        let flushed = try ProcessRunner.run("redis-cli", ["-s", server.socketPath, "SCRIPT", "FLUSH"], timeout: 15)
        #expect(flushed.stdout.contains("OK"), "\(flushed.stdout) \(flushed.stderr)")
        #expect(try store.registerVerifier([3], room: room, now: 5))
        #expect(try !store.registerVerifier([4], room: room, now: 6))
    }

    /// Secrets get Redis TTLs from the caller's clock, and rooms the idle lifetime plus a day.
    @Test func keysExpireInRedis() throws {
        let server = try RedisServer()
        let store = try RedisRelayStore(
            address: RedisAddress(url: server.url()), idleLifetime: 1000, retryMilliseconds: 0)
        let room = String(repeating: "a", count: 64)
        try store.save(RoomRecord(name: room, lastActivity: 50))
        try store.addSecret(
            .challenge, digest: [UInt8](repeating: 1, count: 32), room: room, expires: 400, attachment: [], now: 100)
        func ttl(_ key: String) throws -> Int {
            let result = try ProcessRunner.run("redis-cli", ["-s", server.socketPath, "TTL", key], timeout: 15)
            return Int(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -99
        }
        let roomTTL = try ttl("herdr-relay:room:\(room)")
        #expect((87_300...87_400).contains(roomTTL), "room TTL \(roomTTL)")
        let secretTTL = try ttl("herdr-relay:secret:challenge:" + String(repeating: "01", count: 32))
        #expect((290...301).contains(secretTTL), "secret TTL \(secretTTL)")
    }

    @Test func unreachableAtStartSaysWhere() throws {
        let directory = try TemporaryDirectory(prefix: "redis-none-")
        defer { directory.remove() }
        let path = directory.file("nothing.sock").path
        let error = #expect(throws: RelayStoreError.self) {
            try RedisRelayStore(address: RedisAddress(url: "unix://\(path)"))
        }
        #expect(
            error?.message.contains("Redis at unix://\(path)?db=0 is unreachable") == true,
            "\(String(describing: error))")
        #expect(error?.isUnavailable == true)
    }

    @Test func passwordIsSentAndNeverShown() throws {
        let server = try RedisServer(tcp: true, password: "s3cret!pass")
        let port = try #require(server.tcpPort)
        let wrong = #expect(throws: RelayStoreError.self) {
            try RedisRelayStore(address: RedisAddress(url: "redis://:nope@127.0.0.1:\(port)/0"))
        }
        #expect(wrong?.message.contains("refused AUTH") == true, "\(String(describing: wrong))")
        #expect(wrong?.message.contains("nope") == false)
        let none = #expect(throws: RelayStoreError.self) {
            try RedisRelayStore(address: RedisAddress(url: "redis://127.0.0.1:\(port)/0"))
        }
        #expect(none?.message.contains("NOAUTH") == true, "\(String(describing: none))")
        let store = try RedisRelayStore(address: RedisAddress(url: "redis://:s3cret%21pass@127.0.0.1:\(port)/2"))
        #expect(store.address.description == "redis://:***@127.0.0.1:\(port)/2")
        #expect(try store.registerVerifier([1], room: String(repeating: "b", count: 64), now: 1))
    }

    /// Databases are separate namespaces; one the server does not have is refused by name.
    @Test func databasesAreSeparate() throws {
        let server = try RedisServer()
        let zero = try store(server, database: 0)
        let one = try store(server, database: 1)
        let room = String(repeating: "c", count: 64)
        #expect(try zero.registerVerifier([1], room: room, now: 1))
        #expect(try one.room(named: room) == nil)
        #expect(try one.registerVerifier([2], room: room, now: 1))
        let error = #expect(throws: RelayStoreError.self) { try store(server, database: 99) }
        #expect(error?.message.contains("refused SELECT 99") == true, "\(String(describing: error))")
    }

    /// A room leased to a live node is refused to the others, who learn the holder; a release,
    /// or the holder's heartbeat lapsing, frees it.
    @Test func leasesBelongToOneLiveNode() throws {
        let server = try RedisServer()
        let store = try store(server)
        let room = String(repeating: "1", count: 64)
        #expect(try store.acquireLease(room: room, node: "node-a", lifetime: 60_000) == nil)
        #expect(try store.acquireLease(room: room, node: "node-a", lifetime: 60_000) == nil, "held already")
        #expect(try store.acquireLease(room: room, node: "node-b", lifetime: 60_000) == "node-a")
        #expect(try store.leaseHolder(room: room, node: "node-b") == "node-a")
        #expect(try store.leaseHolder(room: room, node: "node-a") == nil)
        try store.releaseLease(room: room, node: "node-b")  // not b's to give up
        #expect(try store.leaseHolder(room: room, node: "node-b") == "node-a")
        try store.releaseLease(room: room, node: "node-a")
        #expect(try store.acquireLease(room: room, node: "node-b", lifetime: 60_000) == nil)

        // node-b dies: its heartbeat (1 ms) lapses and node-a may take the room.
        try store.beat(node: "node-b", lifetime: 1)
        var granted: String? = "node-b"
        for _ in 0..<500 where granted != nil {
            granted = try store.acquireLease(room: room, node: "node-a", lifetime: 60_000)
            if granted != nil { usleep(2000) }
        }
        #expect(granted == nil, "a dead node's lease is void")
        #expect(try store.leaseHolder(room: room, node: "node-b") == "node-a")
    }

    /// A node's process dies (its connections close, as the kernel closes them on SIGKILL): its
    /// presence subscription goes with them, and another node may take its rooms at once, long
    /// before its heartbeat (a minute here) would lapse.
    @Test func aKilledNodesLeasesAreVoidOnceItsConnectionsClose() throws {
        let server = try RedisServer()
        var holder: RedisRelayStore? = try store(server)
        let other = try store(server)
        let room = String(repeating: "2", count: 64)
        #expect(holder?.presenceRefusal == nil)
        try holder?.beat(node: "node-a", lifetime: 60_000)
        #expect(try holder?.acquireLease(room: room, node: "node-a", lifetime: 60_000) == nil)
        #expect(try other.acquireLease(room: room, node: "node-b", lifetime: 60_000) == "node-a", "node-a lives")
        holder = nil
        // Redis notices the closed socket on its own loop: a short, bounded wait for that.
        var granted: String? = "node-a"
        for _ in 0..<500 where granted != nil {
            granted = try other.acquireLease(room: room, node: "node-b", lifetime: 60_000)
            if granted != nil { usleep(2000) }
        }
        #expect(granted == nil, "the dead node's lease is void while its heartbeat key still lives")
        let heartbeat = try ProcessRunner.run(
            "redis-cli", ["-s", server.socketPath, "PTTL", "herdr-relay:node:node-a"])
        #expect((Int(heartbeat.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0) > 1000)
    }

    /// A Redis user without the presence channels: the store says why, and its leases rest on
    /// heartbeats alone (a node gone is still the holder until its heartbeat lapses). A user that
    /// may not run PUBSUB still leases rooms, taking holders with a presence for live.
    @Test func withoutPresenceLeasesRestOnHeartbeats() throws {
        let server = try RedisServer()
        for (user, rules) in [
            ("nochannels", ["resetchannels", "+@all"]), ("nopubsub", ["allchannels", "+@all", "-pubsub"]),
        ] {
            let result = try ProcessRunner.run(
                "redis-cli", ["-s", server.socketPath, "ACL", "SETUSER", user, "on", ">pw-\(user)", "~*"] + rules)
            try #require(result.stdout.contains("OK"), "\(result.stdout) \(result.stderr)")
        }
        func store(as user: String) throws -> RedisRelayStore {
            try RedisRelayStore(
                address: RedisAddress(endpoint: .unix(path: server.socketPath), user: user, password: "pw-\(user)"))
        }
        let room = String(repeating: "3", count: 64)
        var unseen: RedisRelayStore? = try store(as: "nochannels")
        #expect(
            unseen?.presenceRefusal?.contains("SUBSCRIBE") == true, "\(String(describing: unseen?.presenceRefusal))")
        #expect(try unseen?.acquireLease(room: room, node: "node-a", lifetime: 60_000) == nil)
        let other = try self.store(server)
        unseen = nil
        #expect(try other.acquireLease(room: room, node: "node-b", lifetime: 60_000) == "node-a", "until it lapses")

        let present = try self.store(server)
        let second = String(repeating: "4", count: 64)
        #expect(try present.acquireLease(room: second, node: "node-c", lifetime: 60_000) == nil)
        let blind = try store(as: "nopubsub")
        #expect(blind.presenceRefusal == nil)
        #expect(try blind.acquireLease(room: second, node: "node-d", lifetime: 60_000) == "node-c")
        #expect(try blind.acquireLease(room: room, node: "node-d", lifetime: 60_000) == "node-a")
    }

    /// The attempt limit of a room is one window for every node.
    @Test func attemptsAreCountedAcrossNodes() throws {
        let server = try RedisServer()
        let first = try store(server)
        let second = try store(server)
        let room = String(repeating: "2", count: 64)
        #expect(try first.admitAttempt(room: room, limit: 3, length: 60_000))
        #expect(try second.admitAttempt(room: room, limit: 3, length: 60_000))
        #expect(try first.admitAttempt(room: room, limit: 3, length: 60_000))
        #expect(try !second.admitAttempt(room: room, limit: 3, length: 60_000))
        #expect(try !first.admitAttempt(room: room, limit: 3, length: 60_000))
        #expect(try first.admitAttempt(room: String(repeating: "3", count: 64), limit: 3, length: 60_000))
    }

    @Test func moveRequestsReachTheHolderOnce() throws {
        let server = try RedisServer()
        let store = try store(server)
        let (a, b) = (String(repeating: "4", count: 64), String(repeating: "5", count: 64))
        #expect(try store.takeMoveRequests(node: "node-a") == [])
        try store.requestMove(room: b, from: "node-a")
        try store.requestMove(room: a, from: "node-a")
        try store.requestMove(room: b, from: "node-a")
        try store.requestMove(room: a, from: "node-b")
        #expect(try store.takeMoveRequests(node: "node-a") == [a, b])
        #expect(try store.takeMoveRequests(node: "node-a") == [])
        #expect(try store.takeMoveRequests(node: "node-b") == [a])
    }
}
