import Foundation
import Glibc
import Synchronization
import TestSupport
import Testing

@testable import SSHPairingHost

@Suite struct AuthorizedKeysFileTests {
    @Test func appendCreatesTheFile0600WithALockFileBeside() throws {
        let directory = try TemporaryDirectory()
        let file = AuthorizedKeysFile(path: directory.file("authorized_keys").path)
        try file.append(["ssh-ed25519 AAAA one", "ssh-ed25519 AAAA two"])
        #expect(try readText(directory.file("authorized_keys")) == "ssh-ed25519 AAAA one\nssh-ed25519 AAAA two\n")
        #expect(try fileMode(directory.file("authorized_keys").path) == 0o600)
        #expect(try directory.listing() == ["authorized_keys", "authorized_keys.lock"])
    }

    @Test func rewritesKeepModeOwnerAndEveryOtherByte() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        // CRLF, invalid UTF-8, a blank line, a comment, and no final newline.
        let original: [UInt8] =
            Array("# mine\r\nssh-ed25519 AAAA keep\n\n".utf8) + [0xFF, 0xFE, 0x0A] + Array("last line".utf8)
        try Data(original).write(to: url)
        chmod(url.path, 0o640)
        let user = try TestUser.ensure()
        chown(url.path, user.uid, user.gid)

        let file = AuthorizedKeysFile(path: url.path)
        try file.append(["ssh-ed25519 AAAA added"])
        #expect([UInt8](try Data(contentsOf: url)) == original + Array("\nssh-ed25519 AAAA added\n".utf8))
        var info = stat()
        stat(url.path, &info)
        #expect(info.st_mode & 0o7777 == 0o640)
        #expect(info.st_uid == user.uid)
        #expect(info.st_gid == user.gid)

