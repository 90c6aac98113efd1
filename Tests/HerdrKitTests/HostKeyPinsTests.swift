import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct HostKeyPinsTests {
    private func key(_ n: Int) -> SSHPublicKey { SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(n)) }

    @Test func sshKeygenFindsOurEntries() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(directory: ConfigDirectory(url: dir.url))
        #expect(try pins.pin(key(1), hostname: "Mac.Tail1.ts.net.", port: 22))
        #expect(try pins.pin(key(2), hostname: "mac.tail1.ts.net", port: 2222))
        #expect(try pins.pin(key(3), hostname: "100.64.0.7", port: 22))
        let file = pins.file.path
        #expect(try fileMode(file) == 0o600)
        #expect(
            try readText(pins.file)
                == "mac.tail1.ts.net \(key(1).openSSHString)\n[mac.tail1.ts.net]:2222 \(key(2).openSSHString)\n"
                + "100.64.0.7 \(key(3).openSSHString)\n")

        let found22 = try sshKeygen(["-F", "mac.tail1.ts.net", "-f", file]).stdout
        #expect(found22.contains("mac.tail1.ts.net \(key(1).openSSHString)"))
        #expect(!found22.contains(key(2).openSSHString))
        let found2222 = try sshKeygen(["-F", "[mac.tail1.ts.net]:2222", "-f", file]).stdout
        #expect(found2222.contains(key(2).openSSHString))
        #expect(!found2222.contains(key(1).openSSHString))
        #expect(try sshKeygen(["-F", "100.64.0.7", "-f", file]).stdout.contains(key(3).openSSHString))
        // A host never pinned is not found (ssh-keygen exits 1).
        #expect(try ProcessRunner.run("/usr/bin/ssh-keygen", ["-F", "mac", "-f", file]).status == 1)
    }

    @Test func readsEntriesOpenSSHWrote() throws {
        let dir = try TemporaryDirectory()
        try sshKeygen(["-q", "-t", "ecdsa", "-N", "", "-f", dir.file("hostkey").path])
        let hostKey = try SSHPublicKey(openSSHLine: readText(dir.file("hostkey.pub")))
        // What ssh itself appends for a host on a non-default port, plus a hashed line for another host.
        try writeText(
            "[box.example]:2200 \(hostKey.openSSHString)\n|1|c2FsdA==|aGFzaA== \(key(9).openSSHString)\n",
            to: dir.file("known_hosts"))
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(try pins.pinnedKey(hostname: "BOX.example", port: 2200) == hostKey)
        #expect(try pins.pinnedKey(hostname: "box.example", port: 22) == nil)
        #expect(try pins.allPins().map(\.host) == ["box.example"])
    }

    @Test func pinningIsAddOnly() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(try pins.pinnedKey(hostname: "host", port: 22) == nil)
        #expect(try pins.pin(key(1), hostname: "host", port: 22))
        #expect(try pins.pin(key(1), hostname: "host", port: 22))
        #expect(try !pins.pin(key(2), hostname: "host", port: 22))
        #expect(try pins.pinnedKey(hostname: "host", port: 22) == key(1))
        #expect(try readText(pins.file) == "host \(key(1).openSSHString)\n")
    }

    @Test func forgetRemovesOnlyThatHostAndPort() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(try pins.pin(key(1), hostname: "host", port: 22))
        #expect(try pins.pin(key(2), hostname: "host", port: 2222))
        #expect(try pins.forget(hostname: "HOST.", port: 22))
        #expect(try !pins.forget(hostname: "host", port: 22))
        #expect(try pins.pinnedKey(hostname: "host", port: 22) == nil)
        #expect(try pins.pinnedKey(hostname: "host", port: 2222) == key(2))
        // After forgetting, a new key can be pinned.
        #expect(try pins.pin(key(3), hostname: "host", port: 22))
        #expect(try pins.pinnedKey(hostname: "host", port: 22) == key(3))
    }

    @Test("forgetting a host never lets a pattern it shared a line with begin the line as a comment or marker")
    func forgettingKeepsTheRestOfTheLineMeaningWhatItMeant() throws {
        // Found by the known-hosts fuzz target (Fuzz/regressions/known-hosts/comment-left-first):
        // `host.example.com,#ther KEY` without its first pattern became the comment `#ther KEY`.
        let dir = try TemporaryDirectory()
        let file = dir.file("known_hosts")
        let pins = HostKeyPins(file: file)
        try Data(
            """
            Host.Example.COM.,#ther \(key(1).openSSHString)
            a.example,@x,b.example \(key(2).openSSHString)
            c.example,|1|x,[d.example]:2222 \(key(3).openSSHString)

            """.utf8
        ).write(to: file)
        // Patterns that name no host that can be pinned are not listed as pins.
        #expect(
            try pins.allPins().map { "\($0.host):\($0.port)" } == [
                "host.example.com:22", "a.example:22", "b.example:22", "c.example:22", "d.example:2222",
            ])
        #expect(try pins.forget(hostname: "host.example.com", port: 22))
        #expect(try pins.forget(hostname: "a.example", port: 22))
        #expect(try pins.forget(hostname: "c.example", port: 22))
        #expect(
            try readText(file)
                == "b.example,@x \(key(2).openSSHString)\n[d.example]:2222,|1|x \(key(3).openSSHString)\n")
        #expect(try pins.pinnedKey(hostname: "b.example", port: 22) == key(2))
        #expect(try pins.pinnedKey(hostname: "d.example", port: 2222) == key(3))
    }

    @Test func forgettingWithNoFileOrDirectoryIsANoOp() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(directory: ConfigDirectory(url: dir.file("never-created")))
        #expect(try !pins.forget(hostname: "host", port: 22))
        #expect(try pins.allPins().isEmpty)
        #expect(try dir.listing() == [])
    }

    @Test func spellingsShareOnePinButDistinctNamesDoNot() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(try pins.pin(key(1), hostname: "Host.TS.net.", port: 22))
        #expect(try pins.pinnedKey(hostname: "host.ts.net", port: 22) == key(1))
        #expect(try pins.pinnedKey(hostname: " HOST.ts.net ", port: 22) == key(1))
        #expect(try !pins.pin(key(2), hostname: "host.ts.net", port: 22))
        #expect(try pins.pinnedKey(hostname: "host", port: 22) == nil)
        #expect(try pins.pinnedKey(hostname: "100.64.0.1", port: 22) == nil)
        #expect(try pins.pin(key(2), hostname: "host", port: 22))
        #expect(try pins.allPins().count == 2)
    }

    @Test func otherLinesAreKeptVerbatim() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("known_hosts")
        let existing = [
            "# my notes",
            "",
            "|1|F1E1KeoE/eEWhi10WpGv4OdiO6Y=|3988QV0VE8wmZL7suNrYQLITLCg= \(key(7).openSSHString)",
            "@cert-authority *.example.com \(key(8).openSSHString)",
            "*.wild.example \(key(6).openSSHString)",
            "broken line without a key",
            "other.example ssh-ed25519 not-base64!",
            "a.example,b.example \(key(5).openSSHString) shared comment",
            "crlf.example \(key(4).openSSHString)\r",
        ].joined(separator: "\n")
        // No final newline, and a byte that is not UTF-8.
        let bytes = Array(existing.utf8) + Array("\n\u{1}odd".utf8) + [0xFF]
        try Data(bytes).write(to: file)
        let pins = HostKeyPins(file: file)

        #expect(try pins.pinnedKey(hostname: "b.example", port: 22) == key(5))
        #expect(try pins.pinnedKey(hostname: "crlf.example", port: 22) == key(4))
        #expect(try pins.pinnedKey(hostname: "x.wild.example", port: 22) == nil)
        #expect(try pins.pinnedKey(hostname: "other.example", port: 22) == nil)
        #expect(try pins.pin(key(1), hostname: "new.example", port: 22))
        let after = [UInt8](try Data(contentsOf: file))
        #expect(after == bytes + Array("\nnew.example \(key(1).openSSHString)\n".utf8))

        // Forgetting one name of a shared line keeps the other.
        #expect(try pins.forget(hostname: "a.example", port: 22))
        #expect(try pins.pinnedKey(hostname: "a.example", port: 22) == nil)
        #expect(try pins.pinnedKey(hostname: "b.example", port: 22) == key(5))
        let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
        #expect(text.contains("\nb.example \(key(5).openSSHString) shared comment\n"))
        #expect(text.contains("# my notes\n\n|1|F1E1"))
        #expect(text.contains("broken line without a key\n"))
    }

    @Test func concurrentPinsOfANewHostKeepExactlyOne() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("known_hosts")
        let results = runConcurrently(16) { index in
            (try? HostKeyPins(file: file).pin(
                SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(index)), hostname: "new.ts.net", port: 22))
        }
        #expect(results.allSatisfy { $0 != nil })
        let winners = results.indices.filter { results[$0] == true }
        #expect(winners.count == 1)
        let pins = HostKeyPins(file: file)
        let pinned = try #require(try pins.pinnedKey(hostname: "new.ts.net", port: 22))
        #expect(pinned == key(try #require(winners.first)))
        #expect(try readText(file).split(separator: "\n").count == 1)
        #expect(try dir.listing() == ["known_hosts", "known_hosts.lock"])
    }

    @Test func concurrentPinsOfDifferentHostsAreAllKept() throws {
        let dir = try TemporaryDirectory()
        let file = dir.file("known_hosts")
        let results = runConcurrently(16) { index in
            (try? HostKeyPins(file: file).pin(
                SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(index)), hostname: "h\(index)", port: 22))
        }
        #expect(results.allSatisfy { $0 == true })
        let all = try HostKeyPins(file: file).allPins()
        #expect(all.count == 16)
        #expect(Set(all.map(\.host)) == Set((0..<16).map { "h\($0)" }))
    }

    @Test(arguments: ["", "a b", "a,b", "[a]:22", "*.x", "!x", "|1|x", "#x", "@revoked", "ünï", "a\nb"])
    func hostnamesThatWouldBreakTheFormatAreRefused(hostname: String) throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        let error = #expect(throws: StorageError.self) { try pins.pin(key(1), hostname: hostname, port: 22) }
        #expect(error?.kind == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: pins.file.path))
    }

    @Test func portsOutsideTheTCPRangeAreRefused() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(throws: StorageError.self) { try pins.pin(key(1), hostname: "h", port: 0) }
        #expect(throws: StorageError.self) { try pins.pin(key(1), hostname: "h", port: 65_536) }
        #expect(throws: StorageError.self) { try pins.pinnedKey(hostname: "h", port: -1) }
    }

    @Test func anUnreadableFileIsAnErrorNotAnEmptyPinList() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(at: dir.file("known_hosts"), withIntermediateDirectories: false)
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(throws: StorageError.self) { try pins.pinnedKey(hostname: "h", port: 22) }
        #expect(throws: StorageError.self) { try pins.pin(key(1), hostname: "h", port: 22) }
    }

    @Test func ipv6HostsUseBracketsOffPort22() throws {
        let dir = try TemporaryDirectory()
        let pins = HostKeyPins(file: dir.file("known_hosts"))
        #expect(try pins.pin(key(1), hostname: "FD7A:115C:A1E0::1", port: 22))
        #expect(try pins.pin(key(2), hostname: "fd7a:115c:a1e0::1", port: 2222))
        let file = pins.file.path
        #expect(try sshKeygen(["-F", "fd7a:115c:a1e0::1", "-f", file]).stdout.contains(key(1).openSSHString))
        #expect(try sshKeygen(["-F", "[fd7a:115c:a1e0::1]:2222", "-f", file]).stdout.contains(key(2).openSSHString))
        #expect(try pins.pinnedKey(hostname: "fd7a:115c:a1e0::1", port: 2222) == key(2))
    }
}
