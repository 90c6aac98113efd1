import Foundation
import Glibc
import HerdrKit

/// What a terminal session runs on this computer, and in what environment: the attach command
/// the SSH road runs (`HerdrCommand`), unless the computer's own settings name another. The
/// device only ever chooses a session name, never a command.
enum SessionCommand {
    /// The configured command when there is one (it gets the session name in `HERDR_SESSION`),
    /// else herdr's attach for `session`.
    static func command(configured: String?, session: String?) -> String {
        if let configured, !configured.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty { return configured }
        return HerdrCommand.attach(platform: .unix, session: session)
    }

    /// herdr-host's own environment, with what a terminal session needs: `TERM`, a `SHELL` (the
    /// account's when the service manager set none) and `HERDR_SESSION`.
    static func environment(
        session: String?, base: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: String] {
        var environment = base
        environment["TERM"] = "xterm-256color"
        if environment["SHELL"]?.isEmpty ?? true { environment["SHELL"] = account()?.shell ?? "/bin/sh" }
        if environment["HOME"]?.isEmpty ?? true, let home = account()?.home { environment["HOME"] = home }
        environment["HERDR_SESSION"] = session
        return environment
    }

    /// Where sessions start: the home directory.
    static func homeDirectory(base: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let home = base["HOME"], home.hasPrefix("/") { return home }
        return account()?.home ?? "/"
    }

    private static func account() -> (shell: String, home: String)? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16384)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let shell = entry.pw_shell, let home = entry.pw_dir
        else { return nil }
        return (String(cString: shell), String(cString: home))
    }
}
