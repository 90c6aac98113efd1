import Foundation
import HerdrCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// Whole-file writes that either fully happen or leave the old file in place, and reads with a size limit.
public enum AtomicFile {
    /// Replaces the file at `url` with `bytes`, created with `mode`.
    ///
    /// The bytes go to a fresh temp file in the same directory (created `O_EXCL` with `mode` from the start,
    /// so a secret is never readable by others even briefly), which is fsynced and renamed over the target,
    /// and then the directory is fsynced so the rename survives a crash. On a failure before the rename the
    /// temp file is removed and the target is untouched.
    public static func write(_ bytes: [UInt8], to url: URL, mode: mode_t = 0o600) throws(StorageError) {
        let path = url.path
        let directory = url.deletingLastPathComponent().path
        let (temp, fd) = try createTemp(next: path, mode: mode)
        var closed = false
        var renamed = false
        defer {
            if !closed { close(fd) }
            if !renamed { unlink(temp) }
        }
        // The umask may have narrowed the mode at open; set it exactly (never wider than asked).
        guard fchmod(fd, mode) == 0 else { throw .posix(.write, "set the mode of", path: temp) }
        try writeAll(bytes, to: fd, path: temp)
        guard fsync(fd) == 0 else { throw .posix(.sync, "fsync", path: temp) }
        closed = true
        guard close(fd) == 0 else { throw .posix(.write, "close", path: temp) }
        guard rename(temp, path) == 0 else { throw .posix(.rename, "rename \(temp) to", path: path) }
        renamed = true
        try syncDirectory(directory)
    }

    /// The contents of the file at `url`, or nil when there is none.
    ///
    /// Throws when the file is larger than `maxBytes`, so a huge or hostile file cannot exhaust memory.
    public static func readIfPresent(_ url: URL, maxBytes: Int) throws(StorageError) -> [UInt8]? {
        let path = url.path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .posix(.open, "open", path: path)
        }
        defer { close(fd) }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix(.read, "read", path: path)
            }
            if count == 0 { return out }
            out += chunk[..<count]
            guard out.count <= maxBytes else {
                throw StorageError(.tooLarge, path: path, message: "\(path) is larger than \(maxBytes) bytes")
            }
        }
    }

    /// Writes `bytes` to `file` durably unless a file is already there (then nothing changes and
    /// the answer is false). Readers never see a partial file; of two racing writers exactly one wins.
    public static func writeIfAbsent(_ bytes: [UInt8], to file: URL, mode: mode_t) throws(StorageError) -> Bool {
        let path = file.path
        let (temp, fd) = try createTemp(next: path, mode: mode)
        var closed = false
        defer {
            if !closed { close(fd) }
            // After a successful link the file has two names; the temp one always goes.
            unlink(temp)
        }
        guard fchmod(fd, mode) == 0 else { throw .posix(.write, "set the mode of", path: temp) }
        try writeAll(bytes, to: fd, path: temp)
        guard fsync(fd) == 0 else { throw .posix(.sync, "fsync", path: temp) }
        closed = true
        guard close(fd) == 0 else { throw .posix(.write, "close", path: temp) }
        // link, unlike rename, refuses to replace an existing file.
        if link(temp, path) != 0 {
            if errno == EEXIST { return false }
            throw .posix(.rename, "link the new file into place at", path: path)
        }
        try syncDirectory(file.deletingLastPathComponent().path)
        return true
    }

    /// Creates a new file next to `target` that nobody else can have opened: a random name, `O_EXCL`.
    ///
    /// Returns its path and an open descriptor; the caller owns both.
    static func createTemp(next target: String, mode: mode_t) throws(StorageError) -> (path: String, fd: Int32) {
        for _ in 0..<8 {
            let suffix = SecureRandom.bytes(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            let temp = target + ".tmp-" + suffix
            let fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
            if fd >= 0 { return (temp, fd) }
            if errno != EEXIST { throw .posix(.open, "create a temporary file for", path: target) }
        }
        throw StorageError(.open, path: target, message: "Could not find a free temporary name next to \(target)")
    }

    /// Writes all of `bytes`, retrying partial writes and interruptions.
    static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix(.write, "write", path: path)
            }
            offset += count
        }
    }

    /// Makes a rename or link in `directory` durable.
    static func syncDirectory(_ directory: String) throws(StorageError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(.sync, "open the directory", path: directory) }
        defer { close(fd) }
        // Some filesystems cannot fsync a directory; the rename itself has still happened.
        if fsync(fd) != 0, errno != EINVAL, errno != ENOTSUP {
            throw .posix(.sync, "fsync the directory", path: directory)
        }
    }
}

/// write(2), named apart from ``AtomicFile/write(_:to:mode:)``.
private func systemWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

extension String {
    /// The string with leading zeros added up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
