import Foundation
import TestSupport
import Testing

@testable import HerdrKit

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct AtomicFileTests {
    @Test func writesContentWithMode0600AndLeavesNoTempFile() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("data.json")
        try AtomicFile.write(Array("hello\n".utf8), to: target)
        #expect(try readText(target) == "hello\n")
        #expect(try fileMode(target.path) == 0o600)
        #expect(try dir.listing() == ["data.json"])
    }

    @Test func replacesAnExistingFileAndItsMode() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("data")
        try writeText("old contents that are longer", to: target)
        chmod(target.path, 0o644)
        try AtomicFile.write(Array("new".utf8), to: target)
        #expect(try readText(target) == "new")
        #expect(try fileMode(target.path) == 0o600)
        #expect(try dir.listing() == ["data"])
    }

    @Test func honoursAnExplicitMode() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("key.pub")
        try AtomicFile.write(Array("ssh-ed25519 AAAA".utf8), to: target, mode: 0o644)
        #expect(try fileMode(target.path) == 0o644)
    }

    @Test func writesLargeAndEmptyContent() throws {
        let dir = try TemporaryDirectory()
        let big = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try AtomicFile.write(big, to: dir.file("big"))
        #expect([UInt8](try Data(contentsOf: dir.file("big"))) == big)
        try AtomicFile.write([], to: dir.file("empty"))
        #expect(try Data(contentsOf: dir.file("empty")).isEmpty)
    }

    @Test func failureWhenTargetIsADirectoryRemovesTheTempFile() throws {
        let dir = try TemporaryDirectory()
        let target = dir.file("occupied")
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        let error = #expect(throws: StorageError.self) { try AtomicFile.write(Array("x".utf8), to: target) }
        #expect(error?.kind == .rename)
        #expect(error?.message.contains(target.path) == true)
        #expect(try dir.listing() == ["occupied"])
    }

    @Test func failureInAMissingDirectoryThrowsOpen() throws {
        let dir = try TemporaryDirectory()
        let error = #expect(throws: StorageError.self) {
            try AtomicFile.write(Array("x".utf8), to: dir.file("missing/file"))
        }
        #expect(error?.kind == .open)
        #expect(error?.errno == ENOENT)
        #expect(try dir.listing() == [])
    }

    // Root ignores directory permissions, so the write runs with another file-system user.
    @Test func failureInAReadOnlyDirectoryLeavesTheTargetUntouched() throws {
        let dir = try TemporaryDirectory(mode: 0o755)
        let target = dir.file("data")
        try writeText("old", to: target)
        chmod(dir.path, 0o555)
        defer { chmod(dir.path, 0o700) }
        let failure = try asFileSystemUser { () -> StorageError? in
            do {
                try AtomicFile.write(Array("new".utf8), to: target)
                return nil
            } catch {
                return error as? StorageError
            }
        }
        #expect(failure != nil)
        #expect(try readText(target) == "old")
        #expect(try dir.listing() == ["data"])
    }

    @Test func readIfPresentHandlesMissingAndOversizedFiles() throws {
        let dir = try TemporaryDirectory()
        #expect(try AtomicFile.readIfPresent(dir.file("none"), maxBytes: 10) == nil)
        try writeText("0123456789", to: dir.file("ten"))
        #expect(try AtomicFile.readIfPresent(dir.file("ten"), maxBytes: 10) == Array("0123456789".utf8))
        let error = #expect(throws: StorageError.self) { try AtomicFile.readIfPresent(dir.file("ten"), maxBytes: 9) }
        #expect(error?.kind == .tooLarge)
    }
}
