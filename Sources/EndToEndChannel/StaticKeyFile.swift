import Foundation
import HerdrBase
import Noise

/// A Noise static key pair kept in one file (mode 0600, written atomically, made once under a
/// lock so two processes starting together agree on one key):
///
///     herdr-companion-static-key 1
///     <standard base64 of the 32-byte X25519 private key>
///
/// The computer has one (`herdr-host`), and so does each device (`herdr-remote`). The private key
/// never leaves the file and the process that reads it.
public enum StaticKeyFile {
    static let header = "herdr-companion-static-key 1"
    static let maximumBytes = 4096

    /// The key pair in `file`, made first if there is none.
    public static func loadOrCreate(_ file: URL) throws(StorageError) -> KeyPair {
        if let existing = try load(file) { return existing }
        try ConfigDirectory(url: file.deletingLastPathComponent()).create()
        return try FileLock.withExclusiveLock(URL(fileURLWithPath: file.path + ".lock")) {
            () throws(StorageError) -> KeyPair in
            if let existing = try load(file) { return existing }
            let pair = KeyPair.generate()
            let text = "\(header)\n\(Data(pair.privateKeyBytes).base64EncodedString())\n"
            try AtomicFile.write(Array(text.utf8), to: file, mode: 0o600)
            return pair
        }
    }

    /// The key pair in `file`, or nil when there is no file; throws for a file that is not one.
    public static func load(_ file: URL) throws(StorageError) -> KeyPair? {
        guard let bytes = try AtomicFile.readIfPresent(file, maxBytes: maximumBytes) else { return nil }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, lines[0] == Substring(header), let raw = Data(base64Encoded: String(lines[1])),
            raw.count == 32, let pair = try? KeyPair(privateKey: [UInt8](raw))
        else {
            throw StorageError(.corrupt, path: file.path, message: "\(file.path) is not a companion static key file")
        }
        return pair
    }
}
