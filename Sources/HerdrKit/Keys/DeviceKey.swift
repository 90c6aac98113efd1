import Foundation
import HerdrCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The device's Ed25519 SSH key, created on first use and kept in OpenSSH format in the config directory
/// (`id_ed25519`, mode 0600, with `id_ed25519.pub` next to it), so `ssh -i` can use the same identity.
public enum DeviceKey {
    /// The device key in `directory`, created on first use.
    ///
    /// Creation is safe when several processes start at once: each writes a complete key to its own temp
    /// file and `link`s it into place, which fails if another process got there first; everyone then loads
    /// whatever key is in place. A key file that exists but cannot be parsed is an error naming the file,
    /// and it is never overwritten (it may be the only copy of an authorized key).
    public static func load(in directory: ConfigDirectory = .standard()) throws(StorageError) -> DeviceKeyPair {
        try directory.create()
        let keyFile = directory.deviceKeyFile
        // Two rounds: load, or create and load. A key that vanishes between the two is reported, not looped on.
        for _ in 0..<2 {
            if let pair = try loadExisting(keyFile) {
                writePublicKeyFile(pair, in: directory)
                return pair
            }
            try create(at: keyFile)
        }
        throw StorageError(.read, path: keyFile.path, message: "\(keyFile.path) disappeared while it was being loaded")
    }

    /// The device's public key as an authorized_keys line (`ssh-ed25519 AAAA… herdr-remote@host`),
    /// creating the key on first use.
    public static func publicKeyOpenSSH(in directory: ConfigDirectory = .standard()) throws(StorageError) -> String {
        try load(in: directory).authorizedKeysLine
    }

    /// `herdr-remote@<short hostname>`, with characters outside `[A-Za-z0-9_-]` turned into `-`.
    static func defaultComment() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        var name = ""
        if gethostname(&buffer, buffer.count - 1) == 0 {
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            name = String(decoding: bytes, as: UTF8.self)
        }
        let short = name.split(separator: ".", maxSplits: 1).first.map(String.init) ?? ""
        let safe = String(short.unicodeScalars.map { $0.isSafeForComment ? Character($0) : "-" })
        return "herdr-remote@" + (safe.isEmpty ? "device" : safe)
    }

    private static func loadExisting(_ keyFile: URL) throws(StorageError) -> DeviceKeyPair? {
        let bytes: [UInt8]
        do throws(StorageError) {
            guard let read = try AtomicFile.readIfPresent(keyFile, maxBytes: OpenSSHPrivateKey.maxTextBytes) else {
                return nil
            }
            bytes = read
        } catch  where error.kind == .tooLarge {
            throw unusable(keyFile, reason: "it is too large to be an Ed25519 key")
        }
        do {
            let decoded = try OpenSSHPrivateKey(pemText: String(decoding: bytes, as: UTF8.self))
            return DeviceKeyPair(privateKey: decoded.privateKey, comment: decoded.comment)
        } catch {
            throw unusable(keyFile, reason: error.message)
        }
    }

    private static func unusable(_ keyFile: URL, reason: String) -> StorageError {
        StorageError(
            .corrupt, path: keyFile.path,
            message: "The device key \(keyFile.path) is not usable: \(reason). It was left untouched; "
                + "move it away to create a new key.")
    }

    /// Writes a new key into place unless one already exists. Losing the race is not an error.
    private static func create(at keyFile: URL) throws(StorageError) {
        let text = OpenSSHPrivateKey(privateKey: Ed25519PrivateKey(), comment: defaultComment()).pemText
        // Exactly one process's key wins a race; losing it is fine.
        _ = try AtomicFile.writeIfAbsent(Array(text.utf8), to: keyFile, mode: 0o600)
    }

    /// Keeps `id_ed25519.pub` in step with the private key. Best effort: the private key is what matters,
    /// and a read-only `.pub` should not stop a connection.
    private static func writePublicKeyFile(_ pair: DeviceKeyPair, in directory: ConfigDirectory) {
        let expected = Array((pair.authorizedKeysLine + "\n").utf8)
        let file = directory.devicePublicKeyFile
        if let current = try? AtomicFile.readIfPresent(file, maxBytes: SSHPublicKey.maxLineBytes), current == expected {
            return
        }
        try? AtomicFile.write(expected, to: file, mode: 0o644)
    }
}

extension Unicode.Scalar {
    fileprivate var isSafeForComment: Bool {
        switch value {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x5F: return true
        default: return false
        }
    }
}
