/// SSH public key blobs (RFC 4253 §6.6, RFC 8709).
public enum SSHKeyBlob {
    /// The `ssh-ed25519` blob for a raw 32-byte public key.
    public static func ed25519(_ publicKey: [UInt8]) -> [UInt8] {
        var blob: [UInt8] = []
        appendString(Array("ssh-ed25519".utf8), to: &blob)
        appendString(publicKey, to: &blob)
        return blob
    }

    static func appendString(_ bytes: [UInt8], to out: inout [UInt8]) {
        let n = UInt32(bytes.count)
        out.append(contentsOf: [
            UInt8(n >> 24), UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8),
            UInt8(truncatingIfNeeded: n),
        ])
        out.append(contentsOf: bytes)
    }
}
