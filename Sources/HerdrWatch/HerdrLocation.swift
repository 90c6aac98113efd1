import Foundation
import Glibc

/// Where herdr keeps its sockets for this account (specs/herdr-api.md, "The socket"):
/// `~/.config/herdr/herdr.sock` for the default session (`HERDR_SOCKET_PATH` overrides it) and
/// `~/.config/herdr/sessions/NAME/herdr.sock` for a named one; and where a `herdr` program
/// would be, to tell "not running" from "not installed".
public struct HerdrLocation: Sendable, Hashable {
    /// The account's home directory.
    public var home: String
    /// `HERDR_SOCKET_PATH`, when set: the default session's socket.
    public var socketOverride: String?
    /// Directories searched for a `herdr` program: PATH, then where cargo and pipx-style installs
    /// put programs (a service manager's PATH often lacks them).
    public var programDirectories: [String]

    public init(home: String, socketOverride: String? = nil, programDirectories: [String] = []) {
        self.home = home
        self.socketOverride = socketOverride.flatMap { $0.isEmpty ? nil : $0 }
        self.programDirectories = programDirectories
    }

    /// The location as this process's environment gives it (`HOME`, else the account's).
    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? Self.accountHome() ?? "/"
        let path = (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        self.init(
            home: home, socketOverride: environment["HERDR_SOCKET_PATH"],
            programDirectories: path + ["\(home)/.cargo/bin", "\(home)/.local/bin"])
    }

    /// `~/.config/herdr`.
    public var configDirectory: String { home + "/.config/herdr" }
    /// `~/.config/herdr/sessions`: one directory per named session.
    public var sessionsDirectory: String { configDirectory + "/sessions" }

    /// The socket of `session` (`HerdrSessionInfo.defaultName` for the default one).
    public func socket(session: String, isDefault: Bool) -> String {
        isDefault ? socketOverride ?? configDirectory + "/herdr.sock" : sessionsDirectory + "/\(session)/herdr.sock"
    }

    private static func accountHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil, let home = entry.pw_dir
        else { return nil }
        return String(cString: home)
    }
}
