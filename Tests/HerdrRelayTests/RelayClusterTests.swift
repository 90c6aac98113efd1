import Foundation
import Glibc
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// The relay as a cluster: three real herdr-relay nodes sharing a real Redis behind a real
/// HAProxy using the shipped configuration, reached by our real client through HAProxy.
@Suite("herdr-relay nodes on Redis behind HAProxy", .serialized)
struct RelayClusterTests {
    static func options() -> RelayConnection.Options {
        var options = RelayConnection.Options()
        options.connectTimeout = 5
        options.admissionTimeout = 5
        return options
    }

    /// A room paired through the cluster: a Mac parks, a phone joins, the phone's token is
    /// registered through HAProxy; both sockets are closed again.
    static func establishRoom(_ cluster: RelayCluster) throws -> (room: String, key: RelayJoinKey) {
        let room = Hex.encode(SecureRandom.bytes(32))
        let mac = try RelayConnection.connect(
            to: cluster.endpoint, room: room, role: .computer, credential: .none, options: options())
        defer {
            mac.close()
            mac.waitUntilEnded(timeout: 5)
        }
        let phone = try RelayConnection.connect(
            to: cluster.endpoint, room: room, role: .device, credential: .none, options: options())
        defer {
            phone.close()
            phone.waitUntilEnded(timeout: 5)
        }
        let token = try #require(phone.registrationToken)
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        try cluster.http.register(room: room, registrationToken: token, verifier: key.verifier)
        return (room, key)
    }

    @Test("rooms are parked and spliced through HAProxy, each on one node, spread over the nodes")
    func parkAndSpliceThroughHAProxy() throws {
        let cluster = try RelayCluster()
        var pairs: [(RelayConnection, RelayConnection)] = []
        defer {
            for (mac, phone) in pairs {
                mac.close()
                phone.close()
            }
        }
        for _ in 0..<30 {
            let (room, key) = try Self.establishRoom(cluster)
            let mac = try RelayConnection.connect(
                to: cluster.endpoint, room: room, role: .computer, credential: .joinKey(key), options: Self.options())
            let phone = try RelayConnection.connect(
                to: cluster.endpoint, room: room, role: .device, credential: .joinKey(key), options: Self.options())
            pairs.append((mac, phone))
        }
        for (mac, phone) in pairs {
            let bytes = SecureRandom.bytes(4096)
            try mac.send(bytes)
            #expect(phone.receive(timeout: 5) == .message(bytes))
            try phone.send([7])
            #expect(mac.receive(timeout: 5) == .message([7]))
        }
        let metrics = cluster.metrics()
        #expect(metrics.count == 3)
        #expect(metrics.values.reduce(0) { $0 + ($1["relay_rooms_spliced"] ?? 0) } == 30)
        #expect(metrics.values.reduce(0) { $0 + ($1["relay_rooms_leased"] ?? 0) } == 30)
        #expect(metrics.values.filter { ($0["relay_rooms_spliced"] ?? 0) > 0 }.count >= 2, "\(metrics)")
        // Through HAProxy the operator endpoints are not local: /metrics is refused there.
        #expect(LoopbackHTTP.get(port: UInt16(cluster.haproxy.port), path: "/metrics")?.status == 403)
    }

    /// Nodes serving the web client: a browser's socket (its `Origin`, the room in the query) and
    /// a native one (the room in the header) of the same room are routed to one node by the
    /// shipped configuration, for every one of 12 rooms (by chance on three nodes: 1 in 3^12);
    /// the web client's files, with no room, are answered wherever they land.
    @Test("a browser's ?room= and a native client's header of one room meet on one node")
    func aBrowserAndANativeClientMeetThroughHAProxy() throws {
        let root = try WebClientServeTests.webRoot()
        let cluster = try RelayCluster(environment: ["RELAY_WEB_CLIENT": "true", "RELAY_WEB_ROOT": root.path])
        let report = try WebClientServeTests.runPeer(
            "cluster", port: UInt16(cluster.haproxy.port), rooms: 12, origin: cluster.origin)
        #expect(report["met"] == "12", "\(report)")
        let app = WebClientServeTests.sha256(WebClientServeTests.app)
        #expect(report["files"] == "200 \(app)", "\(report)")
        #expect(cluster.total("relay_rooms_active") == 0, "every socket closed again")
    }

