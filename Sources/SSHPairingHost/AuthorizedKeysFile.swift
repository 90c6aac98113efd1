import Glibc

/// An `authorized_keys` file shared with people and other tools, changed without ever losing a line
/// someone else wrote.
///
/// Every change:
/// 1. takes an exclusive `flock` on a sidecar lock file in the same directory (`authorized_keys.lock`),
///    so writers that cooperate (other herdr-pair helpers, other threads) go one at a time;
/// 2. opens the file and keeps that descriptor open for the whole change, reads it, and computes the
///    new contents (lines are kept byte for byte; only the lines asked for are added or removed);
/// 3. writes them to a fresh temporary file in the same directory (`O_EXCL`, then the old file's
///    mode and owner), copies whatever was appended to the old file meanwhile, fsyncs, and renames
///    it over the file, then syncs the directory;
/// 4. after the rename, keeps copying what writers that do *not* take the lock (`echo line >>
///    authorized_keys`) append to the old inode, until no process other than this one still holds
///    the old file open for writing (checked through `/proc/<pid>/fd` and `fdinfo`, bounded by
///    ``postRenameLimit``). Appends that open the path after the rename land in the new file.
///
/// A symlinked file is changed at its target. A missing file is created (mode 0600) only by
/// ``append(_:)``. A file without a final newline gets one before appended lines.
public struct AuthorizedKeysFile: Sendable {
    /// The largest file read; real ones are a few KiB.
    public static let maximumBytes = 8 * 1024 * 1024
    /// How long, at most, the old inode is watched for late appends after the rename.
    public static let postRenameLimit = 2.0
    /// How long, at least, the old inode is watched after the rename: a writer whose `open` resolved
    /// the path just before the rename installs its descriptor within this time.
    static let postRenameGrace = 0.01

    /// The path as given.
    public let path: String

    /// Test-only: runs between computing the new contents and the rename (a writer appends to the
    /// old inode there, or a test holds it open).
    var testHookBeforeRename: (@Sendable () -> Void)?

    public init(path: String) {
        self.path = path
    }

