/// One value as the config gave it: the text (unquoted, before any expansion) and its line.
public struct SSHConfigSetting: Hashable, Sendable {
    /// The value as written, without quotes.
    public let value: String
    /// Where it was set.
    public let location: SSHConfigLocation
}

/// An IdentityFile value: as written (what `ssh -G` prints) and as ssh opens it.
public struct SSHConfigIdentityFile: Hashable, Sendable {
    /// The value as written, without quotes: `~/.ssh/id_%h`.
    public let written: String
    /// The path with `~`, `%` tokens and `${NAME}` expanded; nil for `none`, which only stops
    /// ssh from trying its default keys.
    public let path: String?
    /// Where it was given.
    public let location: SSHConfigLocation
}

/// Why a host cannot be imported: its config sends ssh somewhere herdr-remote cannot go.
public struct SSHConfigRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// What the config uses.
    public enum Kind: String, Hashable, Sendable {
        /// `ProxyJump`: a jump host.
        case proxyJump
        /// `ProxyCommand`: a command standing in for the connection.
        case proxyCommand
    }

    /// What the config uses.
    public let kind: Kind
    /// The setting that decides it.
    public let setting: SSHConfigSetting
    /// `studio uses ProxyJump bastion (~/.ssh/config line 12); herdr-remote cannot connect
    /// through a jump host yet`.
    public let reason: String

    public var description: String { reason }
}

/// What ssh would connect to for one alias, as `ssh -G ALIAS` resolves it, and what of the
/// config an import would leave behind.
public struct SSHConfigResolution: Hashable, Sendable {
    /// The alias asked for, as typed.
    public let alias: String
    /// The host to connect to: HostName with `%h` expanded, or the alias; lowercased, and an
    /// IPv4 address in its dotted form (`127.1` is `127.0.0.1`), as ssh does.
    public let hostname: String
    /// The HostName setting, nil when the alias is the hostname.
    public let hostnameSetting: SSHConfigSetting?
    /// The account to log in as: User, or the local account.
    public let user: String
    /// The User setting, nil when it is the local account.
    public let userSetting: SSHConfigSetting?
    /// The port: Port, or 22.
    public let port: Int
    /// The Port setting, nil when it is 22 by default.
    public let portSetting: SSHConfigSetting?
    /// Every IdentityFile the config gives, in ssh's order, duplicates dropped as ssh drops them.
    public let identityFileSettings: [SSHConfigIdentityFile]
    /// The effective ProxyJump, nil when unset or `none`.
    public let proxyJump: SSHConfigSetting?
    /// The effective ProxyCommand, nil when unset or `none` (or when a ProxyJump came first).
    public let proxyCommand: SSHConfigSetting?
    /// The effective RemoteCommand, nil when unset or `none`.
    public let remoteCommand: SSHConfigSetting?
    /// What the import leaves out or reads differently from ssh, one sentence each, citing the
    /// file and line: a Match block skipped, a LocalForward, a keyword ssh 9.2 does not know.
    public let notes: [String]
    /// Set when the host cannot be imported at all; nothing of it should be kept then.
    public let refusal: SSHConfigRefusal?

    /// The explicit identity files, expanded, in order (`none` left out): what an import keeps.
    public var identityFiles: [String] { identityFileSettings.compactMap(\.path) }

    /// Whether ssh would try its default keys (``SSHConfigResolver/defaultIdentityFiles``):
    /// only when the config gives no IdentityFile at all, not even `none`.
    public var usesDefaultIdentityFiles: Bool { identityFileSettings.isEmpty }
}

/// A Host alias the config defines, for importing several at once.
public struct SSHConfigAlias: Hashable, Sendable {
    /// The alias: a Host pattern with no `*`, `?` or `!`.
    public let name: String
    /// The Host line naming it first.
    public let location: SSHConfigLocation
}
