import HerdrCrypto

/// This device's SSH identity: the Ed25519 key it logs in with, and how to authorize it on a host.
public struct DeviceKeyPair: Sendable {
    /// The private key. Never leaves the device except in its 0600 key file.
    public let privateKey: Ed25519PrivateKey
    /// The public key in SSH form.
    public let publicKey: SSHPublicKey
    /// The comment stored with the key, `herdr-remote@<short hostname>` for keys made here.
    public let comment: String

    init(privateKey: Ed25519PrivateKey, comment: String) {
        self.privateKey = privateKey
        self.publicKey = SSHPublicKey(ed25519: privateKey.publicKey)
        self.comment = comment
    }

    /// The line to append to a host's `~/.ssh/authorized_keys`: `ssh-ed25519 AAAA… comment`.
    public var authorizedKeysLine: String {
        comment.isEmpty ? publicKey.openSSHString : publicKey.openSSHString + " " + comment
    }
}
