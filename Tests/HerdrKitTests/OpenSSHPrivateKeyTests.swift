import Foundation
import HerdrCrypto
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct OpenSSHPrivateKeyTests {
    @Test func decodesAnSSHKeygenKey() throws {
        let dir = try TemporaryDirectory()
        let path = dir.file("id").path
        try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-C", "me@laptop", "-f", path])
        let text = try readText(dir.file("id"))
        let decoded = try OpenSSHPrivateKey(pemText: text)
        #expect(decoded.comment == "me@laptop")
        let publicLine = try readText(dir.file("id.pub"))
        #expect(try decoded.publicKey == SSHPublicKey(openSSHLine: publicLine))
        // The key really is the private half: its signature verifies under ssh-keygen's public key.
        let message = Array("challenge".utf8)
        let signature = try decoded.privateKey.signature(for: message)
        let raw = try #require(try SSHPublicKey(openSSHLine: publicLine).ed25519Key)
        #expect(raw.isValidSignature(signature, for: message))

        // Re-encoding with the file's own check integer reproduces ssh-keygen's file byte for byte.
        #expect(decoded.pemText(checkInt: try Self.checkInt(of: text)) == text)
    }

    @Test func encodedKeyIsAcceptedBySSHKeygen() throws {
        let dir = try TemporaryDirectory()
        let key = Ed25519PrivateKey()
        let encoded = OpenSSHPrivateKey(privateKey: key, comment: "herdr-remote@test")
        try AtomicFile.write(Array(encoded.pemText.utf8), to: dir.file("id"))
        let derived = try sshKeygen(["-y", "-f", dir.file("id").path]).stdout
        #expect(derived.trimmingCharacters(in: .newlines) == encoded.publicKey.openSSHString + " herdr-remote@test")
        let listed = try sshKeygen(["-l", "-E", "sha256", "-f", dir.file("id").path]).stdout
        #expect(listed.contains(encoded.publicKey.fingerprintSHA256 + " herdr-remote@test (ED25519)"))
        // ssh-keygen can also rewrite it (change its comment), which parses the private section fully.
        try sshKeygen(["-c", "-C", "renamed", "-f", dir.file("id").path])
        let rewritten = try OpenSSHPrivateKey(pemText: readText(dir.file("id")))
        #expect(rewritten.comment == "renamed")
        #expect(rewritten.privateKey.seed == key.seed)
    }

    @Test func roundTripsWithAnyCommentLength() throws {
        for length in 0..<20 {
            let comment = String(repeating: "c", count: length)
            let key = Ed25519TestKeys.privateKey(length)
            let text = OpenSSHPrivateKey(privateKey: key, comment: comment).pemText
            let decoded = try OpenSSHPrivateKey(pemText: text)
            #expect(decoded.comment == comment)
            #expect(decoded.privateKey.seed == key.seed)
            #expect(text.split(separator: "\n").dropFirst().dropLast().allSatisfy { $0.count <= 70 })
        }
        // CRLF line endings and surrounding blank lines are fine.
        let text = OpenSSHPrivateKey(privateKey: Ed25519TestKeys.privateKey(1), comment: "x").pemText
        let crlf = "\r\n" + text.replacingOccurrences(of: "\n", with: "\r\n") + "\r\n"
        #expect(try OpenSSHPrivateKey(pemText: crlf).privateKey.seed == Ed25519TestKeys.privateKey(1).seed)
    }

    @Test func refusesAnEncryptedKey() throws {
        let dir = try TemporaryDirectory()
        try sshKeygen(["-q", "-t", "ed25519", "-N", "secret", "-f", dir.file("id").path])
        let error = #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: readText(dir.file("id"))) }
        #expect(error?.kind == .encrypted)
        #expect(error?.message.contains("passphrase") == true)
    }

    @Test(arguments: [["-t", "rsa", "-b", "2048"], ["-t", "ecdsa"]])
    func refusesOtherKeyTypes(type: [String]) throws {
        let dir = try TemporaryDirectory()
        try sshKeygen(["-q"] + type + ["-N", "", "-f", dir.file("id").path])
        let error = #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: readText(dir.file("id"))) }
        #expect(error?.kind == .unsupported)
    }

    @Test func refusesPEMAndJunk() {
        let pkcs8 = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"
        #expect((try? OpenSSHPrivateKey(pemText: pkcs8)) == nil)
        #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: "") }
        #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: "ssh-ed25519 AAAA") }
        let noEnd = OpenSSHPrivateKey(privateKey: Ed25519TestKeys.privateKey(2), comment: "").pemText
            .replacingOccurrences(of: OpenSSHPrivateKey.endLine, with: "")
        #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: noEnd) }
    }

    @Test func everyTruncationThrowsInsteadOfTrapping() throws {
        let binary = try Self.binary(
            OpenSSHPrivateKey(privateKey: Ed25519TestKeys.privateKey(3), comment: "trunc").pemText)
        for length in 0..<binary.count {
            #expect(throws: SSHKeyError.self) {
                try OpenSSHPrivateKey(pemText: Self.armor(Array(binary.prefix(length))))
            }
        }
        #expect(throws: Never.self) { try OpenSSHPrivateKey(pemText: Self.armor(binary)) }
    }

    @Test func everyByteFlipIsCaughtOrHarmless() throws {
        let key = Ed25519TestKeys.privateKey(4)
        let binary = try Self.binary(OpenSSHPrivateKey(privateKey: key, comment: "flip").pemText)
        for index in binary.indices {
            var damaged = binary
            damaged[index] ^= 0x01
            // A flip may only survive inside the comment (which is free text) or one check integer's copy
            // that turns them unequal (caught); it must never yield a different key.
            if let decoded = try? OpenSSHPrivateKey(pemText: Self.armor(damaged)) {
                #expect(decoded.privateKey.seed == key.seed)
                #expect(decoded.comment != "flip")
            }
        }
    }

    @Test func inconsistentSectionsAreRefused() throws {
        let key = Ed25519TestKeys.privateKey(5)
        let binary = try Self.binary(OpenSSHPrivateKey(privateKey: key, comment: "").pemText)
        var reader = SSHWireReader(binary, context: "test")
        _ = try reader.readRaw(15)
        for _ in 0..<3 { _ = try reader.readString() }
        _ = try reader.readUInt32()
        _ = try reader.readString()
        let sectionStart = reader.offset + 4
        // Check integers differ.
        var checks = binary
        checks[sectionStart + 7] ^= 0xFF
        let error = #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: Self.armor(checks)) }
        #expect(error?.kind == .inconsistent)
        // A seed that does not derive the stored public key (a splice of two keys).
        var spliced = binary
        let seedStart = sectionStart + 8 + 4 + 11 + 4 + 32 + 4
        spliced[seedStart] ^= 0x01
        let spliceError = #expect(throws: SSHKeyError.self) { try OpenSSHPrivateKey(pemText: Self.armor(spliced)) }
        #expect(spliceError?.kind == .inconsistent)
    }

    // MARK: - Helpers

    static func binary(_ text: String) throws -> [UInt8] {
        let body = text.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        return try [UInt8](#require(Data(base64Encoded: body)))
    }

    static func armor(_ binary: [UInt8]) -> String {
        let encoded = Data(binary).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return OpenSSHPrivateKey.beginLine + "\n" + encoded + "\n" + OpenSSHPrivateKey.endLine + "\n"
    }

    /// The first check integer of an unencrypted key file.
    static func checkInt(of text: String) throws -> UInt32 {
        var reader = SSHWireReader(try binary(text), context: "test")
        _ = try reader.readRaw(15)
        for _ in 0..<3 { _ = try reader.readString() }
        _ = try reader.readUInt32()
        _ = try reader.readString()
        var section = SSHWireReader(try reader.readString(), context: "test")
        return try section.readUInt32()
    }
}
