import Foundation
import HerdrCrypto

/// An SSH public key as it travels on the wire: the key blob (RFC 4253 §6.6) and the algorithm it names.
///
/// Equal keys have equal blobs. Ed25519, ECDSA (nistp256/384/521), RSA, DSA and the FIDO `sk-` forms are
/// checked field by field; other algorithms (certificates, future types) are accepted when the blob starts
/// with a well-formed algorithm name, so they can still be pinned and compared.
public struct SSHPublicKey: Hashable, Sendable {
    /// The largest blob accepted; real keys are far smaller (an RSA-16384 key is about 2 KiB).
    public static let maxBlobBytes = 16 * 1024
    /// The longest OpenSSH public key line accepted.
    public static let maxLineBytes = 32 * 1024

    /// The wire encoding of the key.
    public let blob: [UInt8]
    /// The algorithm name in the blob's first string, such as `ssh-ed25519`.
    public let algorithm: String

    /// A key from its wire blob; throws when the blob is malformed for its algorithm.
    public init(blob: [UInt8]) throws(SSHKeyError) {
        guard blob.count <= Self.maxBlobBytes else {
            throw SSHKeyError(
                .tooLarge, "A public key blob of \(blob.count) bytes is over the \(Self.maxBlobBytes)-byte limit")
        }
        var reader = SSHWireReader(blob, context: "public key blob")
        let algorithm = try reader.readName()
        try Self.validateFields(of: algorithm, in: &reader)
        self.blob = blob
        self.algorithm = algorithm
    }

    /// A key from an OpenSSH public key line: `type base64 [comment]` (the comment is ignored).
    ///
    /// The type must match the algorithm inside the blob, as `ssh-keygen` requires.
    public init(openSSHLine: String) throws(SSHKeyError) {
        guard openSSHLine.utf8.count <= Self.maxLineBytes else {
            throw SSHKeyError(.tooLarge, "The public key line is over \(Self.maxLineBytes) bytes")
        }
        let fields = openSSHLine.split(maxSplits: 2, omittingEmptySubsequences: true, whereSeparator: \.isWhitespace)
        guard fields.count >= 2 else {
            throw SSHKeyError(.malformed, "A public key line needs a key type and base64 key data")
        }
        guard let data = Data(base64Encoded: String(fields[1])) else {
            throw SSHKeyError(.malformed, "The key data of the public key line is not valid base64")
        }
        try self.init(blob: [UInt8](data))
        guard String(fields[0]) == algorithm else {
            throw SSHKeyError(.inconsistent, "The line says \(fields[0]) but the key inside is \(algorithm)")
        }
    }

    /// The SSH form of a raw Ed25519 public key.
    public init(ed25519 key: Ed25519PublicKey) {
        var writer = SSHWireWriter()
        writer.writeString("ssh-ed25519")
        writer.writeString(key.raw)
        self.blob = writer.bytes
        self.algorithm = "ssh-ed25519"
    }

    /// `SHA256:` and the unpadded standard base64 of SHA-256(blob), exactly as `ssh-keygen -l -E sha256` prints.
    public var fingerprintSHA256: String {
        var encoded = Data(SHA256.hash(blob)).base64EncodedString()
        while encoded.hasSuffix("=") { encoded.removeLast() }
        return "SHA256:" + encoded
    }

    /// `type base64`, the first two fields of an authorized_keys or known_hosts entry.
    public var openSSHString: String {
        algorithm + " " + Data(blob).base64EncodedString()
    }

    /// The raw key when this is an `ssh-ed25519` key.
    public var ed25519Key: Ed25519PublicKey? {
        guard algorithm == "ssh-ed25519" else { return nil }
        var reader = SSHWireReader(blob, context: "public key blob")
        guard (try? reader.readName()) != nil, let raw = try? reader.readString() else { return nil }
        return try? Ed25519PublicKey(raw: raw)
    }

    /// Checks the fields after the algorithm name for the algorithms whose layout is known.
    private static func validateFields(of algorithm: String, in reader: inout SSHWireReader) throws(SSHKeyError) {
        switch algorithm {
        case "ssh-ed25519":
            try expectLength(reader.readString(), 32, "Ed25519 key")
        case "sk-ssh-ed25519@openssh.com":
            try expectLength(reader.readString(), 32, "Ed25519 key")
            _ = try reader.readString()  // application
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521",
            "sk-ecdsa-sha2-nistp256@openssh.com":
            let curve = try reader.readName()
            let expected = algorithm.hasPrefix("sk-") ? "nistp256" : String(algorithm.dropFirst("ecdsa-sha2-".count))
            // Uncompressed points: 0x04 ‖ x ‖ y.
            let sizes = ["nistp256": 65, "nistp384": 97, "nistp521": 133]
            guard curve == expected, let size = sizes[curve] else {
                throw SSHKeyError(.inconsistent, "The \(algorithm) key names the curve \(curve)")
            }
            let point = try reader.readString()
            guard point.count == size, point.first == 0x04 else {
                throw SSHKeyError(.malformed, "The \(algorithm) key's point is not an uncompressed \(curve) point")
            }
            if algorithm.hasPrefix("sk-") { _ = try reader.readString() }
        case "ssh-rsa":
            let exponent = try reader.readString()
            let modulus = try reader.readString()
            guard !exponent.isEmpty, modulus.count >= 64 else {
                throw SSHKeyError(.malformed, "The ssh-rsa key's numbers are too short")
            }
        case "ssh-dss":
            for _ in 0..<4 { _ = try reader.readString() }
        default:
            // Unknown layout: keep the blob as it is.
            _ = reader.readRest()
        }
        try reader.expectEnd()
    }

    private static func expectLength(_ bytes: [UInt8], _ count: Int, _ what: String) throws(SSHKeyError) {
        guard bytes.count == count else {
            throw SSHKeyError(.malformed, "An \(what) must be \(count) bytes, got \(bytes.count)")
        }
    }
}
