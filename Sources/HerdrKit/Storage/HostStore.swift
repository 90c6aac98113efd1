import Foundation
import Observation

/// The user's host profiles, saved as JSON in `hosts.json` (pretty-printed, sorted keys, mode 0600).
///
/// Passwords are kept only in ``SecretStore`` (`secrets.json`), never in `hosts.json`. Host key pins are
/// keyed by hostname and port (``HostKeyPins``), so deleting a profile does not forget its pin.
@MainActor @Observable public final class HostStore {
    /// The largest `hosts.json` read; anything bigger is treated as corrupt.
    public static let maxFileBytes = 4 << 20

    /// The profiles, in the order they were added.
    public private(set) var hosts: [HostProfile]
    /// Where the files live.
    public let directory: ConfigDirectory
    /// What went wrong in the last operation (loading included), or nil when it succeeded.
    public private(set) var lastError: String?

    @ObservationIgnored private let secrets: SecretStore
    /// Set when `hosts.json` exists but could not be read or moved aside: saving would destroy it.
    @ObservationIgnored private var writeBlocked: String?

    /// Loads the profiles in `directory`.
    ///
    /// A missing file means no hosts. A file that cannot be decoded is renamed to `hosts.json.corrupt`
    /// (or `hosts.json.corrupt-<unix time>` if that exists), `lastError` says so, and the store starts empty.
    public init(directory: ConfigDirectory = .standard()) {
        self.directory = directory
        self.secrets = SecretStore(directory: directory)
        self.hosts = []
        load()
    }

    /// Adds `host`, or replaces the profile with the same id, and saves.
    public func upsert(_ host: HostProfile) {
        lastError = nil
        if let index = hosts.firstIndex(where: { $0.id == host.id }) {
            hosts[index] = host
        } else {
            hosts.append(host)
        }
        save()
    }

    /// Removes the profile `id` and its password, and saves. Its host key pin stays.
    public func delete(_ id: UUID) {
        lastError = nil
        hosts.removeAll { $0.id == id }
        save()
        do throws(StorageError) {
            try secrets.setPassword(nil, for: id)
        } catch {
            lastError = error.message
        }
    }

    /// Saves `password` for the profile `id` in `secrets.json`, or removes it when nil.
    public func setPassword(_ password: String?, for id: UUID) {
        lastError = nil
        do throws(StorageError) {
            try secrets.setPassword(password, for: id)
        } catch {
            lastError = error.message
        }
    }

    /// The password saved for the profile `id`, if any.
    public func password(for id: UUID) -> String? {
        secrets.password(for: id)
    }

    /// The profile called `name`: an exact match, else the only case-insensitive match.
    public func host(named name: String) -> HostProfile? {
        if let exact = hosts.first(where: { $0.name == name }) { return exact }
        let folded = hosts.filter { $0.name.lowercased() == name.lowercased() }
        return folded.count == 1 ? folded[0] : nil
    }

    private func load() {
        let file = directory.hostsFile
        let bytes: [UInt8]
        do throws(StorageError) {
            guard let read = try AtomicFile.readIfPresent(file, maxBytes: Self.maxFileBytes) else { return }
            bytes = read
        } catch  where error.kind == .tooLarge {
            moveAside(reason: error.message)
            return
        } catch {
            // Unreadable is not corrupt (permissions, I/O): keep the file and refuse to overwrite it.
            writeBlocked = error.message
            lastError = "\(error.message). Host changes will not be saved."
            return
        }
        do {
            let decoded = try JSONDecoder().decode([HostProfile].self, from: Data(bytes))
            // Ids must be unique for Identifiable; a hand-edited duplicate keeps the first.
            var seen = Set<UUID>()
            hosts = decoded.filter { seen.insert($0.id).inserted }
        } catch {
            moveAside(reason: "\(file.path) could not be decoded (\(Self.describe(error)))")
        }
    }

    private func moveAside(reason: String) {
        do {
            let aside = try CorruptFile.moveAside(directory.hostsFile)
            lastError = "\(reason). It was moved to \(aside.path) and the host list starts empty."
        } catch {
            writeBlocked = error.message
            lastError = "\(reason), and moving it aside failed: \(error.message). Host changes will not be saved."
        }
    }

    private func save() {
        if let writeBlocked {
            lastError = "Not saved: \(writeBlocked)"
            return
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            let data = try encoder.encode(hosts)
            try directory.create()
            try AtomicFile.write([UInt8](data) + [0x0A], to: directory.hostsFile, mode: 0o600)
        } catch let error as StorageError {
            lastError = error.message
        } catch {
            lastError = "Could not encode the host list: \(error)"
        }
    }

    /// A short reason for a decoding failure, without quoting file contents.
    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?, .keyNotFound(_, let context)?, .typeMismatch(_, let context)?,
            .valueNotFound(_, let context)?:
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            return path.isEmpty ? context.debugDescription : "\(path): \(context.debugDescription)"
        default:
            return "not valid JSON"
        }
    }
}
