import Foundation
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct DeviceKeyTests {
    @Test func createdOnFirstUseInOpenSSHFormat() throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.file("herdr-remote"))
        let line = try DeviceKey.publicKeyOpenSSH(in: config)

        #expect(try fileMode(config.deviceKeyFile.path) == 0o600)
        #expect(try fileMode(config.devicePublicKeyFile.path) == 0o644)
        #expect(try fileMode(config.url.path) == 0o700)
        #expect(line.hasPrefix("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI"))
        #expect(line.hasSuffix(" " + DeviceKey.defaultComment()))
        #expect(DeviceKey.defaultComment().hasPrefix("herdr-remote@"))
        #expect(try readText(config.devicePublicKeyFile) == line + "\n")

        // OpenSSH reads the same key from the file we wrote.
        let derived = try sshKeygen(["-y", "-f", config.deviceKeyFile.path]).stdout
        #expect(derived.trimmingCharacters(in: .newlines) == line)
        let pair = try DeviceKey.load(in: config)
        let listed = try sshKeygen(["-l", "-E", "sha256", "-f", config.deviceKeyFile.path]).stdout
        #expect(listed.split(separator: " ")[1] == Substring(pair.publicKey.fingerprintSHA256))
        #expect(pair.authorizedKeysLine == line)
        #expect(try dir.listing("herdr-remote") == ["id_ed25519", "id_ed25519.pub"])
    }

    @Test func laterLoadsReturnTheSameKey() throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.url)
        let first = try DeviceKey.load(in: config)
        let fileBytes = try Data(contentsOf: config.deviceKeyFile)
        let second = try DeviceKey.load(in: config)
        #expect(second.publicKey == first.publicKey)
        #expect(second.privateKey.seed == first.privateKey.seed)
        #expect(second.comment == first.comment)
        #expect(try Data(contentsOf: config.deviceKeyFile) == fileBytes)
    }

    @Test func concurrentFirstUseYieldsOneKey() throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.file("fresh"))
        let results = runConcurrently(12) { _ in try? DeviceKey.load(in: config).authorizedKeysLine }
        let lines = Set(results.compactMap { $0 })
        #expect(results.allSatisfy { $0 != nil })
        #expect(lines.count == 1)
        #expect(try DeviceKey.publicKeyOpenSSH(in: config) == lines.first)
        #expect(try dir.listing("fresh") == ["id_ed25519", "id_ed25519.pub"])
    }

    @Test func anExistingSSHKeygenKeyIsUsedAsIs() throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.url)
        try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "imported", "-f", config.deviceKeyFile.path])
        try FileManager.default.removeItem(at: config.devicePublicKeyFile)
        let pair = try DeviceKey.load(in: config)
        #expect(pair.comment == "imported")
        let derived = try sshKeygen(["-y", "-f", config.deviceKeyFile.path]).stdout
        #expect(derived.trimmingCharacters(in: .newlines) == pair.authorizedKeysLine)
        #expect(try readText(config.devicePublicKeyFile) == pair.authorizedKeysLine + "\n")
    }

    @Test(arguments: [
        "garbage\n", "", "-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n",
    ])
    func corruptKeyFileThrowsAndIsLeftUntouched(contents: String) throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.url)
        try writeText(contents, to: config.deviceKeyFile)
        let error = #expect(throws: StorageError.self) { try DeviceKey.load(in: config) }
        #expect(error?.kind == .corrupt)
        #expect(error?.message.contains(config.deviceKeyFile.path) == true)
        #expect(try readText(config.deviceKeyFile) == contents)
        #expect(try dir.listing() == ["id_ed25519"])
    }

    @Test func encryptedKeyFileIsRefusedWithTheReason() throws {
        let dir = try TemporaryDirectory()
        let config = ConfigDirectory(url: dir.url)
        try sshKeygen(["-q", "-t", "ed25519", "-N", "pass", "-f", config.deviceKeyFile.path])
        let before = try Data(contentsOf: config.deviceKeyFile)
        let error = #expect(throws: StorageError.self) { try DeviceKey.load(in: config) }
        #expect(error?.message.contains("passphrase") == true)
        #expect(try Data(contentsOf: config.deviceKeyFile) == before)
    }
}
