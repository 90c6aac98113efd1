import Foundation
import HerdrKit

extension FuzzTargets {
    /// OpenSSH private key files (`openssh-key-v1`, unencrypted Ed25519): within `maxTextBytes`, a
    /// parsed key's public half matches its seed, and its own `pemText` parses back to the same
    /// seed and comment; anything else is refused with a reason.
    static let privateKeyFile = FuzzTarget("private-key-file", "HerdrKit: openssh-key-v1 private key files") { data in
        let text = String(decoding: data, as: UTF8.self)
        do throws(SSHKeyError) {
            let key = try OpenSSHPrivateKey(pemText: text)
            FuzzCheck.expect(text.utf8.count <= OpenSSHPrivateKey.maxTextBytes, "a file over the limit accepted")
            FuzzCheck.expect(key.publicKey.ed25519Key == key.privateKey.publicKey, "the public half differs")
            let again = try? OpenSSHPrivateKey(pemText: key.pemText)
            FuzzCheck.expect(again?.privateKey.seed == key.privateKey.seed, "pemText does not parse back to the key")
            FuzzCheck.expect(again?.comment == key.comment, "pemText does not keep the comment")
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
        }
    }
}
