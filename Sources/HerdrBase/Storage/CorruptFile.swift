import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Moving an unreadable file out of the way without destroying it or an earlier one.
public enum CorruptFile {
    /// Renames `url` to `<name>.corrupt`, or `<name>.corrupt-<unix time>` (then `-<n>`) when that is taken.
    ///
    /// Uses `link` + `unlink`, because `link` refuses an existing name atomically, so an earlier corrupt file
    /// is never overwritten even if two processes do this at once. Returns the new location.
    public static func moveAside(_ url: URL, now: Date = Date()) throws(StorageError) -> URL {
        let path = url.path
        let stamp = Int(now.timeIntervalSince1970)
        var candidates = [path + ".corrupt", path + ".corrupt-\(stamp)"]
        candidates += (1...20).map { path + ".corrupt-\(stamp)-\($0)" }
        for candidate in candidates {
            if link(path, candidate) == 0 {
                guard unlink(path) == 0 else { throw .posix(.remove, "remove", path: path) }
                try? AtomicFile.syncDirectory(url.deletingLastPathComponent().path)
                return URL(fileURLWithPath: candidate)
            }
            if errno != EEXIST { throw .posix(.rename, "move aside", path: path) }
        }
        throw StorageError(.rename, path: path, message: "Could not find a free name to move \(path) aside")
    }
}
