import Foundation
import Glibc
import HerdrAgents
import HerdrKit
import SessionProtocol

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

    /// What a session attached to `target` runs: for herdr's sessions, as `command(configured:session:)`;
    /// for an agent, always herdr's own attach for its pane (`exec "$SHELL" -lc 'herdr agent attach
    /// PANE'`, with ` --session NAME` for a named session), the configured command being about sessions.
    static func command(configured: String?, target: HostSessionTable.Target) -> String {
        switch target {
        case .session(let name): command(configured: configured, session: name)
        case .agent(let key): agentAttach(key)
        }
    }

    /// `exec "$SHELL" -lc 'herdr agent attach PANE[ --session NAME]'`: the pane and the session
    /// were checked against the board (pane ids and session names need no quoting), and are
    /// quoted all the same if they ever break their rules, as `HerdrCommand` quotes names.
    static func agentAttach(_ key: AgentKey) -> String {
        func word(_ text: String, valid: Bool) -> String { valid ? text : HerdrCommand.posixQuoted(text) }
        var script = "herdr agent attach " + word(key.pane, valid: HerdrAgent.isValidPane(key.pane))
        if key.session != HerdrSessionInfo.defaultName {
            script += " --session " + word(key.session, valid: HerdrSessionInfo.isValidName(key.session))
        }
        return "exec \"$SHELL\" -lc " + HerdrCommand.posixQuoted(script)
    }

    /// The name `HERDR_SESSION` carries for `target` (nil: herdr's default session).
    static func sessionName(_ target: HostSessionTable.Target) -> String? {
        switch target {
        case .session(let name): name
        case .agent(let key): key.session == HerdrSessionInfo.defaultName ? nil : key.session
        }
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
