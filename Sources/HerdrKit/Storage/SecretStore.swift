import Foundation

/// Secrets of host profiles, keyed by profile id, in `secrets.json` (mode 0600): passwords for the
/// SSH road, room secrets for the relay road.
///
/// Kept apart from `hosts.json` so profiles can be shown, copied or backed up without carrying secrets.
/// Every change is a locked read-modify-write (an `flock` on `secrets.json.lock`) followed by an atomic
/// replace, so threads and processes never lose each other's updates. Nothing here logs or prints a
/// password, and errors name only the file.
public final class SecretStore: Sendable {
    /// The largest `secrets.json` read.
    public static let maxFileBytes = 1 << 20

    /// The file the passwords live in.
    public let file: URL
    private let lockFile: URL

    /// A store over `file`.
    public init(file: URL) {
        self.file = file
        self.lockFile = URL(fileURLWithPath: file.path + ".lock")
    }

    /// The store in `directory` (`secrets.json`).
    public convenience init(directory: ConfigDirectory) {
        self.init(file: directory.secretsFile)
    }

    /// The password saved for the profile `id`, or nil when there is none or the file cannot be read.
    public func password(for id: UUID) -> String? {
        (try? storedPassword(for: id)) ?? nil
    }

    /// The password saved for the profile `id`, or nil when there is none; throws when the file is unreadable.
    public func storedPassword(for id: UUID) throws(StorageError) -> String? {
        try load().passwords[id.uuidString]
    }

    /// Saves `password` for the profile `id`, or removes it when `password` is nil.
    public func setPassword(_ password: String?, for id: UUID) throws(StorageError) {
        // Removing what is not there needs no file, lock or directory.
        if password == nil, (try? storedPassword(for: id)) == .some(nil) { return }
        try modify { $0.passwords[id.uuidString] = password }
    }

    /// The relay room secret of the profile `id` (32 bytes), or nil when there is none.
    public func roomSecret(for id: UUID) throws(StorageError) -> [UInt8]? {
        try load().roomSecrets?[id.uuidString].flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) }
    }

    /// Saves the relay room secret of the profile `id`, or removes it when nil.
    public func setRoomSecret(_ secret: [UInt8]?, for id: UUID) throws(StorageError) {
        if secret == nil, (try? roomSecret(for: id)) == .some(nil) { return }
        try modify { contents in
            var secrets = contents.roomSecrets ?? [:]
            secrets[id.uuidString] = secret.map { Data($0).base64EncodedString() }
            contents.roomSecrets = secrets.isEmpty ? nil : secrets
        }
    }

    /// A locked read-modify-write, then an atomic replace. A `secrets.json` that cannot be decoded
    /// is moved aside (`secrets.json.corrupt…`) rather than overwritten, so nothing in it is destroyed.
    private func modify(_ change: (inout Contents) -> Void) throws(StorageError) {
        try ConfigDirectory(url: file.deletingLastPathComponent()).create()
        try FileLock.withExclusiveLock(lockFile) { () throws(StorageError) in
            var contents: Contents
            do throws(StorageError) {
                contents = try load()
            } catch  where error.kind == .corrupt || error.kind == .tooLarge {
                _ = try CorruptFile.moveAside(file)
                contents = Contents()
            }
            let before = contents
            change(&contents)
            guard contents != before else { return }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data: Data
            do {
                data = try encoder.encode(contents)
            } catch {
                throw StorageError(.encode, path: file.path, message: "Could not encode \(file.path)")
            }
            try AtomicFile.write([UInt8](data) + [0x0A], to: file, mode: 0o600)
        }
    }

    /// What `secrets.json` holds: a version for future changes, the passwords and the room secrets
    /// (standard base64) by profile id.
    private struct Contents: Codable, Equatable {
        var version: Int? = 1
        var passwords: [String: String] = [:]
        var roomSecrets: [String: String]?
    }

    private func load() throws(StorageError) -> Contents {
        guard let bytes = try AtomicFile.readIfPresent(file, maxBytes: Self.maxFileBytes) else { return Contents() }
        do {
            return try JSONDecoder().decode(Contents.self, from: Data(bytes))
        } catch {
            // The decoder's message could quote file contents, so it is not passed on.
            throw StorageError(.corrupt, path: file.path, message: "\(file.path) is not a valid secrets file")
        }
    }
}
