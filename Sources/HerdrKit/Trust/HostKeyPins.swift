import Foundation

/// Pinned host keys, one per hostname and port, in an OpenSSH known_hosts file.
///
/// The file stays readable by OpenSSH (`ssh-keygen -F host -f FILE`, `ssh -o UserKnownHostsFile=FILE`):
/// `host ssh-ed25519 AAAA…` for port 22 and `[host]:port ssh-ed25519 AAAA…` otherwise, with the hostname
/// canonicalized by ``CanonicalHost`` (so `Host.TS.net.` and `host.ts.net` share a pin, while `100.x`, a short
/// name and an FQDN are separate hosts, as in OpenSSH).
///
/// Pinning is add-only: an existing pin is never replaced by ``pin(_:hostname:port:)``; it changes only
/// through ``forget(hostname:port:)``. Changes are read-modify-write under an exclusive `flock` on the
/// sidecar `known_hosts.lock`, and the file is replaced atomically (mode 0600). Lines this type does not
/// understand (comments, `@cert-authority`/`@revoked` markers, hashed `|1|` hosts, wildcard patterns,
/// malformed or over-long lines) are kept verbatim and never matched. When several lines match a host and
/// port, the first one is the pin.
public final class HostKeyPins: Sendable {
    /// The largest file read.
    public static let maxFileBytes = 4 << 20
    /// Lines longer than this are kept but not parsed.
    public static let maxLineBytes = SSHPublicKey.maxLineBytes + 1024

    /// The known_hosts file.
    public let file: URL
    private let lockFile: URL

    /// Pins kept in `file`.
    public init(file: URL) {
        self.file = file
        self.lockFile = URL(fileURLWithPath: file.path + ".lock")
    }

    /// Pins kept in the directory's `known_hosts`.
    public convenience init(directory: ConfigDirectory) {
        self.init(file: directory.knownHostsFile)
    }

    /// The key pinned for `hostname` and `port`, or nil when there is none.
    ///
    /// Throws when the file cannot be read: an unreadable pin must not look like a first connection.
    public func pinnedKey(hostname: String, port: Int) throws(StorageError) -> SSHPublicKey? {
        let target = try Self.target(hostname: hostname, port: port, file: file)
        return try readLines().lazy.compactMap { $0.entry }.first { $0.matches(target) }?.key
    }

    /// Pins `key` for `hostname` and `port` unless a pin exists.
    ///
    /// Returns true when `key` is now the pin: it was added, or the existing pin is the same key. Returns
    /// false when a different key is pinned; that pin is left as it is.
    public func pin(_ key: SSHPublicKey, hostname: String, port: Int) throws(StorageError) -> Bool {
        let target = try Self.target(hostname: hostname, port: port, file: file)
        try ConfigDirectory(url: file.deletingLastPathComponent()).create()
        return try FileLock.withExclusiveLock(lockFile) { () throws(StorageError) -> Bool in
            var lines = try readLines()
            if let existing = lines.lazy.compactMap({ $0.entry }).first(where: { $0.matches(target) }) {
                return existing.key == key
            }
            lines.append(Line(Array("\(target.pattern) \(key.openSSHString)".utf8)))
            try write(lines)
            return true
        }
    }

    /// Removes the pin for `hostname` and `port`; returns whether there was one.
    ///
    /// Only that host and port go: a line that also names other hosts keeps them.
    public func forget(hostname: String, port: Int) throws(StorageError) -> Bool {
        let target = try Self.target(hostname: hostname, port: port, file: file)
        // Nothing to forget (and maybe no directory to put a lock file in).
        guard try readLines().contains(where: { $0.entry?.matches(target) == true }) else { return false }
        return try FileLock.withExclusiveLock(lockFile) { () throws(StorageError) -> Bool in
            let lines = try readLines()
            var kept: [Line] = []
            var removed = false
            for line in lines {
                guard let entry = line.entry, entry.matches(target) else {
                    kept.append(line)
                    continue
                }
                removed = true
                if let rewritten = entry.removing(target) { kept.append(rewritten) }
            }
            if removed { try write(kept) }
            return removed
        }
    }

    /// Every pin, in file order, the first per host and port.
    public func allPins() throws(StorageError) -> [(host: String, port: Int, key: SSHPublicKey)] {
        var seen = Set<String>()
        var pins: [(host: String, port: Int, key: SSHPublicKey)] = []
        for entry in try readLines().compactMap(\.entry) {
            for case let host? in entry.hosts
            where seen.insert(CanonicalHost.pinKey(hostname: host.name, port: host.port)).inserted {
                pins.append((host.name, host.port, entry.key))
            }
        }
        return pins
    }

    // MARK: - File

    private func readLines() throws(StorageError) -> [Line] {
        guard let bytes = try AtomicFile.readIfPresent(file, maxBytes: Self.maxFileBytes) else { return [] }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { Line(Array($0)) }
        // A final newline leaves one empty piece after it, which is not a line.
        if bytes.last == 0x0A { lines.removeLast() }
        return lines
    }

