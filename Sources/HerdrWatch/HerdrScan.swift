import Glibc
import HerdrAgents

/// One look at herdr's directory: whether herdr is there at all, and its sessions with their
/// sockets (the default first, then named ones by name, at most `HerdrSessionInfo.maximumCount`).
/// A socket's file identity changes when its server starts again (a new socket file), which is
/// how the watcher notices a herdr that restarted between two looks.
public struct HerdrScan: Sendable, Hashable {
    public var herdr: HerdrAvailability
    public var sessions: [Entry]

    public struct Entry: Sendable, Hashable {
        public var name: String
        public var isDefault: Bool
        public var socket: String
        /// The socket file as it is now; nil when there is none.
        public var file: FileIdentity?

        public init(name: String, isDefault: Bool, socket: String, file: FileIdentity?) {
            self.name = name
            self.isDefault = isDefault
            self.socket = socket
            self.file = file
        }
    }

    /// Which file a path names: a socket made again gets another inode or change time.
    public struct FileIdentity: Sendable, Hashable {
        public var device: UInt64
        public var inode: UInt64
        public var changed: Int64

        public init(device: UInt64, inode: UInt64, changed: Int64) {
            self.device = device
            self.inode = inode
            self.changed = changed
        }
    }

    public init(herdr: HerdrAvailability, sessions: [Entry] = []) {
        self.herdr = herdr
        self.sessions = sessions
    }

    /// Reads `location` now (a few `stat`s and one directory listing: cheap enough to repeat
    /// every couple of seconds while a device watches).
    public static func read(_ location: HerdrLocation) -> HerdrScan {
        var info = stat()
        let config = location.configDirectory
        if stat(config, &info) != 0 {
            let missing = errno == ENOENT
            if missing, location.socketOverride == nil, !hasProgram(location) {
                return HerdrScan(
                    herdr: HerdrAvailability(.notInstalled, detail: "no herdr on PATH and no ~/.config/herdr"))
            }
            if !missing {
                return HerdrScan(
                    herdr: HerdrAvailability(
                        .failing, detail: "cannot read ~/.config/herdr: \(String(cString: strerror(errno)))"))
            }
        } else if info.st_mode & S_IFMT != S_IFDIR {
            return HerdrScan(herdr: HerdrAvailability(.failing, detail: "~/.config/herdr is not a directory"))
        }
        let defaultSocket = location.socket(session: HerdrSessionInfo.defaultName, isDefault: true)
        var sessions = [
            Entry(
                name: HerdrSessionInfo.defaultName, isDefault: true, socket: defaultSocket,
                file: socketFile(defaultSocket))
        ]
        switch namedSessions(location) {
        case .success(let names):
            for name in names.prefix(HerdrSessionInfo.maximumCount - 1) {
                let socket = location.socket(session: name, isDefault: false)
                sessions.append(Entry(name: name, isDefault: false, socket: socket, file: socketFile(socket)))
            }
        case .failure(let error):
            return HerdrScan(
                herdr: HerdrAvailability(.failing, detail: "cannot list ~/.config/herdr/sessions: \(error.detail)"))
        }
        return HerdrScan(herdr: .ready, sessions: sessions)
    }

    /// The socket file at `path`, if one is there (anything else is no server's socket).
    static func socketFile(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return FileIdentity(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino),
            changed: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
    }

    /// The named sessions' directories, by name (herdr's name rule; the default's name excluded).
    private static func namedSessions(_ location: HerdrLocation) -> Result<[String], HerdrRequestFailure> {
        guard let directory = opendir(location.sessionsDirectory) else {
            if errno == ENOENT || errno == ENOTDIR { return .success([]) }
            return .failure(HerdrRequestFailure(.system, String(cString: strerror(errno))))
        }
        defer { closedir(directory) }
        var names: [String] = []
        // Bounded: a directory of a million entries is read no further than this.
        var entries = 0
        while entries < 65_536, let entry = readdir(directory) {
            entries += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            let type = entry.pointee.d_type
            guard type == DT_DIR || type == DT_UNKNOWN || type == DT_LNK else { continue }
            guard name != HerdrSessionInfo.defaultName, HerdrSessionInfo.isValidName(name) else { continue }
            names.append(name)
        }
        return .success(names.sorted())
    }

    private static func hasProgram(_ location: HerdrLocation) -> Bool {
        location.programDirectories.contains { access($0 + "/herdr", X_OK) == 0 }
    }
}
