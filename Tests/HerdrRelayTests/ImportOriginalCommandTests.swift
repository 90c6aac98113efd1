import Foundation
import Glibc
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import TestSupport
import Testing

/// `herdr-relay import-original` as an operator moving from the original runs it: the original's
/// file (written by hand in its format), the real binary, then the real relay serving the
/// imported room to devices that never paired again.
@Suite(.serialized) struct ImportOriginalCommandTests {
    static let origin = "https://relay.test"

    @Test func importedRoomsAdmitTheirDevicesWithTheKeysTheyHave() throws {
        let directory = try TemporaryDirectory()
        let originalPath = directory.appending("relay.db").path
        let ours = directory.appending("state/herdr-relay.sqlite").path
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let room = Hex.encodeRandomRoom()
        let broken = Hex.encodeRandomRoom()
        let now = Int64(time(nil)) * 1000
        do {
            let file = try OriginalRelayFile(path: originalPath)
            try file.putEstablishedRoom(room, verifier: key.verifier.raw, lastActivityMilliseconds: now - 60_000)
            try file.put(room: room, key: "pairingCycles", value: "0")
            try file.put(room: Hex.encodeRandomRoom(), key: "attestchallenge:AAAA", value: "{\"expiresAt\":1}")
            try file.put(room: broken, key: "verifier", value: "\"short\"")
        }

        var result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", originalPath, "--db", ours, "--dry-run"], timeout: 30)
        #expect(result.status == 3, "a refused room: \(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("would carry 1 established room(s) (0 already here)"), "\(result.stdout)")
        #expect(!FileManager.default.fileExists(atPath: ours), "a dry run creates nothing")

        result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", originalPath, "--db", ours], timeout: 30)
        #expect(result.status == 3, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("refused room \(broken): its verifier"), "\(result.stdout)")
        #expect(result.stdout.contains("carried 1 established room(s) (0 already here)"))
        #expect(result.stdout.contains("1 never established"))
        var info = stat()
        #expect(stat(ours, &info) == 0 && info.st_mode & 0o777 == 0o600, "the store is private")

        // Again: nothing new, the room already here.
        result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", originalPath, "--db", ours], timeout: 30)
        #expect(result.stdout.contains("carried 1 established room(s) (1 already here)"), "\(result.stdout)")

        // The relay serves the room: the devices' signed joins are admitted, unsigned ones are not.
        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--db", ours],
            environment: ["ATTEST_REQUIRED": "false"])
        let endpoint = try RelayEndpoint(parsing: Self.origin).connecting(
            toHost: "127.0.0.1", port: relay.port, tls: false)
        let mac = try RelayConnection.connect(to: endpoint, room: room, role: .computer, credential: .joinKey(key))
        let phone = try RelayConnection.connect(to: endpoint, room: room, role: .device, credential: .joinKey(key))
        try phone.send(Array("no re-pairing".utf8))
        guard case .message(let bytes)? = mac.receive(timeout: 10) else {
            Issue.record("the Mac got nothing")
            return
        }
        #expect(bytes == Array("no re-pairing".utf8))
        #expect(throws: ConnectionError.self) {
            try RelayConnection.connect(to: endpoint, room: room, role: .computer, credential: .none)
        }
        mac.close()
        phone.close()
        #expect(relay.terminate() == 0)
    }

    /// Moving from the original straight to a cluster: the rooms go into the cluster's Redis
    /// (RELAY_REDIS_URL, as the nodes read it) and a node on that Redis admits the devices.
    @Test func importIntoTheClustersRedis() throws {
        let directory = try TemporaryDirectory()
        let originalPath = directory.appending("relay.db").path
        let redis = try RedisServer()
        let key = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let room = Hex.encodeRandomRoom()
        do {
            let file = try OriginalRelayFile(path: originalPath)
            try file.putEstablishedRoom(
                room, verifier: key.verifier.raw, lastActivityMilliseconds: Int64(time(nil)) * 1000 - 60_000)
        }
        let environment = ProcessInfo.processInfo.environment.merging(["RELAY_REDIS_URL": redis.url()]) { $1 }
        let result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", originalPath], environment: environment, timeout: 30)
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("importing \(originalPath) into \(redis.url())"), "\(result.stdout)")
        #expect(result.stdout.contains("carried 1 established room(s) (0 already here)"), "\(result.stdout)")

        let relay = try RelayProcess(
            ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--store", redis.url()],
            environment: ["ATTEST_REQUIRED": "false"])
        let endpoint = try RelayEndpoint(parsing: Self.origin).connecting(
            toHost: "127.0.0.1", port: relay.port, tls: false)
        let mac = try RelayConnection.connect(to: endpoint, room: room, role: .computer, credential: .joinKey(key))
        defer { mac.close() }
        let unsigned = try #require(throws: ConnectionError.self) {
            try RelayConnection.connect(to: endpoint, room: room, role: .device, credential: .none)
        }
        #expect(unsigned.serverError == "signature required")
        #expect(relay.terminate() == 0)
    }

    @Test func theOriginalsFileIsNeverTheStore() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("relay.db").path
        do { _ = try OriginalRelayFile(path: path) }
        let result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", path], environment: ["RELAY_DB": path], timeout: 30)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("is both the original's file and this relay's store"))
    }

    @Test func aFileThatIsNotTheOriginalsExits66() throws {
        let directory = try TemporaryDirectory()
        let path = directory.appending("notes.txt").path
        try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
        let result = try ProcessRunner.run(
            RelayProcess.executable, ["import-original", path, "--db", directory.appending("ours.sqlite").path],
            timeout: 30)
        #expect(result.status == 66, "\(result.stderr)")
        #expect(result.stderr.contains("cannot read the original relay's database"))
        let absent = try ProcessRunner.run(
            RelayProcess.executable,
            ["import-original", directory.appending("absent.db").path, "--db", directory.appending("o.sqlite").path],
            timeout: 30)
        #expect(absent.status == 66 && absent.stderr.contains("does not exist"))
    }
}
