import Foundation
import HerdrKit

/// The paired devices (`devices.json`) and their room secrets (`room-secrets.json`), shared by
/// `herdr-host pair`, `run`, `unpair` and `devices`. Every change is a read-modify-write under
/// one lock, each file replaced atomically (secrets first, so a device is never listed without
/// its secret). A file that cannot be read is moved aside (`….corrupt-…`), never overwritten.
public final class DeviceRegistry: Sendable {
    public static let maximumFileBytes = 4 << 20

    public let directory: AgentDirectory

    public init(directory: AgentDirectory) { self.directory = directory }

    private struct Devices: Codable, Equatable, DefaultConstructible {
        var version = 1
        var devices: [PairedDevice] = []
    }

    private struct Secrets: Codable, Equatable, DefaultConstructible {
        var version = 1
        /// Device id → standard base64 of the 32-byte room secret.
        var secrets: [String: String] = [:]
    }

    /// The devices, in pairing order.
    public func devices() throws(StorageError) -> [PairedDevice] {
        try load(Devices.self, directory.devicesFile).devices
    }

    /// The device with this id, or named so (case-insensitively), or whose key fingerprint or id
    /// starts with `reference` (at least 8 characters).
    public func device(matching reference: String) throws(StorageError) -> [PairedDevice] {
        let all = try devices()
        if let exact = all.first(where: { $0.id.uuidString.lowercased() == reference.lowercased() }) { return [exact] }
        let named = all.filter { $0.name.lowercased() == reference.lowercased() }
        if !named.isEmpty { return named }
        guard reference.count >= 8 else { return [] }
        return all.filter {
            $0.fingerprint.hasPrefix(reference) || $0.fingerprint.dropFirst(7).hasPrefix(reference)
                || $0.id.uuidString.lowercased().hasPrefix(reference.lowercased())
        }
    }

    /// The room secret of the device `id`.
    public func roomSecret(for id: UUID) throws(StorageError) -> [UInt8]? {
        try load(Secrets.self, directory.roomSecretsFile).secrets[id.uuidString].flatMap { Data(base64Encoded: $0) }
            .map { [UInt8]($0) }
    }

    /// Adds or replaces a device (matched by id) and its room secret.
    public func save(_ device: PairedDevice, roomSecret: [UInt8]) throws(StorageError) {
        try modify { devices, secrets in
            devices.devices.removeAll { $0.id == device.id }
            devices.devices.append(device)
            secrets.secrets[device.id.uuidString] = Data(roomSecret).base64EncodedString()
        }
    }

    /// Changes the device `id` in place; false when there is none.
    @discardableResult
    public func update(_ id: UUID, _ change: (inout PairedDevice) -> Void) throws(StorageError) -> Bool {
        var found = false
        try modify { devices, _ in
            guard let index = devices.devices.firstIndex(where: { $0.id == id }) else { return }
            change(&devices.devices[index])
            found = true
        }
        return found
    }

    /// Forgets the device `id` and its secret.
    public func remove(_ id: UUID) throws(StorageError) {
        try modify { devices, secrets in
            devices.devices.removeAll { $0.id == id }
            secrets.secrets[id.uuidString] = nil
        }
    }

    /// A token that changes whenever `devices.json` is replaced (its inode and change time), so the
    /// agent notices a pairing or an unpairing made by another process.
    public func generation() -> String {
        var info = stat()
        guard stat(directory.devicesFile.path, &info) == 0 else { return "none" }
        return "\(info.st_ino)-\(info.st_ctim.tv_sec)-\(info.st_ctim.tv_nsec)-\(info.st_size)"
    }

    // MARK: - Files

    private func modify(_ change: (inout Devices, inout Secrets) -> Void) throws(StorageError) {
        try directory.create()
        try FileLock.withExclusiveLock(directory.lockFile) { () throws(StorageError) in
            var devices = try loadOrSetAside(Devices.self, directory.devicesFile)
            var secrets = try loadOrSetAside(Secrets.self, directory.roomSecretsFile)
            let (oldDevices, oldSecrets) = (devices, secrets)
            change(&devices, &secrets)
            // Secrets go first: a listed device always has its secret.
            if secrets != oldSecrets { try write(secrets, to: directory.roomSecretsFile) }
            if devices != oldDevices { try write(devices, to: directory.devicesFile) }
        }
    }

    private func loadOrSetAside<Contents: Codable & Equatable & DefaultConstructible>(
        _ type: Contents.Type, _ file: URL
    ) throws(StorageError) -> Contents {
        do {
            return try load(type, file)
        } catch  where error.kind == .corrupt || error.kind == .tooLarge {
            _ = try CorruptFile.moveAside(file)
            return Contents()
        }
    }

    private func load<Contents: Codable & DefaultConstructible>(_ type: Contents.Type, _ file: URL) throws(StorageError)
        -> Contents
    {
        guard let bytes = try AtomicFile.readIfPresent(file, maxBytes: Self.maximumFileBytes) else { return Contents() }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            return try decoder.decode(type, from: Data(bytes))
        } catch {
            throw StorageError(.corrupt, path: file.path, message: "\(file.path) is not a valid herdr-host file")
        }
    }

    private func write<Contents: Encodable>(_ contents: Contents, to file: URL) throws(StorageError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        let data: Data
        do {
            data = try encoder.encode(contents)
        } catch {
            throw StorageError(.encode, path: file.path, message: "Could not encode \(file.path)")
        }
        try AtomicFile.write([UInt8](data) + [0x0A], to: file, mode: 0o600)
    }
}

/// A file's contents type with an empty value, for a file that is not there yet.
protocol DefaultConstructible { init() }
