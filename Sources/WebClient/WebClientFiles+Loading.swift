import Foundation
import Glibc

extension WebClientFiles {
    /// `<the program's directory>/../share/herdr-remote/web`: where `make install` puts the web
    /// client, beside the programs (herdr-relay serves it from there by default, herdr-host pair
    /// compares a served client with it).
    public static func installedRoot(executable: String = executablePath()) -> String {
        let directory = (executable as NSString).deletingLastPathComponent
        return ((directory as NSString).deletingLastPathComponent as NSString).appendingPathComponent(
            "share/herdr-remote/web")
    }

    /// This program's path, links resolved (`/proc/self/exe`).
    public static func executablePath() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Reads the web client's files under `root` once, at start: every regular file whose path
    /// below the root `contentType(servablePath:)` accepts, in directories
    /// `isServableDirectory` accepts (no dotfiles, no `test`, `test-support`, `bench`). A symbolic
    /// link to a file is read only when its target is inside the root; links to directories, and
    /// links leading out, are skipped and reported to `skipped`. Stops as soon as the files exceed
    /// `maximumTotalBytes` or `maximumFileCount`, before reading more.
    public static func load(root: String, skipped: (String) -> Void = { _ in }) throws(WebClientFilesError)
        -> WebClientFiles
    {
        guard let resolved = realpath(root, nil) else {
            throw WebClientFilesError(.noRoot, "\(root) does not exist")
        }
        let base = String(cString: resolved)
        free(resolved)
        var info = stat()
        guard stat(base, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw WebClientFilesError(.noRoot, "\(root) is not a directory")
        }
        var loader = Loader(base: base, root: root)
        try loader.walk(directory: base, relative: "")
        loader.skipped.forEach(skipped)
        return try WebClientFiles(loader.entries)
    }

    private struct Loader {
        let base: String
        let root: String
        var skipped: [String] = []
        var entries: [(path: String, bytes: [UInt8])] = []
        var total = 0

        mutating func walk(directory: String, relative: String) throws(WebClientFilesError) {
            for name in try Self.names(in: directory) {
                let path = relative.isEmpty ? name : relative + "/" + name
                let full = directory + "/" + name
                var info = stat()
                guard lstat(full, &info) == 0 else { continue }
                switch info.st_mode & S_IFMT {
                case S_IFDIR:
                    if WebClientFiles.isServableDirectory(path) { try walk(directory: full, relative: path) }
                case S_IFREG:
                    if WebClientFiles.contentType(servablePath: path) != nil { try read(full, as: path) }
                case S_IFLNK:
                    guard WebClientFiles.contentType(servablePath: path) != nil else { continue }
                    guard let target = realpath(full, nil) else {
                        skipped.append("\(path): a symbolic link to nothing")
                        continue
                    }
                    let resolved = String(cString: target)
                    free(target)
                    var targetInfo = stat()
                    guard resolved.hasPrefix(base + "/"), stat(resolved, &targetInfo) == 0,
                        targetInfo.st_mode & S_IFMT == S_IFREG
                    else {
                        skipped.append("\(path): a symbolic link out of \(root) or to no regular file")
                        continue
                    }
                    try read(resolved, as: path)
                default:
                    continue
                }
            }
        }

        /// Reads one file, counting it against the bounds first by its size, then by what was read.
        mutating func read(_ file: String, as path: String) throws(WebClientFilesError) {
            guard entries.count < WebClientFiles.maximumFileCount else {
                throw WebClientFilesError(
                    .tooMany, "\(root) holds more than \(WebClientFiles.maximumFileCount) files the relay would serve")
            }
            // Non-blocking, so a FIFO swapped in after the check cannot hang the start.
            let fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { throw WebClientFilesError(.unreadable, "cannot read \(file): \(Self.errnoText())") }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw WebClientFilesError(.unreadable, "\(file) is not a regular file")
            }
            let room = WebClientFiles.maximumTotalBytes - total
            guard Int(info.st_size) <= room else { throw tooLarge() }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = Glibc.read(fd, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                guard count >= 0 else {
                    throw WebClientFilesError(.unreadable, "cannot read \(file): \(Self.errnoText())")
                }
                if count == 0 { break }
                bytes += chunk[0..<count]
                guard bytes.count <= room else { throw tooLarge() }
            }
            total += bytes.count
            entries.append((path, bytes))
        }

        func tooLarge() -> WebClientFilesError {
            WebClientFilesError(
                .tooLarge,
                "the files under \(root) the relay would serve come to more than \(WebClientFiles.maximumTotalBytes) bytes (8 MiB)"
            )
        }

        /// A directory's entries but `.` and `..`, in bytewise order.
        static func names(in directory: String) throws(WebClientFilesError) -> [String] {
            guard let handle = opendir(directory) else {
                throw WebClientFilesError(.unreadable, "cannot list \(directory): \(errnoText())")
            }
            defer { closedir(handle) }
            var names: [String] = []
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name != "." && name != ".." { names.append(name) }
            }
            return names.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        }

        static func errnoText() -> String { String(cString: strerror(errno)) }
    }
}
