import Foundation
import HerdrKit

/// What `herdr-host pair` remembers between runs (`settings.json`): the relay it paired through
/// last, so the next pairing needs no `--relay`.
public struct AgentSettings: Codable, Hashable, Sendable {
    /// The relay's origin.
    public var relay: String?

    public init(relay: String? = nil) { self.relay = relay }

    public static func load(_ directory: AgentDirectory) -> AgentSettings {
        guard let bytes = try? AtomicFile.readIfPresent(directory.settingsFile, maxBytes: 65536),
            let settings = try? JSONDecoder().decode(AgentSettings.self, from: Data(bytes))
        else { return AgentSettings() }
        return settings
    }

    public func save(_ directory: AgentDirectory) throws(StorageError) {
        try directory.create()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        guard let data = try? encoder.encode(self) else {
            throw StorageError(.encode, path: directory.settingsFile.path, message: "Could not encode the settings")
        }
        try AtomicFile.write([UInt8](data) + [0x0A], to: directory.settingsFile, mode: 0o600)
    }
}