    /// kill -9 of the node holding the most rooms while 200 rooms are parked and 16 are
    /// splicing: every Mac is parked again and every pair spliced again on the two nodes left, no
    /// verifier or counted byte is lost, and at no sample is any room spliced twice.
    @Test("a node killed with 216 rooms on the cluster: every room comes back on the others")
    func killANode() throws {
        let cluster = try RelayCluster()
        let established = try (0..<216).map { _ in try Self.establishRoom(cluster) }
        var options = RelayLink.Options()
        options.connection = Self.options()
        let macs = established.map {
            TrackedLink(
                RelayLink(
                    endpoint: cluster.endpoint, room: $0.room, role: .computer, credential: .joinKey($0.key),
                    options: options))
        }
        let phones = established.prefix(16).map {
            TrackedLink(
                RelayLink(
                    endpoint: cluster.endpoint, room: $0.room, role: .device, credential: .joinKey($0.key),
                    options: options))
        }
        let all = macs + phones
        defer { for tracked in all { tracked.link.stop() } }

        func everyRoomIsBack() -> Bool {
            all.forEach { $0.pump() }
            return all.allSatisfy(\.isUp) && cluster.total("relay_rooms_spliced") == 16
                && cluster.total("relay_rooms_leased") == 216
        }
        try waitFor(timeout: 60, "every link admitted and 16 rooms spliced", everyRoomIsBack)
        try exchange(macs.prefix(16), phones, bytes: 10_000)
        // Flushed to Redis within a second: wait until every spliced room's count shows it.
        try waitFor(timeout: 15, "the quotas flushed to Redis") {
            try established.prefix(16).allSatisfy { (Int(try cluster.roomField($0.room, "qb")) ?? 0) >= 20_000 }
        }
        let before = cluster.metrics()
        let victim = try #require(
            before.max { ($0.value["relay_rooms_leased"] ?? 0) < ($1.value["relay_rooms_leased"] ?? 0) }?.key)
        #expect((before[victim]?["relay_rooms_leased"] ?? 0) > 0)
        cluster.kill(node: victim)

