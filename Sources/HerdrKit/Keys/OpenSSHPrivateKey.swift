import Foundation
import HerdrCrypto

/// An Ed25519 private key in OpenSSH's own file format (`openssh-key-v1`, unencrypted), the format
/// `ssh-keygen` writes and `ssh -i` reads.
///
/// Layout (OpenSSH PROTOCOL.key): the magic `openssh-key-v1\0`; cipher `none`; kdf `none`; empty kdf
/// options; one public key blob; then the private section: two equal check integers, `ssh-ed25519`, the
/// 32-byte public key, the 64-byte secret (seed ‖ public key), the comment, and padding bytes 1, 2, 3, …
/// up to a multiple of 8. The whole is base64, wrapped at 70 columns, inside PEM-style armor.
public struct OpenSSHPrivateKey: Sendable {
    /// The longest key file text accepted; an Ed25519 key file is about 400 bytes.
    public static let maxTextBytes = 64 * 1024

    static let beginLine = "-----BEGIN OPENSSH PRIVATE KEY-----"
    static let endLine = "-----END OPENSSH PRIVATE KEY-----"
    private static let magic = Array("openssh-key-v1\0".utf8)
    /// The block size of the `none` cipher, which the private section is padded to.
    private static let blockSize = 8

    /// The key.
    public let privateKey: Ed25519PrivateKey
    /// The comment stored with the key (often `user@host`).
    public let comment: String

    /// Wraps a key and its comment for encoding.
    public init(privateKey: Ed25519PrivateKey, comment: String) {
        self.privateKey = privateKey
        self.comment = comment
    }

    /// The public half in SSH form.
    public var publicKey: SSHPublicKey { SSHPublicKey(ed25519: privateKey.publicKey) }

    /// Decodes a key file's text, checking every field; throws a clear error for anything else, including
    /// passphrase-protected keys, other key types and damaged or truncated files.
    public init(pemText: String) throws(SSHKeyError) {
        guard pemText.utf8.count <= Self.maxTextBytes else {
            throw SSHKeyError(.tooLarge, "A private key file over \(Self.maxTextBytes) bytes is not an Ed25519 key")
        }
        let data = try Self.unarmor(pemText)
        var outer = SSHWireReader(data, context: "private key")
        guard (try? outer.readRaw(Self.magic.count)) == Self.magic else {
            throw SSHKeyError(.malformed, "Not an OpenSSH private key (the openssh-key-v1 header is missing)")
        }
        let cipher = try outer.readName()
        let kdf = try outer.readName()
        let kdfOptions = try outer.readString()
        guard cipher == "none" else {
            throw SSHKeyError(
                .encrypted,
                "The private key is encrypted with a passphrase (\(cipher), \(kdf)); herdr-remote needs an "
                    + "unencrypted key. Remove the passphrase with `ssh-keygen -p -N '' -f FILE` or use another key.")
        }
        guard kdf == "none", kdfOptions.isEmpty else {
            throw SSHKeyError(.malformed, "An unencrypted key must have kdf none and no kdf options, got \(kdf)")
        }
        let keyCount = try outer.readUInt32()
        guard keyCount == 1 else {
            throw SSHKeyError(.unsupported, "The key file holds \(keyCount) keys; exactly one is supported")
        }
        let publicKey = try SSHPublicKey(blob: outer.readString())
        guard let publicRaw = publicKey.ed25519Key?.raw else {
            throw SSHKeyError(.unsupported, "The key is \(publicKey.algorithm); only ssh-ed25519 keys are supported")
        }
        let section = try outer.readString()
        try outer.expectEnd()
        (privateKey, comment) = try Self.decodePrivateSection(section, publicRaw: publicRaw)
    }

    /// The key file text, with fresh random check integers.
    public var pemText: String {
        let random = SecureRandom.bytes(4)
        return pemText(checkInt: random.reduce(0) { $0 << 8 | UInt32($1) })
    }

