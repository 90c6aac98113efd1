import Foundation
import HerdrCrypto
import TestSupport
import Testing

@testable import HerdrKit

@Suite struct SSHPublicKeyTests {
    /// ssh-keygen's own idea of the key: the `.pub` line and the SHA256 fingerprint.
    private func generate(_ type: [String], in dir: TemporaryDirectory) throws -> (line: String, fingerprint: String) {
        let path = dir.file("key").path
        try sshKeygen(["-q"] + type + ["-N", "", "-C", "someone@somewhere", "-f", path])
        let line = try readText(URL(fileURLWithPath: path + ".pub")).trimmingCharacters(in: .newlines)
        let listed = try sshKeygen(["-l", "-E", "sha256", "-f", path + ".pub"]).stdout
        let fingerprint = listed.split(separator: " ")[1]
        return (line, String(fingerprint))
    }

    @Test(arguments: [
        (["-t", "ed25519"], "ssh-ed25519"),
        (["-t", "ecdsa", "-b", "256"], "ecdsa-sha2-nistp256"),
        (["-t", "ecdsa", "-b", "384"], "ecdsa-sha2-nistp384"),
        (["-t", "ecdsa", "-b", "521"], "ecdsa-sha2-nistp521"),
        (["-t", "rsa", "-b", "2048"], "ssh-rsa"),
    ])
    func parsesSSHKeygenKeysAndMatchesItsFingerprint(type: [String], algorithm: String) throws {
        let dir = try TemporaryDirectory()
        let (line, fingerprint) = try generate(type, in: dir)
        let key = try SSHPublicKey(openSSHLine: line)
        #expect(key.algorithm == algorithm)
        #expect(key.fingerprintSHA256 == fingerprint)
        #expect(key.fingerprintSHA256.count == "SHA256:".count + 43)
        #expect(line.hasPrefix(key.openSSHString + " "))
        #expect(try SSHPublicKey(blob: key.blob) == key)
    }

    @Test func ed25519FromRawKeyMatchesSSHKeygen() throws {
        let dir = try TemporaryDirectory()
        let (line, _) = try generate(["-t", "ed25519"], in: dir)
        let key = try SSHPublicKey(openSSHLine: line)
        let raw = try #require(key.ed25519Key)
        #expect(SSHPublicKey(ed25519: raw) == key)
        #expect(SSHPublicKey(ed25519: raw).openSSHString == key.openSSHString)
    }

    @Test func toleratesExtraWhitespaceAndNoComment() throws {
        let key = SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(1))
        let base64 = Data(key.blob).base64EncodedString()
        #expect(try SSHPublicKey(openSSHLine: "ssh-ed25519 \(base64)") == key)
        #expect(try SSHPublicKey(openSSHLine: "  ssh-ed25519\t\(base64)   a comment with spaces \n") == key)
        #expect(key.ed25519Key == Ed25519TestKeys.publicKey(1))
    }

    static let malformedLines: [String] = {
        let key = SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(2))
        let good = Data(key.blob).base64EncodedString()
        return [
            "",
            "ssh-ed25519",
            "ssh-ed25519 !!!notbase64!!!",
            "ssh-ed25519 \(good.dropLast(4))",  // truncated base64 loses the key's last bytes
            "ecdsa-sha2-nistp256 \(good)",  // type and blob disagree
            "ssh-ed25519 \(Data(key.blob + [0]).base64EncodedString())",  // trailing byte
            "ssh-ed25519 \(Data(key.blob.dropLast()).base64EncodedString())",  // short key
            "ssh-ed25519 " + String(repeating: "A", count: SSHPublicKey.maxLineBytes),
        ]
    }()

    @Test(arguments: malformedLines)
    func malformedLinesThrow(line: String) {
        #expect(throws: SSHKeyError.self) { try SSHPublicKey(openSSHLine: line) }
    }

    @Test func malformedBlobsThrowWithoutTrapping() throws {
        var wire = SSHWireWriter()
        wire.writeString("ssh-ed25519")
        wire.writeString([UInt8](repeating: 7, count: 32))
        let good = wire.bytes
        #expect(throws: Never.self) { try SSHPublicKey(blob: good) }
        // Every truncation of a valid blob throws.
        for length in 0..<good.count {
            #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: Array(good.prefix(length))) }
        }
        // A length prefix that claims far more than there is.
        #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: [0xFF, 0xFF, 0xFF, 0xFF, 0x73]) }
        #expect(throws: SSHKeyError.self) {
            try SSHPublicKey(blob: [0, 0, 0, 11] + Array("ssh-ed25519".utf8) + [0xFF, 0xFF, 0xFF, 0xF0])
        }
        // A name with a space or control character.
        var spaced = SSHWireWriter()
        spaced.writeString("ssh ed25519")
        #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: spaced.bytes) }
        // Too large.
        var huge = SSHWireWriter()
        huge.writeString("x-unknown@example.com")
        huge.writeString([UInt8](repeating: 0, count: SSHPublicKey.maxBlobBytes))
        let error = #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: huge.bytes) }
        #expect(error?.kind == .tooLarge)
        // An ECDSA key naming the wrong curve.
        var ecdsa = SSHWireWriter()
        ecdsa.writeString("ecdsa-sha2-nistp256")
        ecdsa.writeString("nistp384")
        ecdsa.writeString([0x04] + [UInt8](repeating: 1, count: 96))
        #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: ecdsa.bytes) }
    }

    @Test func anEmptyAlgorithmNameIsRefused() {
        // Found by the public-key-file fuzz target (Fuzz/regressions/public-key-file/empty-algorithm-name):
        // an unknown layout with an empty name was accepted, and its openSSHString (" AAAA…") did not
        // parse back.
        let blob: [UInt8] = [0, 0, 0, 0] + [0, 0, 0, 0] + [0, 0, 0, 0] + Array("ec".utf8)
        let error = #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: blob) }
        #expect(error?.kind == .malformed)
        #expect(throws: SSHKeyError.self) { try SSHPublicKey(blob: [0, 0, 0, 0]) }
    }

    @Test func unknownAlgorithmsAreKeptWhole() throws {
        var wire = SSHWireWriter()
        wire.writeString("ssh-ed25519-cert-v01@openssh.com")
        wire.writeString([1, 2, 3])
        let key = try SSHPublicKey(blob: wire.bytes)
        #expect(key.algorithm == "ssh-ed25519-cert-v01@openssh.com")
        #expect(key.blob == wire.bytes)
        #expect(key.ed25519Key == nil)
    }

    @Test func fingerprintIsUnpaddedBase64OfSHA256() {
        let key = SSHPublicKey(ed25519: Ed25519TestKeys.publicKey(3))
        var expected = Data(SHA256.hash(key.blob)).base64EncodedString()
        #expect(expected.hasSuffix("="))
        expected.removeLast()
        #expect(key.fingerprintSHA256 == "SHA256:" + expected)
    }
}
