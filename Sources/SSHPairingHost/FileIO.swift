import Glibc
import HerdrCrypto

/// Small descriptor-level helpers shared by the file types of this module: whole reads with a limit,
/// whole writes, unique temporary names, directory syncs.
enum FileIO {
    /// Reads from `fd`'s current offset to end of file; throws `tooLarge` past `limit` bytes.
    static func readToEnd(_ fd: Int32, path: String, limit: Int) throws(HostError) -> [UInt8] {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix(.io, "read", path: path)
            }
            if count == 0 { return out }
            out += chunk[..<count]
            guard out.count <= limit else {
                throw HostError(.tooLarge, "\(path) is larger than \(limit) bytes")
            }
        }
    }

    /// Reads up to `limit` bytes at `offset` (pread: the descriptor's own offset is not moved).
    static func read(_ fd: Int32, at offset: Int, upTo limit: Int, path: String) throws(HostError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(limit, 0))
        var filled = 0
        while filled < out.count {
            let count = out.withUnsafeMutableBytes {
                pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(offset + filled))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix(.io, "read", path: path)
            }
            if count == 0 { break }
            filled += count
        }
        out.removeLast(out.count - filled)
        return out
    }

    /// Writes all of `bytes`, retrying partial writes and interruptions.
    static func writeAll(_ bytes: [UInt8], to fd: Int32, path: String) throws(HostError) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .posix(.io, "write", path: path)
            }
            offset += count
        }
    }

    /// A fresh random suffix for temporary names (16 hex digits).
    static func randomSuffix() -> String {
        SecureRandom.bytes(8).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// Makes a rename or link in `directory` durable. Filesystems that cannot sync a directory are
    /// tolerated: the rename itself has still happened.
    static func syncDirectory(_ directory: String) throws(HostError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(.io, "open the directory", path: directory) }
        defer { close(fd) }
        if fsync(fd) != 0, errno != EINVAL, errno != ENOTSUP {
            throw .posix(.io, "fsync the directory", path: directory)
        }
    }

    /// The directory part of an absolute path (`/` for a file in the root).
    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The last component of a path.
    static func baseName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// Sleeps for `seconds` (fractions allowed), resuming after interruptions.
    static func sleep(seconds: Double) {
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    /// Seconds on the monotonic clock, for deadlines that wall-clock changes cannot move.
    static func monotonicNow() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}