    /// The key file text with the given check integer (tests pin it to compare output).
    func pemText(checkInt: UInt32) -> String {
        let publicRaw = privateKey.publicKey.raw
        var section = SSHWireWriter()
        section.writeUInt32(checkInt)
        section.writeUInt32(checkInt)
        section.writeString("ssh-ed25519")
        section.writeString(publicRaw)
        section.writeString(privateKey.seed + publicRaw)
        section.writeString(comment)
        var pad: UInt8 = 1
        while section.bytes.count % Self.blockSize != 0 {
            section.writeRaw([pad])
            pad += 1
        }
        var outer = SSHWireWriter()
        outer.writeRaw(Self.magic)
        outer.writeString("none")
        outer.writeString("none")
        outer.writeString([UInt8]())
        outer.writeUInt32(1)
        outer.writeString(publicKey.blob)
        outer.writeString(section.bytes)

        let encoded = Data(outer.bytes).base64EncodedString()
        var lines = [Self.beginLine]
        var rest = Substring(encoded)
        while !rest.isEmpty {
            lines.append(String(rest.prefix(70)))
            rest = rest.dropFirst(70)
        }
        lines.append(Self.endLine)
        return lines.joined(separator: "\n") + "\n"
    }

    private static func unarmor(_ text: String) throws(SSHKeyError) -> [UInt8] {
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: \.isNewline)
            .map { String($0).trimmingWhitespace() }
        guard let begin = lines.firstIndex(of: beginLine) else {
            if let other = lines.first(where: { $0.hasPrefix("-----BEGIN ") }) {
                throw SSHKeyError(
                    .unsupported,
                    "The file is a PEM key (\(other)), not an OpenSSH private key; only ssh-ed25519 keys in "
                        + "OpenSSH format are supported")
            }
            throw SSHKeyError(.malformed, "Not an OpenSSH private key (no \(beginLine) line)")
        }
        guard let end = lines[(begin + 1)...].firstIndex(of: endLine) else {
            throw SSHKeyError(.truncated, "The private key has no \(endLine) line")
        }
        let body = lines[(begin + 1)..<end].joined()
        guard let data = Data(base64Encoded: body) else {
            throw SSHKeyError(.malformed, "The private key's body is not valid base64")
        }
        return [UInt8](data)
    }

    private static func decodePrivateSection(
        _ section: [UInt8], publicRaw: [UInt8]
    ) throws(SSHKeyError) -> (Ed25519PrivateKey, String) {
        guard section.count % blockSize == 0 else {
            throw SSHKeyError(.malformed, "The private section is not a multiple of \(blockSize) bytes")
        }
        var reader = SSHWireReader(section, context: "private section")
        let check1 = try reader.readUInt32()
        let check2 = try reader.readUInt32()
        guard check1 == check2 else {
            throw SSHKeyError(.inconsistent, "The private key's check integers differ: the file is damaged")
        }
        let keyType = try reader.readName()
        guard keyType == "ssh-ed25519" else {
            throw SSHKeyError(.unsupported, "The private key is \(keyType); only ssh-ed25519 keys are supported")
        }
        let innerPublic = try reader.readString()
        let secret = try reader.readString()
        let commentBytes = try reader.readString()
        let padding = reader.readRest()
        guard innerPublic.count == 32, secret.count == 64 else {
            throw SSHKeyError(.malformed, "The Ed25519 private key fields have the wrong sizes")
        }
        guard padding.count < blockSize, padding.enumerated().allSatisfy({ Int($1) == $0 + 1 }) else {
            throw SSHKeyError(.malformed, "The private section's padding is not 1, 2, 3, …")
        }
        // The public key appears three times (outer blob, inner copy, second half of the secret); all must
        // agree with the key the seed actually derives, or the file was spliced or damaged.
        let key: Ed25519PrivateKey
        do {
            key = try Ed25519PrivateKey(seed: Array(secret[0..<32]))
        } catch {
            throw SSHKeyError(.malformed, "The Ed25519 seed is unusable: \(error.message)")
        }
        let derived = key.publicKey.raw
        guard innerPublic == publicRaw, Array(secret[32...]) == publicRaw, derived == publicRaw else {
            throw SSHKeyError(.inconsistent, "The private key does not match its public key")
        }
        return (key, String(decoding: commentBytes, as: UTF8.self))
    }
}
