/// A line of an ssh_config file: where a value, a note or an error comes from.
public struct SSHConfigLocation: Hashable, Sendable, CustomStringConvertible {
    /// The file as it was opened.
    public let path: String
    /// The file as a person reads it: the home directory shown as `~`.
    public let displayPath: String
    /// The line number, from 1.
    public let line: Int

    /// A location in `path`; `home` is abbreviated to `~` in ``displayPath``.
    public init(path: String, line: Int, home: String) {
        self.path = path
        self.line = line
        displayPath = Self.abbreviate(path, home: home)
    }

    /// `~/.ssh/config line 12`, as the resolver's messages cite it.
    public var description: String { "\(displayPath) line \(line)" }

    static func abbreviate(_ path: String, home: String) -> String {
        let home = home.count > 1 && home.hasSuffix("/") ? String(home.dropLast()) : home
        guard home.count > 1 else { return path }
        if path == home { return "~" }
        if path.hasPrefix(home + "/") { return "~" + path.dropFirst(home.count) }
        return path
    }
}