    private func write(_ lines: [Line]) throws(StorageError) {
        var bytes: [UInt8] = []
        for line in lines {
            bytes += line.raw
            bytes.append(0x0A)
        }
        try AtomicFile.write(bytes, to: file, mode: 0o600)
    }

    // MARK: - Format

    /// A host and port as known_hosts spells it.
    struct Target: Equatable {
        let name: String
        let port: Int

        /// `host` for port 22, `[host]:port` otherwise (OpenSSH's rule).
        var pattern: String { port == 22 ? name : "[\(name)]:\(port)" }
    }

    private static func target(hostname: String, port: Int, file: URL) throws(StorageError) -> Target {
        let name = CanonicalHost.hostname(hostname)
        guard isPinnable(name) else {
            throw StorageError(
                .invalidArgument, path: file.path,
                message: "\"\(hostname)\" cannot be pinned: not a hostname or address")
        }
        guard (1...65_535).contains(port) else {
            throw StorageError(.invalidArgument, path: file.path, message: "\(port) cannot be pinned: not a TCP port")
        }
        return Target(name: name, port: port)
    }

    /// Whether a canonical name can be pinned: only characters that cannot change the meaning of
    /// a known_hosts line (no spaces, commas, brackets, wildcards, negation, markers or hashes).
    static func isPinnable(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253
            && name.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."),
                    UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "%"):
                    true
                default:
                    false
                }
            }
    }

    /// One line of the file: its exact bytes, and the pin it holds when it is one this type understands.
    struct Line {
        let raw: [UInt8]
        let entry: Entry?

        init(_ raw: [UInt8]) {
            self.raw = raw
            self.entry = Entry(parsing: raw)
        }
    }

    /// A plain `patterns keytype base64 [comment]` line.
    struct Entry {
        /// The host field's patterns as written.
        let patterns: [String]
        /// Each pattern as a host and port, or nil for patterns never matched (wildcards, negations, junk).
        let hosts: [Target?]
        /// Everything after the host field, verbatim.
        let rest: String
        let key: SSHPublicKey

        init?(parsing raw: [UInt8]) {
            guard raw.count <= HostKeyPins.maxLineBytes, let text = String(validating: raw, as: UTF8.self) else {
                return nil
            }
            var line = Substring(text)
            if line.hasSuffix("\r") { line = line.dropLast() }
            line = line.drop { $0 == " " || $0 == "\t" }
            // Comments, blank lines, @markers and hashed hosts are kept but never matched.
            guard let first = line.first, first != "#", first != "@", first != "|" else { return nil }
            guard let end = line.firstIndex(where: { $0 == " " || $0 == "\t" }) else { return nil }
            let hostField = line[..<end]
            let rest = line[end...]
            guard let key = try? SSHPublicKey(openSSHLine: String(rest)) else { return nil }
            self.patterns = hostField.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            self.hosts = patterns.map(Self.parse(pattern:))
            self.rest = String(rest)
            self.key = key
        }

        func matches(_ target: Target) -> Bool {
            hosts.contains(target)
        }

        /// This line without `target`'s patterns, or nil when nothing would be left of it. A kept
        /// pattern starting with `#`, `@` or `|` cannot begin the line (it would make it a comment,
        /// a marker or a hashed entry), so one that can goes first; a line with only such patterns
        /// left goes (they name no host that can be pinned).
        func removing(_ target: Target) -> Line? {
            var keep = zip(patterns, hosts).filter { $0.1 != target }.map(\.0)
            guard let first = keep.firstIndex(where: { !($0.first.map { "#@|".contains($0) } ?? false) }) else {
                return nil
            }
            keep.insert(keep.remove(at: first), at: 0)
            return Line(Array((keep.joined(separator: ",") + rest).utf8))
        }

        /// `host` (port 22) or `[host]:port`, canonicalized, with a name that can be pinned; nil
        /// for anything else.
        private static func parse(pattern: String) -> Target? {
            guard let target = parseAnyName(pattern: pattern), HostKeyPins.isPinnable(target.name) else { return nil }
            return target
        }

        private static func parseAnyName(pattern: String) -> Target? {
            guard !pattern.isEmpty, !pattern.contains(where: { "*?!".contains($0) }) else { return nil }
            guard pattern.hasPrefix("[") else { return Target(name: CanonicalHost.hostname(pattern), port: 22) }
            guard let close = pattern.lastIndex(of: "]"),
                pattern[close...].hasPrefix("]:"),
                case let digits = pattern[pattern.index(close, offsetBy: 2)...],
                digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
                let port = Int(digits), (1...65_535).contains(port)
            else { return nil }
            let name = pattern[pattern.index(after: pattern.startIndex)..<close]
            return Target(name: CanonicalHost.hostname(String(name)), port: port)
        }
    }
}