        let removed = try file.removeLines { $0 == "ssh-ed25519 AAAA added" }
        #expect(removed == ["ssh-ed25519 AAAA added"])
        // The newline the append had to add before its line stays; everything else is as it was.
        #expect([UInt8](try Data(contentsOf: url)) == original + Array("\n".utf8))
        #expect(try file.removeLines { $0.hasPrefix("nothing") }.isEmpty)
        #expect(try directory.listing() == ["authorized_keys", "authorized_keys.lock"])
    }

    @Test func removingTheLastUnterminatedLineKeepsTheRestExact() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        try writeText("a\nb\nc", to: url)
        let file = AuthorizedKeysFile(path: url.path)
        try file.removeLines { $0 == "b" }
        #expect(try readText(url) == "a\nc")
        try file.removeLines { $0 == "c" }
        #expect(try readText(url) == "a")
        try writeText("a\nb\nc", to: url)
        try file.removeLines { $0 != "a" }
        #expect(try readText(url) == "a")
        try writeText("a\nb\n", to: url)
        try file.removeLines(containing: "b") { _ in true }
        #expect(try readText(url) == "a\n")
    }

    @Test func removingFromAMissingFileWritesNothing() throws {
        let directory = try TemporaryDirectory()
        let file = AuthorizedKeysFile(path: directory.file("authorized_keys").path)
        #expect(try file.removeLines { _ in true }.isEmpty)
        #expect(try file.contents().isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory.file("authorized_keys").path))
    }

    @Test func appendUnlessPresentSkipsAKnownKey() throws {
        let directory = try TemporaryDirectory()
        let file = AuthorizedKeysFile(path: directory.file("authorized_keys").path)
        #expect(try file.append("ssh-ed25519 AAAA x", unlessAny: { $0.hasPrefix("ssh-ed25519 AAAA") }))
        #expect(try !file.append("ssh-ed25519 AAAA y", unlessAny: { $0.hasPrefix("ssh-ed25519 AAAA") }))
        #expect(try file.lines() == ["ssh-ed25519 AAAA x"])
    }

    @Test func aSymlinkedFileIsChangedAtItsTarget() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.file("dotfiles"), withIntermediateDirectories: true)
        let target = directory.file("dotfiles/authorized_keys")
        try writeText("kept\n", to: target)
        symlink(target.path, directory.file("authorized_keys").path)
        let file = AuthorizedKeysFile(path: directory.file("authorized_keys").path)
        try file.append(["added"])
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: directory.file("authorized_keys").path)
                == target.path)
        #expect(try readText(target) == "kept\nadded\n")
        #expect(try directory.listing("dotfiles") == ["authorized_keys", "authorized_keys.lock"])
    }

    @Test func aDirectoryInPlaceOfTheFileIsRefused() throws {
        let directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(
            at: directory.file("authorized_keys"), withIntermediateDirectories: true)
        let error = #expect(throws: HostError.self) {
            try AuthorizedKeysFile(path: directory.file("authorized_keys").path).append(["x"])
        }
        #expect(error?.kind == .unsafe || error?.kind == .io)
    }

    @Test func linesAppendedToTheOldFileDuringARewriteAreKept() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        try writeText("first\n", to: url)
        // A writer that opened the file before the rewrite and writes while it is under way.
        let writer = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        var file = AuthorizedKeysFile(path: url.path)
        file.testHookBeforeRename = {
            _ = "late before rename\n".withCString { write(writer, $0, strlen($0)) }
            close(writer)
        }
        try file.append(["ours"])
        #expect(try readText(url) == "first\nours\nlate before rename\n")
    }

    @Test func aWriterStillHoldingTheOldFileAfterTheRenameIsWaitedFor() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        try writeText("first\n", to: url)
        let writer = open(url.path, O_WRONLY | O_APPEND | O_CLOEXEC)
        let released = DispatchSemaphore(value: 0)
        var file = AuthorizedKeysFile(path: url.path)
        file.testHookBeforeRename = {
            // Writes 100 ms after the rename, then closes: the rewrite must still catch the line.
            Thread {
                usleep(100_000)
                _ = "late after rename\n".withCString { write(writer, $0, strlen($0)) }
                close(writer)
                released.signal()
            }.start()
        }
        try file.append(["ours"])
        released.wait()
        #expect(try readText(url) == "first\nours\nlate after rename\n")
    }

    @Test func aReaderHoldingTheFileOpenDoesNotDelayARewrite() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        try writeText("first\n", to: url)
        let reader = open(url.path, O_RDONLY | O_CLOEXEC)
        defer { close(reader) }
        let started = Date()
        try AuthorizedKeysFile(path: url.path).append(["ours"])
        #expect(Date().timeIntervalSince(started) < AuthorizedKeysFile.postRenameLimit / 2)
    }

    @Test func aWriterHoldingTheLockMakesOthersWait() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        try writeText("", to: url)
        let lock = open(url.path + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        defer { close(lock) }
        flock(lock, LOCK_EX)
        let finished = Mutex<Date?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? AuthorizedKeysFile(path: url.path).append(["waited"])
            finished.withLock { $0 = Date() }
            done.signal()
        }.start()
        usleep(300_000)
        #expect(finished.withLock { $0 } == nil)
        #expect(try readText(url) == "")
        let released = Date()
        flock(lock, LOCK_UN)
        done.wait()
        #expect(try #require(finished.withLock { $0 }) >= released)
        #expect(try readText(url) == "waited\n")
    }

    @Test func thirtyTwoWritersAndPlainAppendsLoseNoLine() throws {
        let directory = try TemporaryDirectory()
        let url = directory.file("authorized_keys")
        let baseline = "# first line, by hand\nssh-ed25519 AAAA someone\n"
        try writeText(baseline, to: url)
        let stop = directory.file("stop")
        let appender = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                """
                i=0
                while [ ! -e '\(stop.path)' ] && [ $i -lt 20000 ]; do
                  echo "plain $i" >> '\(url.path)'
                  i=$((i+1))
                  sleep 0.001
                done
                echo $i > '\(stop.path).count'
                """,
            ])
        // Each writer adds 6 lines one by one and removes its odd ones again, all through the lock.
        _ = runConcurrently(32) { writer in
            let file = AuthorizedKeysFile(path: url.path)
            for line in 0..<6 { try? file.append(["writer \(writer) line \(line)"]) }
            _ = try? file.removeLines(containing: "writer \(writer) line ") { Int($0.suffix(1))! % 2 == 1 }
            return 0
        }
        try writeText("", to: stop)
        #expect(appender.wait(timeout: 60) == 0)
        let appended = Int(
            try readText(URL(fileURLWithPath: stop.path + ".count")).trimmingCharacters(in: .whitespacesAndNewlines))!
        #expect(appended > 0)
        let final = try readText(url)
        let keptFirst = final.hasPrefix(baseline)
        #expect(keptFirst)
        let rest = final.dropFirst(baseline.count).split(separator: "\n").map(String.init)
        let expected =
            (0..<appended).map { "plain \($0)" }
            + (0..<32).flatMap { writer in [0, 2, 4].map { "writer \(writer) line \($0)" } }
        let missing = Set(expected).subtracting(rest)
        let unexpected = Set(rest).subtracting(expected)
        #expect(missing.isEmpty, "\(missing.count) lines lost, e.g. \(missing.sorted().prefix(5))")
        #expect(unexpected.isEmpty, "\(unexpected.count) unexpected, e.g. \(unexpected.sorted().prefix(5))")
        #expect(rest.count == expected.count)
        #expect(try directory.listing().filter { $0.contains(".herdr-") }.isEmpty)
    }
}
