import Foundation
import HerdrKit

/// Where `herdr-host` keeps its state: `$XDG_CONFIG_HOME/herdr-host` (or `~/.config/herdr-host`),
/// mode 0700, every file in it 0600 and written atomically.
///
/// | file | what |
/// |---|---|
/// | `static_key` | the computer's Noise static key pair (its public half is `rs` in every code) |
/// | `devices.json` | the paired devices: name, pinned static key, pairing id, room, relay, state |
/// | `room-secrets.json` | each device's room secret, by device id |
/// | `settings.json` | the relay and computer name `pair` used last |
/// | `agent.json` | what `herdr-host run` is doing, for `status` |
public struct AgentDirectory: Sendable, Hashable {
    public let url: URL

    public init(url: URL) { self.url = url }

    /// The standard place, from the environment (XDG Base Directory rule: a relative
    /// `XDG_CONFIG_HOME` is ignored).
    public static func standard(environment: [String: String] = ProcessInfo.processInfo.environment)
        -> AgentDirectory
    {
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            return AgentDirectory(
                url: URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("herdr-host"))
        }
        var home = environment["HOME"] ?? ""
        if !home.hasPrefix("/") { home = NSHomeDirectory() }
        return AgentDirectory(
            url: URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".config/herdr-host"))
    }

    public var staticKeyFile: URL { url.appendingPathComponent("static_key") }
    public var devicesFile: URL { url.appendingPathComponent("devices.json") }
    public var roomSecretsFile: URL { url.appendingPathComponent("room-secrets.json") }
    public var settingsFile: URL { url.appendingPathComponent("settings.json") }
    public var agentStatusFile: URL { url.appendingPathComponent("agent.json") }
    /// Held while devices and their secrets change together.
    var lockFile: URL { url.appendingPathComponent("devices.lock") }
    /// Held by the one running agent.
    var agentLockFile: URL { url.appendingPathComponent("agent.lock") }

    /// Creates the directory, 0700, if it is missing.
    public func create() throws(StorageError) {
        try ConfigDirectory(url: url).create()
    }
}