        var mostSpliced = 0
        try waitFor(timeout: 90, "every room back on the two nodes left") {
            mostSpliced = max(mostSpliced, cluster.total("relay_rooms_spliced"))
            return everyRoomIsBack()
        }
        #expect(mostSpliced <= 16, "a room was spliced on two nodes at once")
        #expect(cluster.metrics().count == 2)
        try cluster.haproxy.waitUntil(timeout: 10) { $0.values.filter { $0 == "UP" }.count == 2 }
        try exchange(macs.prefix(16), phones, bytes: 1000)
        for (room, _) in established {
            #expect(try cluster.roomField(room, "v").isEmpty == false, "the verifier of \(room) is in Redis")
        }
        for (room, _) in established.prefix(16) {
            #expect((Int(try cluster.roomField(room, "qb")) ?? 0) >= 20_000, "the counted bytes of \(room) survived")
        }
        // Established for the whole cluster still: an unsigned Mac is refused.
        let unsigned = try #require(throws: ConnectionError.self) {
            try RelayConnection.connect(
                to: cluster.endpoint, room: established[0].room, role: .computer, credential: .none,
                options: Self.options())
        }
        #expect(unsigned.serverError == "signature required")
    }

    /// A room's quota counts the bytes it relayed on a node that died: the node it moves to
    /// closes it where the sum crosses the quota.
    @Test("a quota crossed by traffic that moved between nodes still closes the room")
    func quotaFollowsTheRoom() throws {
        let cluster = try RelayCluster(environment: ["RELAY_DAILY_BYTE_QUOTA": "300000"])
        let (room, key) = try Self.establishRoom(cluster)
        var (mac, phone) = try Self.connectPair(cluster, room: room, key: key)
        for _ in 0..<4 {
            try mac.send(SecureRandom.bytes(50_000))
            #expect(phone.receive(timeout: 5) != nil)
        }
        try waitFor(timeout: 15, "the node's count flushed to Redis") {
            (Int(try cluster.roomField(room, "qb")) ?? 0) >= 200_000
        }
        let holder = try #require(cluster.metrics().first { ($0.value["relay_rooms_leased"] ?? 0) == 1 }?.key)
        cluster.kill(node: holder)
        mac.waitUntilEnded(timeout: 10)
        phone.waitUntilEnded(timeout: 10)
        // The clients come back (through reshards and HAProxy noticing) on another node.
        try waitFor(timeout: 60, "the pair admitted on another node") {
            guard let pair = try? Self.connectPair(cluster, room: room, key: key) else { return false }
            (mac, phone) = pair
            return true
        }
        defer {
            mac.close()
            phone.close()
        }
        try mac.send(SecureRandom.bytes(50_000))
        #expect(phone.receive(timeout: 5) != nil, "under the quota: 250 000 of 300 000")
        try mac.send(SecureRandom.bytes(60_000))
        #expect(try expectEnd(mac) == .closedByRelay(.dailyQuotaExceeded))
        #expect(try expectEnd(phone) == .closedByRelay(.dailyQuotaExceeded))
    }

    /// Redis stops: the nodes answer 503 on /healthz so HAProxy takes no new room to them, the
    /// pair already spliced goes on through HAProxy; Redis back (its append-only file intact),
    /// the nodes recover by themselves and the room still knows its verifier.
    @Test("Redis unreachable and back: running splices go on, new ones wait, nothing is lost")
    func redisOutage() throws {
        let cluster = try RelayCluster()
        let (room, key) = try Self.establishRoom(cluster)
        let (mac, phone) = try Self.connectPair(cluster, room: room, key: key)
        defer {
            mac.close()
            phone.close()
        }
        cluster.redis.stop()
        try cluster.haproxy.waitUntil(timeout: 20) { $0.values.allSatisfy { $0 == "DOWN" } }
        for _ in 0..<10 {
            try mac.send([1, 2, 3])
            #expect(phone.receive(timeout: 5) == .message([1, 2, 3]))
        }
        let (other, otherKey) = (Hex.encode(SecureRandom.bytes(32)), key)
        let refused = try #require(throws: ConnectionError.self) {
            try RelayConnection.connect(
                to: cluster.endpoint, room: other, role: .computer, credential: .joinKey(otherKey),
                options: Self.options())
        }
        #expect(refused.status == 503, "\(refused)")
        try cluster.redis.start()
        try cluster.haproxy.waitUntil(timeout: 20) { $0.values.allSatisfy { $0 == "UP" } }
        try phone.send([9])
        #expect(mac.receive(timeout: 5) == .message([9]))
        let unsigned = try #require(throws: ConnectionError.self) {
            try RelayConnection.connect(
                to: cluster.endpoint, room: room, role: .device, credential: .none, options: Self.options())
        }
        #expect(unsigned.serverError == "signature required", "the verifier survived the restart")
    }

    // MARK: - Helpers

    static func connectPair(_ cluster: RelayCluster, room: String, key: RelayJoinKey) throws -> (
        RelayConnection, RelayConnection
    ) {
        let mac = try RelayConnection.connect(
            to: cluster.endpoint, room: room, role: .computer, credential: .joinKey(key), options: options())
        do {
            return (
                mac,
                try RelayConnection.connect(
                    to: cluster.endpoint, room: room, role: .device, credential: .joinKey(key), options: options())
            )
        } catch {
            mac.close()
            throw error
        }
    }

    func exchange(_ macs: ArraySlice<TrackedLink>, _ phones: [TrackedLink], bytes count: Int) throws {
        for (mac, phone) in zip(macs, phones) {
            let (macSide, phoneSide) = (try #require(mac.connection), try #require(phone.connection))
            let bytes = SecureRandom.bytes(count)
            try macSide.send(bytes)
            #expect(phoneSide.receive(timeout: 10) == .message(bytes))
            try phoneSide.send(bytes)
            #expect(macSide.receive(timeout: 10) == .message(bytes))
        }
    }

    func expectEnd(_ connection: RelayConnection) throws -> FramePipeEnd {
        connection.waitUntilEnded(timeout: 10)
        return try #require(connection.end)
    }
}

/// A RelayLink and its latest admitted connection, followed by draining its events.
final class TrackedLink {
    let link: RelayLink
    private(set) var connection: RelayConnection?

    init(_ link: RelayLink) { self.link = link }

    func pump() {
        while let event = link.nextEvent(timeout: 0) {
            switch event {
            case .admitted(let admitted): connection = admitted
            case .waiting, .connecting, .stopped: connection = nil
            }
        }
    }

    /// Admitted, and that connection has not ended.
    var isUp: Bool { connection != nil && connection?.end == nil }
}
