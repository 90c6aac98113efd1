import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An exclusive `flock` on a sidecar lock file, for read-modify-write of a file shared between processes.
///
/// Each acquisition opens the lock file anew, so threads of one process exclude each other as well
/// (flock locks belong to the open file description). The lock file is never deleted: removing it would
/// let two processes lock two different files.
public enum FileLock {
    /// Runs `body` while holding the lock on `url`, creating the lock file (0600) if needed.
    public static func withExclusiveLock<T>(
        _ url: URL, _ body: () throws(StorageError) -> T
    ) throws(StorageError) -> T {
        let path = url.path
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .posix(.lock, "open the lock file", path: path) }
        // Closing the descriptor releases the lock.
        defer { close(fd) }
        while flock(fd, LOCK_EX) != 0 {
            if errno != EINTR { throw .posix(.lock, "lock", path: path) }
        }
        return try body()
    }
}
