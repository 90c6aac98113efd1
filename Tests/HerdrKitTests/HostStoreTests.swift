import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@MainActor @Suite struct HostStoreTests {
    // Held by the suite instance, so the directory lives exactly as long as each test.
    private let temp: TemporaryDirectory
    /// A config directory that does not exist yet, one level down, as on a first run.
    private let config: ConfigDirectory

    init() throws {
        temp = try TemporaryDirectory()
        config = ConfigDirectory(url: temp.file("config/herdr-remote"))
    }

    @Test func startsEmptyWithoutAFile() throws {
        let store = HostStore(directory: config)
        #expect(store.hosts.isEmpty)
        #expect(store.lastError == nil)
        #expect(!FileManager.default.fileExists(atPath: config.hostsFile.path))
    }

    @Test func roundTripsThroughTheFileWithMode0600() throws {
        let store = HostStore(directory: config)
        let mac = HostProfile(name: "Mac", hostname: "mac.tail1.ts.net", username: "me", herdrSession: "work")
        let pc = HostProfile(name: "PC", hostname: "100.64.0.9", port: 2222, username: "jv", platform: .windows)
        store.upsert(mac)
        store.upsert(pc)
        #expect(store.lastError == nil)
        #expect(try fileMode(config.hostsFile.path) == 0o600)
        #expect(try fileMode(config.url.path) == 0o700)

        let reloaded = HostStore(directory: config)
        #expect(reloaded.hosts == [mac, pc])

        var renamed = mac
        renamed.name = "Studio"
        reloaded.upsert(renamed)
        #expect(HostStore(directory: config).hosts == [renamed, pc])

        reloaded.delete(pc.id)
        #expect(HostStore(directory: config).hosts == [renamed])
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: config.url.path).allSatisfy { !$0.contains(".tmp-") })
    }

    @Test func fileIsPrettyJSONWithSortedKeys() throws {
        let store = HostStore(directory: config)
        store.upsert(HostProfile(name: "Mac", hostname: "mac", username: "me"))
        let text = try readText(config.hostsFile)
        #expect(text.hasPrefix("[\n  {\n"))
        let keys = ["\"hostname\"", "\"id\"", "\"name\"", "\"platform\"", "\"port\"", "\"username\""]
        let positions = keys.compactMap { text.range(of: $0)?.lowerBound }
        #expect(positions.count == keys.count)
        #expect(positions == positions.sorted())
    }

    @Test func passwordsLiveOnlyInSecretsJSON() throws {
        let store = HostStore(directory: config)
        let host = HostProfile(name: "Mac", hostname: "mac", username: "me")
        store.upsert(host)
        store.setPassword("hunter2-correct-horse", for: host.id)
        store.upsert(host)
        #expect(store.lastError == nil)
        #expect(store.password(for: host.id) == "hunter2-correct-horse")
        #expect(!(try readText(config.hostsFile)).contains("hunter2"))
        #expect(try readText(config.secretsFile).contains("hunter2-correct-horse"))
        #expect(try fileMode(config.secretsFile.path) == 0o600)
        #expect(HostStore(directory: config).password(for: host.id) == "hunter2-correct-horse")

        store.setPassword(nil, for: host.id)
        #expect(store.password(for: host.id) == nil)
        #expect(!(try readText(config.secretsFile)).contains("hunter2"))
    }

    @Test func deleteRemovesThePasswordButKeepsTheHostKeyPin() throws {
        let store = HostStore(directory: config)
        let host = HostProfile(name: "Mac", hostname: "Mac.ts.net", username: "me")
        let other = HostProfile(name: "Other", hostname: "other", username: "me")
        store.upsert(host)
        store.upsert(other)
        store.setPassword("secret-one", for: host.id)
        store.setPassword("secret-two", for: other.id)
        let pins = HostKeyPins(directory: config)
        let key = SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(0))
        #expect(try pins.pin(key, hostname: host.hostname, port: host.port))

        store.delete(host.id)
        #expect(store.lastError == nil)
        #expect(store.hosts == [other])
        #expect(store.password(for: host.id) == nil)
        #expect(store.password(for: other.id) == "secret-two")
        #expect(!(try readText(config.secretsFile)).contains("secret-one"))
        #expect(try pins.pinnedKey(hostname: "mac.ts.net", port: 22) == key)
    }

    @Test func corruptFileIsMovedAsideAndNeverOverwritesAnEarlierOne() throws {
        try config.create()
        try writeText("{ this is not json", to: config.hostsFile)
        let first = HostStore(directory: config)
        #expect(first.hosts.isEmpty)
        let message = try #require(first.lastError)
        #expect(message.contains("hosts.json"))
        #expect(message.contains("hosts.json.corrupt"))
        #expect(!FileManager.default.fileExists(atPath: config.hostsFile.path))
        let aside = config.url.appendingPathComponent("hosts.json.corrupt")
        #expect(try readText(aside) == "{ this is not json")

        // The store still works, and saves a fresh file.
        let host = HostProfile(name: "Mac", hostname: "mac", username: "me")
        first.upsert(host)
        #expect(first.lastError == nil)
        #expect(HostStore(directory: config).hosts == [host])

        // A second corruption goes to a timestamped name; the first stays as it was.
        try writeText("[{\"id\": 42}]", to: config.hostsFile)
        let second = HostStore(directory: config)
        #expect(second.hosts.isEmpty)
        #expect(second.lastError != nil)
        #expect(try readText(aside) == "{ this is not json")
        let names = try FileManager.default.contentsOfDirectory(atPath: config.url.path)
        let stamped = names.filter { $0.hasPrefix("hosts.json.corrupt-") }
        #expect(stamped.count == 1)
        #expect(try readText(config.url.appendingPathComponent(stamped[0])) == "[{\"id\": 42}]")

        // And a third within the same second still finds a free name.
        try writeText("nope", to: config.hostsFile)
        _ = HostStore(directory: config)
        let after = try FileManager.default.contentsOfDirectory(atPath: config.url.path)
        #expect(after.filter { $0.hasPrefix("hosts.json.corrupt") }.count == 3)
    }

    @Test func anUnreadableFileIsNeitherMovedNorOverwritten() throws {
        // A directory where the file should be: open works, read fails with EISDIR.
        try FileManager.default.createDirectory(at: config.hostsFile, withIntermediateDirectories: true)
        let store = HostStore(directory: config)
        #expect(store.hosts.isEmpty)
        #expect(store.lastError?.contains("will not be saved") == true)
        store.upsert(HostProfile(name: "Mac", hostname: "mac", username: "me"))
        #expect(store.lastError?.hasPrefix("Not saved") == true)
        #expect(store.hosts.count == 1)
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: config.hostsFile.path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
        #expect(!FileManager.default.fileExists(atPath: config.hostsFile.path + ".corrupt"))
    }

    @Test func handWrittenFileWithMissingDefaultsLoads() throws {
        try config.create()
        let json = #"[{"id":"4F2D2F36-0D5A-4C8E-9B7E-2A1C3E4F5A6B","name":"Mac","hostname":"mac","username":"me"}]"#
        try writeText(json, to: config.hostsFile)
        let store = HostStore(directory: config)
        #expect(store.lastError == nil)
        #expect(store.hosts.count == 1)
        #expect(store.hosts.first?.port == 22)
        #expect(store.hosts.first?.platform == .unix)
    }

    @Test func hostNamedPrefersExactThenUniqueCaseInsensitiveMatch() throws {
        let store = HostStore(directory: config)
        let mac = HostProfile(name: "Mac", hostname: "mac", username: "me")
        let macLower = HostProfile(name: "mac", hostname: "mac2", username: "me")
        let pc = HostProfile(name: "PC", hostname: "pc", username: "me")
        store.upsert(mac)
        store.upsert(pc)
        #expect(store.host(named: "pc") == pc)
        #expect(store.host(named: "Mac") == mac)
        store.upsert(macLower)
        #expect(store.host(named: "mac") == macLower)
        #expect(store.host(named: "MAC") == nil)  // ambiguous
        #expect(store.host(named: "nobody") == nil)
    }

    @Test func standardDirectoryFollowsXDGThenHome() {
        let xdg = ConfigDirectory.standard(environment: ["XDG_CONFIG_HOME": "/x/cfg", "HOME": "/home/u"])
        #expect(xdg.url.path == "/x/cfg/herdr-remote")
        let relative = ConfigDirectory.standard(environment: ["XDG_CONFIG_HOME": "cfg", "HOME": "/home/u"])
        #expect(relative.url.path == "/home/u/.config/herdr-remote")
        let home = ConfigDirectory.standard(environment: ["HOME": "/home/u"])
        #expect(home.url.path == "/home/u/.config/herdr-remote")
        #expect(home.hostsFile.lastPathComponent == "hosts.json")
        #expect(home.secretsFile.lastPathComponent == "secrets.json")
        #expect(home.knownHostsFile.lastPathComponent == "known_hosts")
        #expect(home.deviceKeyFile.lastPathComponent == "id_ed25519")
        #expect(home.devicePublicKeyFile.lastPathComponent == "id_ed25519.pub")
    }
}
