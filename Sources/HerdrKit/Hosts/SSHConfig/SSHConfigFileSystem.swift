/// What the resolver reads files through, so that it stays free of I/O: the real file system
/// (``LocalSSHConfigFileSystem``), or text held in memory (``InMemorySSHConfigFileSystem``) for
/// tests and fuzzing.
public protocol SSHConfigFileSystem: Sendable {
    /// The file at `path` (absolute). When `checkPermissions` is set the file must be as ssh
    /// wants an included or per-user config file: owned by root or the user running, and
    /// writable by nobody else. At most `maxBytes + 1` bytes are returned, so that a larger file
    /// is noticed without reading it all. A directory reads as empty, as it does for ssh.
    func read(_ path: String, checkPermissions: Bool, maxBytes: Int) -> SSHConfigFileRead

    /// The paths matching the glob(3) `pattern` (absolute, `~` already expanded), sorted
    /// bytewise as ssh's glob sorts them; at most `limit + 1`. A pattern without wildcards gives
    /// itself if it exists. No match is an empty list, not an error.
    func glob(_ pattern: String, limit: Int) -> SSHConfigGlobResult
}

/// What reading one file gave.
public enum SSHConfigFileRead: Hashable, Sendable {
    /// The file's bytes.
    case contents([UInt8])
    /// There is no such file; ssh skips it.
    case missing
    /// The file is there but cannot be read; the reason is for people.
    case unreadable(String)
    /// The file is writable by others or owned by someone else; ssh refuses to read it.
    case badPermissions
}

/// What expanding one Include pattern gave.
public enum SSHConfigGlobResult: Hashable, Sendable {
    /// The matching paths, sorted.
    case matches([String])
    /// glob(3) failed for another reason than no match; the reason is for people.
    case failed(String)
}
