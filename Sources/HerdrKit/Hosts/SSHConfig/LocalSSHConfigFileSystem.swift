import Glibc

/// The real file system, read as ssh reads it: plain open and read, glob(3) for Include.
public struct LocalSSHConfigFileSystem: SSHConfigFileSystem {
    /// The file system of this machine.
    public init() {}

    public func read(_ path: String, checkPermissions: Bool, maxBytes: Int) -> SSHConfigFileRead {
        // O_NONBLOCK: a FIFO named in a config must not hang the import (ssh would wait on it).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard fd >= 0 else {
            return errno == ENOENT ? .missing : .unreadable(String(cString: strerror(errno)))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .unreadable(String(cString: strerror(errno))) }
        let type = info.st_mode & S_IFMT
        if type == S_IFDIR { return .contents([]) }
        guard type == S_IFREG else { return .unreadable("not a regular file") }
        // readconf.c: owned by root or the user, and not group- or world-writable.
        if checkPermissions && ((info.st_uid != 0 && info.st_uid != getuid()) || info.st_mode & 0o022 != 0) {
            return .badPermissions
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while bytes.count <= maxBytes {
            let wanted = min(buffer.count, maxBytes + 1 - bytes.count)
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                return .unreadable(String(cString: strerror(errno)))
            }
            if count == 0 { break }
            bytes += buffer[..<count]
        }
        return .contents(bytes)
    }

    public func glob(_ pattern: String, limit: Int) -> SSHConfigGlobResult {
        var result = glob_t()
        defer { globfree(&result) }
        // No GLOB_TILDE: the resolver has expanded `~` itself, from the home it was given.
        switch Glibc.glob(pattern, 0, nil, &result) {
        case 0:
            var paths: [String] = []
            for index in 0..<min(Int(result.gl_pathc), limit + 1) {
                if let path = result.gl_pathv[index] { paths.append(String(cString: path)) }
            }
            return .matches(paths)
        case GLOB_NOMATCH:
            return .matches([])
        case GLOB_NOSPACE:
            return .failed("out of memory")
        default:
            return .failed("read error")
        }
    }
}