    /// The file changed: `path`, or its target when `path` is a symlink.
    public func resolvedPath() throws(HostError) -> String {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else { return path }
        guard let resolved = realpath(path, nil) else { throw .posix(.io, "resolve the symlink", path: path) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The sidecar lock file every writer of this file takes first.
    public func lockPath() throws(HostError) -> String {
        try resolvedPath() + ".lock"
    }

    /// The whole file, or empty when it does not exist.
    public func contents() throws(HostError) -> [UInt8] {
        let target = try resolvedPath()
        let fd = open(target, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return [] }
            throw .posix(.io, "open", path: target)
        }
        defer { close(fd) }
        return try FileIO.readToEnd(fd, path: target, limit: Self.maximumBytes)
    }

    /// The file's lines as text (invalid UTF-8 repaired), without line endings.
    public func lines() throws(HostError) -> [String] {
        let bytes = try contents()
        return AuthorizedKeysText.lineRanges(bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
    }

    /// Appends `lines` (each without a newline), creating the file (0600) if it is missing.
    ///
    /// - Precondition: no line contains a newline or a NUL.
    public func append(_ lines: [String]) throws(HostError) {
        precondition(lines.allSatisfy { !$0.contains("\n") && !$0.contains("\r") && !$0.contains("\0") })
        guard !lines.isEmpty else { return }
        _ = try rewrite(createIfMissing: true) { original in
            AuthorizedKeysText.appending(lines, to: original)
        }
    }

    /// Appends `line` unless a line for which `isPresent` is true is already there; returns whether it
    /// appended. Creates the file (0600) if it is missing.
    @discardableResult
    public func append(_ line: String, unlessAny isPresent: (String) -> Bool) throws(HostError) -> Bool {
        precondition(!line.contains("\n") && !line.contains("\r") && !line.contains("\0"))
        var appended = false
        _ = try rewrite(createIfMissing: true) { original in
            let present = AuthorizedKeysText.lineRanges(original).contains {
                isPresent(String(decoding: original[$0], as: UTF8.self))
            }
            guard !present else { return nil }
            appended = true
            return AuthorizedKeysText.appending([line], to: original)
        }
        return appended
    }

    /// Removes every line for which `shouldRemove` is true, and returns them. Nothing is written when
    /// no line matches or the file does not exist.
    ///
    /// With `marker`, only lines containing it are decoded and offered to `shouldRemove`; the others
    /// are kept without a look (a large file is then cheap to scan).
    @discardableResult
    public func removeLines(containing marker: String? = nil, where shouldRemove: (String) -> Bool) throws(HostError)
        -> [String]
    {
        var removed: [String] = []
        let needle = marker.map { Array($0.utf8) }
        _ = try rewrite(createIfMissing: false) { original in
            removed = []
            var output: [UInt8] = []
            output.reserveCapacity(original.count)
            var copiedUpTo = 0
            for range in AuthorizedKeysText.lineRanges(original) {
                if let needle, !AuthorizedKeysText.contains(original[range], needle) { continue }
                let text = String(decoding: original[range], as: UTF8.self)
                guard shouldRemove(text) else { continue }
                removed.append(text)
                output += original[copiedUpTo..<range.lowerBound]
                copiedUpTo = min(range.upperBound + 1, original.count)  // the line and its newline
            }
            guard !removed.isEmpty else { return nil }
            output += original[copiedUpTo...]
            // A file that ended without a newline still does when its last line went.
            if original.last != UInt8(ascii: "\n"), copiedUpTo == original.count, output.last == UInt8(ascii: "\n") {
                output.removeLast()
            }
            return output
        }
        return removed
    }

    /// The locked read-modify-write described on the type. `edit` gets the current bytes and returns
    /// the new ones, or nil to leave the file as it is. Returns whether the file was rewritten.
    func rewrite(createIfMissing: Bool, _ edit: ([UInt8]) -> [UInt8]?) throws(HostError) -> Bool {
        let target = try resolvedPath()
        return try FileLockHolder.withExclusiveLock(target + ".lock", ownerLike: target) {
            () throws(HostError) -> Bool in
            try rewriteLocked(target, createIfMissing: createIfMissing, edit)
        }
    }

    private func rewriteLocked(_ target: String, createIfMissing: Bool, _ edit: ([UInt8]) -> [UInt8]?) throws(HostError)
        -> Bool
    {
        let directory = FileIO.directoryName(target)
        var old = open(target, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if old < 0 {
            guard errno == ENOENT else { throw .posix(.io, "open", path: target) }
            guard createIfMissing else { return false }
        }
        defer { if old >= 0 { close(old) } }

        var mode: mode_t = 0o600
        var owner = (uid: geteuid(), gid: getegid())
        var original: [UInt8] = []
        if old >= 0 {
            var info = stat()
            guard fstat(old, &info) == 0 else { throw .posix(.io, "inspect", path: target) }
            guard info.st_mode & S_IFMT == S_IFREG else {
                throw HostError(.unsafe, "\(target) is not a regular file")
            }
            mode = info.st_mode & 0o7777
            owner = (info.st_uid, info.st_gid)
            original = try FileIO.readToEnd(old, path: target, limit: Self.maximumBytes)
        }
        guard let updated = edit(original) else { return false }

        let temp = directory + "/." + FileIO.baseName(target) + ".herdr-" + FileIO.randomSuffix()
        // O_APPEND: after the rename, late lines copied from the old inode and plain `>>` appends to
        // the new file both land at the end, never over each other.
        let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .posix(.io, "create a temporary file for", path: target) }
        var renamed = false
        defer {
            close(fd)
            if !renamed { unlink(temp) }
        }
        if owner.uid != geteuid() || owner.gid != getegid() {
            // Only root can give a file away; anyone else must not change who owns authorized_keys.
            guard fchown(fd, owner.uid, owner.gid) == 0 else {
                throw .posix(.io, "keep the owner (uid \(owner.uid)) of", path: target)
            }
        }
        guard fchmod(fd, mode) == 0 else { throw .posix(.io, "keep the mode of", path: target) }
        try FileIO.writeAll(updated, to: fd, path: temp)

        var copied = original.count
        if old >= 0 { copied += try copyTail(from: old, at: copied, to: fd, target: target, temp: temp) }
        testHookBeforeRename?()
        guard fsync(fd) == 0 else { throw .posix(.io, "fsync", path: temp) }
        guard rename(temp, target) == 0 else { throw .posix(.io, "rename \(temp) to", path: target) }
        renamed = true
        try FileIO.syncDirectory(directory)

        if old >= 0 {
            var info = stat()
            guard fstat(old, &info) == 0 else { throw .posix(.io, "inspect", path: target) }
            let started = FileIO.monotonicNow()
            var late = 0
            while true {
                late += try copyTail(from: old, at: copied + late, to: fd, target: target, temp: temp)
                let elapsed = FileIO.monotonicNow() - started
                if elapsed >= Self.postRenameLimit { break }
                if elapsed >= Self.postRenameGrace
                    && !OpenFileHolders.anyWriter(device: info.st_dev, inode: info.st_ino, excludingOwn: old)
                {
                    late += try copyTail(from: old, at: copied + late, to: fd, target: target, temp: temp)
                    break
                }
                FileIO.sleep(seconds: 0.001)
            }
            if late > 0 { guard fsync(fd) == 0 else { throw .posix(.io, "fsync", path: target) } }
            close(old)
            old = -1
        }
        return true
    }

    /// Copies whatever the old file holds past `offset` to the end of the new one; returns the count.
    private func copyTail(from old: Int32, at offset: Int, to fd: Int32, target: String, temp: String) throws(HostError)
        -> Int
    {
        var total = 0
        while true {
            let chunk = try FileIO.read(old, at: offset + total, upTo: 65_536, path: target)
            if chunk.isEmpty { return total }
            try FileIO.writeAll(chunk, to: fd, path: temp)
            total += chunk.count
        }
    }
}

/// Byte-level helpers for authorized_keys contents: lines that this program does not touch are
/// written back exactly as they were.
enum AuthorizedKeysText {
    /// The range of every line, without its `\n` (a last line without one included).
    static func lineRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: "\n") {
            ranges.append(start..<index)
            start = index + 1
        }
        if start < bytes.count { ranges.append(start..<bytes.count) }
        return ranges
    }

