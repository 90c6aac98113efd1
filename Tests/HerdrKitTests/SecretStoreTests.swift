import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct SecretStoreTests {
    @Test func setGetRemove() throws {
        let dir = try TemporaryDirectory()
        let store = SecretStore(directory: ConfigDirectory(url: dir.url))
        let a = UUID()
        let b = UUID()
        #expect(store.password(for: a) == nil)
        try store.setPassword("pa'ss\"word\n", for: a)
        try store.setPassword("other", for: b)
        #expect(store.password(for: a) == "pa'ss\"word\n")
        #expect(SecretStore(file: dir.file("secrets.json")).password(for: b) == "other")
        #expect(try fileMode(dir.file("secrets.json").path) == 0o600)
        try store.setPassword(nil, for: a)
        #expect(store.password(for: a) == nil)
        #expect(store.password(for: b) == "other")
    }

    @Test func removingAMissingPasswordCreatesNothing() throws {
        let dir = try TemporaryDirectory()
        let store = SecretStore(directory: ConfigDirectory(url: dir.file("config")))
        try store.setPassword(nil, for: UUID())
        #expect(try dir.listing() == [])
    }

    @Test func concurrentWritersLoseNothing() throws {
        let dir = try TemporaryDirectory()
        let store = SecretStore(directory: ConfigDirectory(url: dir.url))
        let ids = (0..<12).map { _ in UUID() }
        let errors = runConcurrently(ids.count) { index in
            (try? SecretStore(file: dir.file("secrets.json")).setPassword("pw\(index)", for: ids[index])) == nil
        }
        #expect(!errors.contains(true))
        for (index, id) in ids.enumerated() {
            #expect(store.password(for: id) == "pw\(index)")
        }
    }

    @Test func corruptFileIsMovedAsideOnWriteAndReadsThrow() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("secrets.json")
        try writeText("garbage", to: file)
        let store = SecretStore(file: file)
        let id = UUID()
        #expect(store.password(for: id) == nil)
        let error = #expect(throws: StorageError.self) { try store.storedPassword(for: id) }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains("garbage") == false)
        try store.setPassword("new", for: id)
        #expect(store.password(for: id) == "new")
        #expect(try readText(dir.file("secrets.json.corrupt")) == "garbage")
    }
}
