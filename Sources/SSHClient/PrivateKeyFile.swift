import Foundation

/// A private key file (`--identity`, `IdentityFile`), read whole for libssh2, which parses the
/// OpenSSH, PEM and PKCS#8 formats. Read here only far enough to know whether a passphrase is needed.
struct PrivateKeyFile {
    /// Far above any real key (a 16384-bit RSA key is about 12 KiB), far below memory trouble.
    static let maximumSize = 64 * 1024

    let path: String
    let contents: [UInt8]
    /// Whether the key is stored encrypted: a PEM `Proc-Type: 4,ENCRYPTED` header, PKCS#8
    /// `ENCRYPTED PRIVATE KEY`, or an OpenSSH key whose cipher is not `none`.
    let isEncrypted: Bool
    /// The SSH key type (`ssh-rsa`, `ssh-ed25519`, …) when the file says it without decrypting.
    let keyType: String?

    /// Reads the head of `contents` once: the passphrase loop asks `isEncrypted` on every try.
    init(path: String, contents: [UInt8]) {
        self.path = path
        self.contents = contents
        let text = String(decoding: contents, as: UTF8.self)
        let header = Self.openSSHHeader(text)
        isEncrypted =
            text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
            || (header.map { $0.cipher != "none" } ?? false)
        if text.contains("-----BEGIN RSA PRIVATE KEY-----") {
            keyType = "ssh-rsa"
        } else if text.contains("-----BEGIN EC PRIVATE KEY-----") {
            keyType = "ecdsa"
        } else {
            keyType = header?.keyType
        }
    }

    /// Reads `path`; throws a short reason ("no such file", "larger than 64 KiB") for messages.
    static func read(_ path: String) throws(PrivateKeyFileError) -> PrivateKeyFile {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw PrivateKeyFileError(path: path, reason: String(cString: strerror(errno)))
        }
        defer { try? handle.close() }
        let data: Data?
        do {
            data = try handle.read(upToCount: maximumSize + 1)
        } catch {
            throw PrivateKeyFileError(path: path, reason: "\(error.localizedDescription)")
        }
        let bytes = [UInt8](data ?? Data())
        guard bytes.count <= maximumSize else {
            throw PrivateKeyFileError(path: path, reason: "larger than \(maximumSize / 1024) KiB, not a key")
        }
        guard !bytes.isEmpty else { throw PrivateKeyFileError(path: path, reason: "empty") }
        return PrivateKeyFile(path: path, contents: bytes)
    }

    /// The unencrypted head of an `openssh-key-v1` file: cipher name and the first public key's type.
    private static func openSSHHeader(_ text: String) -> (cipher: String, keyType: String?)? {
        let begin = "-----BEGIN OPENSSH PRIVATE KEY-----"
        let end = "-----END OPENSSH PRIVATE KEY-----"
        guard let start = text.range(of: begin),
            let stop = text.range(of: end, range: start.upperBound..<text.endIndex),
            let body = Data(
                base64Encoded: String(text[start.upperBound..<stop.lowerBound]), options: .ignoreUnknownCharacters)
        else { return nil }
        var reader = SSHWireReader([UInt8](body))
        let magic = Array("openssh-key-v1\0".utf8)
        guard reader.take(magic.count) == magic,
            let cipher = reader.readString().map({ String(decoding: $0, as: UTF8.self) })
        else { return nil }
        // kdfname, kdfoptions, number of keys, then the first public key blob, whose first string is its type.
        guard reader.readString() != nil, reader.readString() != nil, reader.take(4) != nil,
            let blob = reader.readString()
        else { return (cipher, nil) }
        var blobReader = SSHWireReader(blob)
        return (cipher, blobReader.readString().map { String(decoding: $0, as: UTF8.self) })
    }
}

/// Why a key file could not be used, as a phrase for the authentication summary.
struct PrivateKeyFileError: Error {
    let path: String
    let reason: String
}
