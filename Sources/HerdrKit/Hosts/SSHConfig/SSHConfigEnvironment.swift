/// What ssh takes from the machine and the user running it, handed to the resolver so that it
/// reads nothing itself: tests and fuzzing give their own, the CLI gives ``current()``.
public struct SSHConfigEnvironment: Sendable {
    /// The local account name: the default `User`, `%u`.
    public var localUser: String
    /// The local account's home directory, as the password database has it: ssh reads
    /// `~/.ssh/config` from it and expands `~` and `%d` in IdentityFile with it. (ssh expands `~`
    /// in Include through `$HOME`, which is normally the same; this one is used for both.)
    public var homeDirectory: String
    /// The local account's numeric id, for `%i`; nil leaves `%i` unsupported.
    public var userID: UInt32?
    /// This machine's host name, for `%l` (and `%L`, its first label).
    public var localHostname: String
    /// Environment variables, for `${NAME}` in IdentityFile.
    public var variables: [String: String]
    /// A port for a service name (`Port ssh`), as getservbyname(3) gives it; nil refuses names.
    public var servicePort: (@Sendable (String) -> Int?)?
    /// The home directory of another account, for `~name/` in IdentityFile; nil refuses it.
    public var homeOfUser: (@Sendable (String) -> String?)?

    /// An environment given piece by piece.
    public init(
        localUser: String, homeDirectory: String, userID: UInt32? = nil, localHostname: String,
        variables: [String: String] = [:], servicePort: (@Sendable (String) -> Int?)? = nil,
        homeOfUser: (@Sendable (String) -> String?)? = nil
    ) {
        self.localUser = localUser
        self.homeDirectory = homeDirectory
        self.userID = userID
        self.localHostname = localHostname
        self.variables = variables
        self.servicePort = servicePort
        self.homeOfUser = homeOfUser
    }
}
