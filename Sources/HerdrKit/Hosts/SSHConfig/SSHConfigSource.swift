/// One file ssh reads at the top level, and how it treats it.
///
/// Without `-F`, ssh reads `~/.ssh/config` (the user's; its permissions checked; missing is
/// fine) and then `/etc/ssh/ssh_config` (the system's); with `-F FILE`, only that file (a user
/// file that must exist). A user file's relative Includes are under `~/.ssh`, a system file's
/// under `/etc/ssh`, and only a user file may Include `~/…`.
public struct SSHConfigSource: Hashable, Sendable {
    /// Whose file it is, which decides how its Includes are found.
    public enum Scope: Hashable, Sendable {
        /// `~/.ssh/config`, or a file given as with `ssh -F`.
        case user
        /// `/etc/ssh/ssh_config`.
        case system
    }

    /// The file's absolute path.
    public var path: String
    /// Whose file it is.
    public var scope: Scope
    /// Whether a missing file is an error (`ssh -F`) rather than skipped.
    public var isRequired: Bool
    /// Whether the file must be owned by root or the user and writable by nobody else.
    public var checksPermissions: Bool

    /// A source described piece by piece.
    public init(path: String, scope: Scope, isRequired: Bool = false, checksPermissions: Bool = false) {
        self.path = path
        self.scope = scope
        self.isRequired = isRequired
        self.checksPermissions = checksPermissions
    }

    /// `~/.ssh/config` under `home`, as ssh reads it without `-F`.
    public static func userConfig(home: String) -> SSHConfigSource {
        let base = home.hasSuffix("/") ? String(home.dropLast()) : home
        return SSHConfigSource(path: base + "/.ssh/config", scope: .user, checksPermissions: true)
    }

    /// `/etc/ssh/ssh_config`, read after the user's file.
    public static let systemConfig = SSHConfigSource(path: "/etc/ssh/ssh_config", scope: .system)

    /// One file given explicitly, as `ssh -F path` reads it.
    public static func explicit(_ path: String) -> SSHConfigSource {
        SSHConfigSource(path: path, scope: .user, isRequired: true)
    }
}