    /// `bytes` with `lines` added, each ending in `\n`; a last line without one gets it first.
    static func appending(_ lines: [String], to bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        if let last = out.last, last != UInt8(ascii: "\n") { out.append(UInt8(ascii: "\n")) }
        for line in lines {
            out += line.utf8
            out.append(UInt8(ascii: "\n"))
        }
        return out
    }

    /// Whether `haystack` contains `needle` (empty needles are everywhere).
    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty else { return true }
        guard haystack.count >= needle.count else { return false }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
                return true
            }
            index += 1
        }
        return false
    }
}

/// The exclusive `flock` on a sidecar lock file.
///
/// Each acquisition opens the lock file anew, so threads of one process exclude each other too (flock
/// locks belong to the open file description). The lock file is never deleted: removing it would let
/// two writers lock two different files.
enum FileLockHolder {
    static func withExclusiveLock<T>(_ lockPath: String, ownerLike reference: String, _ body: () throws(HostError) -> T)
        throws(HostError) -> T
    {
        var fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        if fd < 0 && errno == EACCES { fd = open(lockPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        guard fd >= 0 else { throw .posix(.lock, "open the lock file", path: lockPath) }
        defer { close(fd) }
        if geteuid() == 0 {
            // Root working on someone's file: the lock file belongs to them, so their own helper can
            // open it later.
            var info = stat()
            var mine = stat()
            if stat(reference, &info) == 0 || stat(FileIO.directoryName(reference), &info) == 0,
                fstat(fd, &mine) == 0, mine.st_uid != info.st_uid
            {
                _ = fchown(fd, info.st_uid, info.st_gid)
            }
        }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw .posix(.lock, "lock", path: lockPath) }
        }
        return try body()
    }
}

/// Which processes hold a file open for writing, through `/proc`.
enum OpenFileHolders {
    /// Whether any descriptor other than `excludingOwn` (in this process) refers to the inode and was
    /// opened for writing. Processes whose `/proc/<pid>/fd` cannot be read (other users' when not
    /// root) cannot write to a file we own either, unless they are root.
    static func anyWriter(device: dev_t, inode: ino_t, excludingOwn own: Int32) -> Bool {
        let me = getpid()
        guard let proc = opendir("/proc") else { return false }
        defer { closedir(proc) }
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard let pid = Int32(name) else { continue }
            let fdDirectory = "/proc/\(pid)/fd"
            guard let fds = opendir(fdDirectory) else { continue }
            defer { closedir(fds) }
            while let fdEntry = readdir(fds) {
                let fdName = withUnsafeBytes(of: fdEntry.pointee.d_name) {
                    String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
                }
                guard let number = Int32(fdName), !(pid == me && number == own) else { continue }
                var info = stat()
                guard stat("\(fdDirectory)/\(fdName)", &info) == 0, info.st_dev == device, info.st_ino == inode else {
                    continue
                }
                if isOpenForWriting(pid: pid, fd: fdName) { return true }
            }
        }
        return false
    }

    /// Reads the `flags:` line of `/proc/<pid>/fdinfo/<fd>` (octal open flags). Unknown counts as writing.
    private static func isOpenForWriting(pid: Int32, fd: String) -> Bool {
        let path = "/proc/\(pid)/fdinfo/\(fd)"
        let handle = open(path, O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { return true }
        defer { close(handle) }
        guard let bytes = try? FileIO.readToEnd(handle, path: path, limit: 65_536) else { return true }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("flags:") {
            guard let flags = Int32(line.dropFirst(6).trimmingCharacters(in: " \t"), radix: 8) else { return true }
            return flags & O_ACCMODE != O_RDONLY
        }
        return true
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice.removeFirst() }
        while let last = slice.last, set.contains(last) { slice.removeLast() }
        return slice
    }
}
