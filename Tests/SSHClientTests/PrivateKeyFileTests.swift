import Foundation
import TestSupport
import Testing

@testable import SSHClient

/// The little a key file is read for before libssh2 gets it: size, encryption, key type. Every
/// malformed head is "not encrypted, type unknown", never a crash; libssh2 then names the problem.
@Suite("PrivateKeyFile")
struct PrivateKeyFileTests {
    static func file(_ text: String) -> PrivateKeyFile {
        PrivateKeyFile(path: "k", contents: Array(text.utf8))
    }

    static func openSSH(_ body: [UInt8]) -> PrivateKeyFile {
        file(
            "-----BEGIN OPENSSH PRIVATE KEY-----\n\(Data(body).base64EncodedString())\n-----END OPENSSH PRIVATE KEY-----\n"
        )
    }

    static func string(_ bytes: [UInt8]) -> [UInt8] {
        let n = bytes.count
        return [UInt8(n >> 24 & 0xff), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + bytes
    }

    @Test("ssh-keygen's files: encryption and type read from the OpenSSH head, PEM and PKCS#8 headers")
    func realFiles() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        for (type, passphrase, format, encrypted, keyType) in [
            ("ed25519", "", "RFC4716", false, "ssh-ed25519"),
            ("ed25519", "secret pass", "RFC4716", true, "ssh-ed25519"),
            ("rsa", "", "RFC4716", false, "ssh-rsa"), ("ecdsa", "", "PEM", false, "ecdsa"),
            ("ecdsa", "secret pass", "PEM", true, "ecdsa"), ("ecdsa", "secret pass", "PKCS8", true, nil),
        ] as [(String, String, String, Bool, String?)] {
            let path = directory.file("\(type)-\(format)-\(encrypted)").path
            try ProcessRunner.run(
                "ssh-keygen",
                ["-q", "-t", type, "-N", passphrase, "-m", format, "-f", path] + (type == "rsa" ? ["-b", "2048"] : []),
                check: true)
            let key = try PrivateKeyFile.read(path)
            #expect(key.isEncrypted == encrypted, "\(type) \(format)")
            if let keyType {
                #expect(key.keyType?.hasPrefix(keyType) == true, "\(type) \(format): \(key.keyType ?? "nil")")
            }
        }
    }

    @Test("malformed OpenSSH heads: truncated, lengths past the end, another magic")
    func malformedHeads() {
        let magic = Array("openssh-key-v1\0".utf8)
        #expect(!Self.openSSH([]).isEncrypted)
        #expect(!Self.openSSH(magic).isEncrypted)
        #expect(!Self.openSSH(magic + [0xff, 0xff, 0xff, 0xff]).isEncrypted)
        #expect(!Self.openSSH(magic + [0x7f, 0xff, 0xff, 0xff] + Array("none".utf8)).isEncrypted)
        #expect(!Self.openSSH(Array("openssh-key-v2\0".utf8) + Self.string(Array("aes256-ctr".utf8))).isEncrypted)
        #expect(Self.openSSH(magic + Self.string(Array("aes256-ctr".utf8))).isEncrypted)
        #expect(Self.openSSH(magic + Self.string(Array("aes256-ctr".utf8))).keyType == nil)
        let head =
            magic + Self.string(Array("none".utf8)) + Self.string(Array("none".utf8)) + Self.string([]) + [0, 0, 0, 1]
        #expect(Self.openSSH(head + Self.string(Self.string(Array("ssh-ed25519".utf8)))).keyType == "ssh-ed25519")
        #expect(Self.openSSH(head + [0, 0, 0, 9]).keyType == nil)
        #expect(!Self.file("-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64 at all!\n").isEncrypted)
        #expect(!Self.file("-----END OPENSSH PRIVATE KEY-----\n-----BEGIN OPENSSH PRIVATE KEY-----\n").isEncrypted)
    }

    @Test("files past 64 KiB, empty or missing are refused with a reason")
    func sizeLimits() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let atLimit = directory.file("at-limit")
        try Data(repeating: 0x41, count: PrivateKeyFile.maximumSize).write(to: atLimit)
        #expect(try PrivateKeyFile.read(atLimit.path).contents.count == PrivateKeyFile.maximumSize)
        let over = directory.file("over")
        try Data(repeating: 0x41, count: PrivateKeyFile.maximumSize + 1).write(to: over)
        #expect(throws: PrivateKeyFileError.self) { try PrivateKeyFile.read(over.path) }
        do {
            _ = try PrivateKeyFile.read(over.path)
        } catch {
            #expect(error.reason == "larger than 64 KiB, not a key")
        }
        let empty = directory.file("empty")
        try Data().write(to: empty)
        #expect(throws: PrivateKeyFileError.self) { try PrivateKeyFile.read(empty.path) }
        do {
            _ = try PrivateKeyFile.read(directory.file("missing").path)
        } catch {
            #expect(error.reason == "No such file or directory")
        }
    }
}
