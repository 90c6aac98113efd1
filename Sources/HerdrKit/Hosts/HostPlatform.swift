/// The kind of shell a host runs commands in, which decides how the attach command is spelled.
public enum HostPlatform: String, Codable, CaseIterable, Sendable {
    /// macOS, Linux and other POSIX hosts: commands go through `/bin/sh` and then the login shell.
    case unix
    /// Windows hosts with OpenSSH, whose default shell is PowerShell.
    case windows
}
