/// Bounds on everything the ssh_config resolver reads. ssh itself has few (it trusts the files of
/// the user who runs it); these keep a hostile or broken file, or an Include that reads itself,
/// from costing more than a moment. Each one exceeded is an ``SSHConfigError`` naming the file
/// and line.
public enum SSHConfigLimits {
    /// Bytes in one file. Real configs are a few KiB.
    public static let maxFileBytes = 1 << 20
    /// Bytes in one line, without its newline.
    public static let maxLineBytes = 16 * 1024
    /// Lines in one file.
    public static let maxLinesPerFile = 100_000
    /// Files one Include pattern may match.
    public static let maxIncludeMatches = 256
    /// Files read for one resolution, counting a file each time it is read (an Include may read
    /// the same file many times before the depth limit stops it).
    public static let maxFilesRead = 512
    /// Bytes read for one resolution, over every file.
    public static let maxTotalBytes = 16 << 20
    /// Nested Includes: OpenSSH's READCONF_MAX_DEPTH.
    public static let maxIncludeDepth = 16
    /// IdentityFile values: OpenSSH's SSH_MAX_IDENTITY_FILES.
    public static let maxIdentityFiles = 100
    /// Bytes in an alias asked for.
    public static let maxAliasBytes = 1024
    /// Bytes in a HostName once `%h` is expanded (NI_MAXHOST less its terminator).
    public static let maxHostNameBytes = 1024
    /// Bytes in an IdentityFile path once expanded (PATH_MAX less its terminator).
    public static let maxPathBytes = 4095
}
