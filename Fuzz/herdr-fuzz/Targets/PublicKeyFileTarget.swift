import Foundation
import HerdrKit

extension FuzzTargets {
    /// OpenSSH public key files (`type base64 [comment]`, as `ssh-keygen` writes `id_ed25519.pub`):
    /// a parsed key names the algorithm the line names, its blob is within `maxBlobBytes`, its
    /// `openSSHString` parses back to the same key, so does its blob, and its SHA-256 fingerprint
    /// has `ssh-keygen`'s form. The bytes as a raw blob are tried too. A refusal has a reason.
    static let publicKeyFile = FuzzTarget("public-key-file", "HerdrKit: OpenSSH public key lines and blobs") { data in
        let text = String(decoding: data, as: UTF8.self)
        do throws(SSHKeyError) {
            let key = try SSHPublicKey(openSSHLine: text)
            let fields = text.split(maxSplits: 2, omittingEmptySubsequences: true, whereSeparator: \.isWhitespace)
            FuzzCheck.expect(fields.first.map(String.init) == key.algorithm, "the key is not the type the line names")
            check(key)
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
        }
        if let key = try? SSHPublicKey(blob: data) { check(key) }
    }

    private static func check(_ key: SSHPublicKey) {
        FuzzCheck.expect(key.blob.count <= SSHPublicKey.maxBlobBytes, "a blob over the limit")
        FuzzCheck.expect(
            (try? SSHPublicKey(openSSHLine: key.openSSHString)) == key, "openSSHString does not parse back")
        FuzzCheck.expect((try? SSHPublicKey(blob: key.blob)) == key, "the blob does not parse back")
        let fingerprint = key.fingerprintSHA256
        FuzzCheck.expect(fingerprint.hasPrefix("SHA256:") && fingerprint.count == 50, "a fingerprint of another form")
        if key.algorithm == "ssh-ed25519" {
            FuzzCheck.expect(
                key.ed25519Key.map { SSHPublicKey(ed25519: $0) } == key, "the Ed25519 key does not round-trip")
        }
    }
}
