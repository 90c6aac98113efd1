import Foundation
import HerdrKit
import SessionProtocol

/// This computer's settings for herdr-host (`settings.json`, `herdr-host config`): the relay it
/// paired through last, so the next pairing needs no `--relay`, and how terminal sessions run.
public struct AgentSettings: Codable, Hashable, Sendable {
    /// The relay's origin.
    public var relay: String?
    /// The command every session runs instead of herdr's attach (e.g. tmux); it gets the
    /// session name the device asked for in `HERDR_SESSION`.
    public var sessionCommand: String?
    /// Seconds a session waits for its device to come back.
    public var gracePeriod: Int?
    /// Bytes of output kept for a device that is away.
    public var resumeBuffer: Int?
    /// Where the home door listens (`ADDRESS:PORT`), or `off`; nil: `HomeDoorConfiguration.defaultListen`.
    public var homeListen: String?
    /// Interfaces the home door refuses (names or `NAME*`); nil: the cellular defaults.
    public var homeRefuse: [String]?

    public init(relay: String? = nil) { self.relay = relay }

    /// The grace period's bounds: a second to a week.
    public static let gracePeriodRange = 1...(7 * 24 * 3600)
    /// The resume buffer's bounds: 1 MiB to 1 GiB.
    public static let resumeBufferRange = (1 << 20)...(1 << 30)

    /// The session settings these make, defaults where unset (or out of bounds).
    public var sessionSettings: HostSessionTable.Settings {
        var settings = HostSessionTable.Settings()
        if let gracePeriod, Self.gracePeriodRange.contains(gracePeriod) { settings.gracePeriod = Double(gracePeriod) }
        if let resumeBuffer, Self.resumeBufferRange.contains(resumeBuffer) { settings.resumeBuffer = resumeBuffer }
        return settings
    }

    /// The home door these settings ask for (`listen` overrides `homeListen`); nil when it is off.
    public func homeDoor(listen: String? = nil) throws(HomeDoorConfiguration.Invalid) -> HomeDoorConfiguration? {
        let text = listen ?? homeListen ?? HomeDoorConfiguration.defaultListen
        guard text != HomeDoorConfiguration.off else { return nil }
        return try HomeDoorConfiguration(
            listen: text, refusedInterfaces: homeRefuse ?? HomeDoorConfiguration.defaultRefusedInterfaces)
    }

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
