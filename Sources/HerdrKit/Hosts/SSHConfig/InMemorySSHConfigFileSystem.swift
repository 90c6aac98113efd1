/// ssh_config files held in memory, for tests and fuzzing: each file is a path and its bytes;
/// every directory above a file exists (and reads as empty, as a directory does for ssh).
/// Globs match `*`, `?` and `[...]` within one path component, and a wildcard never matches a
/// leading `.`, as glob(3) does.
public struct InMemorySSHConfigFileSystem: SSHConfigFileSystem {
    /// The files, by absolute path.
    public var files: [String: [UInt8]]
    /// Paths that read as ``SSHConfigFileRead/badPermissions`` when permissions are checked.
    public var unsafePaths: Set<String>
    /// Paths that read as ``SSHConfigFileRead/unreadable(_:)``.
    public var unreadablePaths: Set<String>

    /// Files given as text.
    public init(_ files: [String: String], unsafePaths: Set<String> = [], unreadablePaths: Set<String> = []) {
        self.init(bytes: files.mapValues { Array($0.utf8) }, unsafePaths: unsafePaths, unreadablePaths: unreadablePaths)
    }

    /// Files given as bytes (any bytes, as a fuzzer writes them).
    public init(bytes files: [String: [UInt8]], unsafePaths: Set<String> = [], unreadablePaths: Set<String> = []) {
        self.files = files
        self.unsafePaths = unsafePaths
        self.unreadablePaths = unreadablePaths
    }

    public func read(_ path: String, checkPermissions: Bool, maxBytes: Int) -> SSHConfigFileRead {
        if unreadablePaths.contains(path) { return .unreadable("Permission denied") }
        if let bytes = files[path] {
            if checkPermissions && unsafePaths.contains(path) { return .badPermissions }
            return .contents(Array(bytes.prefix(maxBytes + 1)))
        }
        return directories.contains(path) ? .contents([]) : .missing
    }

    public func glob(_ pattern: String, limit: Int) -> SSHConfigGlobResult {
        let wanted = Self.components(pattern)
        let found = (Array(files.keys) + directories).filter { path in
            let parts = Self.components(path)
            return parts.count == wanted.count
                && zip(parts, wanted).allSatisfy { Self.componentMatches(Array($0.utf8), Array($1.utf8)) }
        }
        return .matches(
            Array(Set(found).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.prefix(limit + 1)))
    }

    /// Every directory holding a file, at any depth.
    private var directories: [String] {
        var result = Set<String>()
        for path in files.keys {
            var parts = Self.components(path)
            while parts.count > 1 {
                parts.removeLast()
                result.insert("/" + parts.joined(separator: "/"))
            }
        }
        return Array(result)
    }

    private static func components(_ path: String) -> [String] {
        path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
    }

    /// fnmatch(3) on one component, with FNM_PERIOD (a leading `.` is matched only by a `.`).
    static func componentMatches(_ name: [UInt8], _ pattern: [UInt8]) -> Bool {
        if name.first == UInt8(ascii: "."), pattern.first != UInt8(ascii: ".") { return false }
        return match(name[...], pattern[...])
    }

    private static func match(_ name: ArraySlice<UInt8>, _ pattern: ArraySlice<UInt8>) -> Bool {
        // Positions in pattern and name; `*` backtracks to its last position only, as in
        // SSHHostPattern, which keeps the work linear in practice.
        var n = name.startIndex
        var p = pattern.startIndex
        var star: (pattern: Int, name: Int)?
        while n < name.endIndex {
            if p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") {
                star = (p, n)
                p += 1
                continue
            }
            if p < pattern.endIndex, let width = matchOne(name[n], pattern[p...]) {
                n += 1
                p += width
                continue
            }
            guard let last = star else { return false }
            star = (last.pattern, last.name + 1)
            p = last.pattern + 1
            n = last.name + 1
        }
        while p < pattern.endIndex, pattern[p] == UInt8(ascii: "*") { p += 1 }
        return p == pattern.endIndex
    }

    /// Whether the pattern element at the start of `pattern` matches `byte`, and its width.
    private static func matchOne(_ byte: UInt8, _ pattern: ArraySlice<UInt8>) -> Int? {
        let first = pattern[pattern.startIndex]
        if first == UInt8(ascii: "?") { return 1 }
        guard first == UInt8(ascii: "[") else { return first == byte ? 1 : nil }
        var index = pattern.startIndex + 1
        var negated = false
        if index < pattern.endIndex, pattern[index] == UInt8(ascii: "!") || pattern[index] == UInt8(ascii: "^") {
            negated = true
            index += 1
        }
        var found = false
        var atStart = true
        while index < pattern.endIndex, pattern[index] != UInt8(ascii: "]") || atStart {
            atStart = false
            let low = pattern[index]
            if index + 2 < pattern.endIndex, pattern[index + 1] == UInt8(ascii: "-"),
                pattern[index + 2] != UInt8(ascii: "]")
            {
                if low <= byte && byte <= pattern[index + 2] { found = true }
                index += 3
            } else {
                if low == byte { found = true }
                index += 1
            }
        }
        // An unclosed `[` is an ordinary character.
        guard index < pattern.endIndex else { return first == byte ? 1 : nil }
        return found != negated ? index - pattern.startIndex + 1 : nil
    }
}
