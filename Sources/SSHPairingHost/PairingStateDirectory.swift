import Foundation
import Glibc

/// Where herdr-pair keeps the state of running pairings: `$XDG_STATE_HOME/herdr-pair` when that is an
/// absolute path, else `$HOME/.local/state/herdr-pair` (the passwd home when HOME is unusable).
public enum StateLocation {
    /// The name of the base directory under the state home.
    public static let directoryName = "herdr-pair"

    /// The base the foreground helper uses.
    public static func base(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        acceptedBases(environment: environment)[0]
    }

    /// Every base a state directory may live in, by the same rule under the environments of both the
    /// person's terminal and sshd's session (which may differ in XDG_STATE_HOME or HOME): the XDG one,
    /// the HOME one, and the passwd home's.
    public static func acceptedBases(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        var bases: [String] = []
        if let xdg = environment["XDG_STATE_HOME"].map(trimmed), xdg.hasPrefix("/"), xdg.count > 1 {
            bases.append(xdg + "/" + directoryName)
        }
        for home in [environment["HOME"].map(trimmed), passwdHome().map(trimmed)] {
            guard let home, home.hasPrefix("/") else { continue }
            bases.append((home == "/" ? "" : home) + "/.local/state/" + directoryName)
        }
        if bases.isEmpty { bases.append("/tmp/\(directoryName)-\(geteuid())") }
        var seen: Set<String> = []
        return bases.filter { seen.insert($0).inserted }
    }

    /// The passwd home directory of the effective user.
    public static func passwdHome() -> String? {
        guard let entry = getpwuid(geteuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }

    private static func trimmed(_ path: String) -> String {
        var path = path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        return path
    }
}

/// One pairing's state directory, `<base>/<pairing id>` (mode 0700), and the files through which the
/// enroll command (run by sshd) and the foreground helper talk:
///
/// | file | written by | how | meaning |
/// |---|---|---|---|
/// | `owner` | foreground | temp + rename, before the one-time line exists | ``OwnerRecord`` |
/// | `request` | enroll | temp + `link(2)`: exclusive *and* complete at once | the claim: the two request lines |
/// | `request` | foreground | the same link | `closed`: the pairing ended without a request |
/// | `verdict` | foreground | temp + rename | `OK`, `DENIED` or `EXPIRED` |
/// | `ack` | enroll | exclusive create | the enroll command has read the verdict |
///
/// Every access goes through descriptors opened with `O_NOFOLLOW` relative to the directory's own
/// descriptor, so nothing here follows a symlink or can be pointed elsewhere once opened.
public final class PairingStateDirectory: @unchecked Sendable {
    static let ownerFile = "owner"
    static let requestFile = "request"
    static let verdictFile = "verdict"
    static let ackFile = "ack"
    static let tempPrefix = ".tmp-"
    /// What the foreground links as `request` when the pairing ends without one.
    static let closedMarker = "closed\n"
    /// The largest request or verdict file read.
    static let maximumFileBytes = 4096

    /// The directory's path.
    public let path: String
    public let pairingID: PairingID
    /// The owner record read or written when the directory was opened or made.
    public let owner: OwnerRecord
    private let parentFD: Int32
    private let fd: Int32

    private init(path: String, pairingID: PairingID, owner: OwnerRecord, parentFD: Int32, fd: Int32) {
        self.path = path
        self.pairingID = pairingID
        self.owner = owner
        self.parentFD = parentFD
        self.fd = fd
    }

    deinit {
        close(fd)
        close(parentFD)
    }

    // MARK: Making and opening

    /// Makes `<base>/<id>` (0700, creating the base 0700 and missing parents 0700 too) and writes the
    /// owner record into it. Run by the foreground helper before its one-time line is added.
    public static func create(base: String, owner: OwnerRecord) throws(HostError) -> PairingStateDirectory {
        try makeBase(base)
        let parentFD = try openDirectory(base, label: "the state directory")
        let id = owner.pairingID
        guard mkdirat(parentFD, id.text, 0o700) == 0 else {
            close(parentFD)
            throw .posix(.io, "create", path: base + "/" + id.text)
        }
        let path = base + "/" + id.text
        let fd = openat(parentFD, id.text, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let error = HostError.posix(.io, "open", path: path)
            close(parentFD)
            throw error
        }
        let directory = PairingStateDirectory(path: path, pairingID: id, owner: owner, parentFD: parentFD, fd: fd)
        guard fchmod(fd, 0o700) == 0 else {
            directory.remove()
            throw .posix(.io, "set the mode of", path: path)
        }
        do {
            try directory.writeAtomically(ownerFile, owner.text)
        } catch {
            directory.remove()
            throw error
        }
        return directory
    }

    /// Why ``open(path:pairingID:acceptedBases:)`` refused a directory.
    public enum OpenFailure: Error, Sendable, Equatable {
        /// The directory (or its owner record) does not exist: the pairing is over.
        case missing
        /// The path or what it names is not a state directory this user's helper made.
        case rejected(String)
    }

    /// Opens an existing state directory after checking everything the forced command can rely on:
    ///
    /// - `path` is absolute and canonical (no `.`, `..`, empty components or trailing slash), ends in
    ///   `/herdr-pair/<id>`, and (when `acceptedBases` is given) its parent is one of them;
    /// - the parent and the directory are real directories (not symlinks) owned by this user, the
    ///   parent closed to others, the directory mode exactly 0700;
    /// - `owner` is a regular file of this user with one link, at most 4 KiB, a valid record for this id.
    ///
    /// So a forced command line cannot be bent into writing anywhere but a directory this user's
    /// helper made for this very pairing.
    public static func open(path: String, pairingID: PairingID, acceptedBases: [String]?) throws(OpenFailure)
        -> PairingStateDirectory
    {
        let components = path.split(separator: "/", omittingEmptySubsequences: false)
        guard path.hasPrefix("/"), path.utf8.count <= 4096, components.count >= 4,
            components.dropFirst().allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." })
        else { throw .rejected("the state path \(path) is not an absolute canonical path") }
        guard components.last == Substring(pairingID.text),
            components[components.count - 2] == Substring(StateLocation.directoryName)
        else { throw .rejected("the state path \(path) is not <state>/herdr-pair/\(pairingID.text)") }
        let base = FileIO.directoryName(path)
        if let acceptedBases, !acceptedBases.contains(base) {
            throw .rejected(
                "the state path \(path) is not under this user's state directory (\(acceptedBases.joined(separator: ", ")))"
            )
        }
        let parentFD = Glibc.open(base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard parentFD >= 0 else {
            if errno == ENOENT { throw .missing }
            throw .rejected("cannot open \(base): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(parentFD, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            close(parentFD)
            throw .rejected("\(base) is not a private directory of this user")
        }
        let fd = openat(parentFD, pairingID.text, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            close(parentFD)
            if code == ENOENT { throw .missing }
            throw .rejected("cannot open \(path): \(String(cString: strerror(code)))")
        }
        guard fstat(fd, &info) == 0, info.st_uid == geteuid(), info.st_mode & 0o777 == 0o700 else {
            close(fd)
            close(parentFD)
            throw .rejected("\(path) is not a directory of this user with mode 0700")
        }
        let ownerText: String
        switch readFile(fd, ownerFile, directory: path) {
        case .success(let text?): ownerText = text
        case .success(nil):
            close(fd)
            close(parentFD)
            throw .missing
        case .failure(let error):
            close(fd)
            close(parentFD)
            throw .rejected(error.message)
        }
        guard let record = try? OwnerRecord(text: ownerText), record.pairingID == pairingID else {
            close(fd)
            close(parentFD)
            throw .rejected("\(path)/owner is not the owner record of pairing \(pairingID.text)")
        }
        return PairingStateDirectory(path: path, pairingID: pairingID, owner: record, parentFD: parentFD, fd: fd)
    }

    // MARK: The exchange

    /// What a claim found.
    public enum Claim: Sendable, Equatable {
        /// This request is now the pairing's one request.
        case claimed
        /// Another enroll claimed the id first.
        case used
        /// The pairing ended (expired, cancelled) before any request.
        case closed
    }

    /// The enroll command's claim: the request lines become `request`, exclusively and completely at
    /// once (written to a temporary file, then `link`ed, which fails if `request` exists).
    public func claim(_ request: EnrollRequest) throws(HostError) -> Claim {
        if try link(Self.requestFile, request.text) { return .claimed }
        return try readFile(Self.requestFile) == Self.closedMarker ? .closed : .used
    }

    /// The foreground's end without a request: takes the `request` slot with the closed marker, so a
    /// late enroll answers `EXPIRED`. Returns false when a request got there first.
    public func closeForRequests() throws(HostError) -> Bool {
        try link(Self.requestFile, Self.closedMarker)
    }

    /// What the `request` slot holds.
    public enum RequestSlot: Sendable, Equatable {
        case empty
        case closed
        case request(EnrollRequest)
        /// Something that is not a valid request (never written by our enroll command).
        case unreadable(String)
    }

    /// The request slot, read by the foreground while it waits.
    public func requestSlot() -> RequestSlot {
        let text: String?
        do {
            text = try readFile(Self.requestFile)
        } catch {
            return .unreadable(error.message)
        }
        guard let text else { return .empty }
        if text == Self.closedMarker { return .closed }
        do {
            return .request(try EnrollRequest(text: text))
        } catch {
            return .unreadable(error.message)
        }
    }

    /// The foreground's answer for the enroll command: `OK`, `DENIED` or `EXPIRED`.
    public func writeVerdict(_ outcome: EnrollOutcome) throws(HostError) {
        precondition([.ok, .denied, .expired].contains(outcome), "only OK, DENIED and EXPIRED are verdicts")
        try writeAtomically(Self.verdictFile, outcome.token + "\n")
    }

    /// The verdict, once the foreground wrote one.
    public func verdict() -> EnrollOutcome? {
        guard let text = try? readFile(Self.verdictFile), let outcome = EnrollOutcome(rawValue: text.trimmingNewline()),
            [.ok, .denied, .expired].contains(outcome)
        else { return nil }
        return outcome
    }

    /// The enroll command read the verdict.
    public func acknowledge() {
        let ack = openat(fd, Self.ackFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if ack >= 0 { close(ack) }
    }

    public var isAcknowledged: Bool {
        var info = stat()
        return fstatat(fd, Self.ackFile, &info, AT_SYMLINK_NOFOLLOW) == 0
    }

    // MARK: Removal

    /// Removes the files this protocol writes (and leftover temporary files), then the directory.
    /// Anything else inside (never written by herdr-pair) keeps the directory in place.
    @discardableResult
    public func remove() -> Bool {
        for name in [Self.ownerFile, Self.requestFile, Self.verdictFile, Self.ackFile] + temporaryNames() {
            unlinkat(fd, name, 0)
        }
        return unlinkat(parentFD, pairingID.text, AT_REMOVEDIR) == 0 || errno == ENOENT
    }

    private func temporaryNames() -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasPrefix(Self.tempPrefix) { names.append(name) }
        }
        return names
    }

    // MARK: Files

    /// Writes `text` to a temporary file in the directory and renames it to `name`.
    private func writeAtomically(_ name: String, _ text: String) throws(HostError) {
        let temp = try writeTemporary(text)
        guard renameat(fd, temp, fd, name) == 0 else {
            let error = HostError.posix(.io, "rename into place", path: path + "/" + name)
            unlinkat(fd, temp, 0)
            throw error
        }
        fsync(fd)
    }

    /// Writes `text` to a temporary file and links it as `name`; false when `name` exists.
    private func link(_ name: String, _ text: String) throws(HostError) -> Bool {
        let temp = try writeTemporary(text)
        defer { unlinkat(fd, temp, 0) }
        if linkat(fd, temp, fd, name, 0) == 0 {
            fsync(fd)
            return true
        }
        if errno == EEXIST { return false }
        throw .posix(.io, "link", path: path + "/" + name)
    }

    private func writeTemporary(_ text: String) throws(HostError) -> String {
        let temp = Self.tempPrefix + FileIO.randomSuffix()
        let file = openat(fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw .posix(.io, "create a file in", path: path) }
        defer { close(file) }
        do {
            try FileIO.writeAll(Array(text.utf8), to: file, path: path + "/" + temp)
        } catch {
            unlinkat(fd, temp, 0)
            throw error
        }
        guard fsync(file) == 0 else {
            unlinkat(fd, temp, 0)
            throw .posix(.io, "fsync", path: path + "/" + temp)
        }
        return temp
    }

    private func readFile(_ name: String) throws(HostError) -> String? {
        try Self.readFile(fd, name, directory: path).get()
    }

    /// A small regular file of this user inside the directory, nil when absent.
    private static func readFile(_ directoryFD: Int32, _ name: String, directory: String) -> Result<String?, HostError>
    {
        let file = openat(directoryFD, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else {
            if errno == ENOENT { return .success(nil) }
            return .failure(.posix(.io, "open", path: directory + "/" + name))
        }
        defer { close(file) }
        var info = stat()
        guard fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid(),
            info.st_size <= maximumFileBytes
        else { return .failure(HostError(.unsafe, "\(directory)/\(name) is not a small regular file of this user")) }
        do {
            let bytes = try FileIO.readToEnd(file, path: directory + "/" + name, limit: maximumFileBytes)
            return .success(String(decoding: bytes, as: UTF8.self))
        } catch {
            return .failure(error)
        }
    }

    // MARK: The base

    /// Creates the base (and missing parents) with mode 0700 and checks it is a private directory of
    /// this user; a base of this user with a wider mode is narrowed to 0700.
    static func makeBase(_ base: String) throws(HostError) {
        guard base.hasPrefix("/") else { throw HostError(.invalidPath, "The state directory \(base) is not absolute") }
        var built = ""
        for component in base.split(separator: "/") {
            built += "/" + component
            if mkdir(built, 0o700) != 0 && errno != EEXIST { throw .posix(.io, "create", path: built) }
        }
        var info = stat()
        guard lstat(base, &info) == 0 else { throw .posix(.io, "inspect", path: base) }
        guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid() else {
            throw HostError(.unsafe, "\(base) is not a directory owned by this user")
        }
        if info.st_mode & 0o077 != 0 {
            guard chmod(base, 0o700) == 0 else { throw .posix(.io, "set the mode of", path: base) }
        }
    }

    private static func openDirectory(_ path: String, label: String) throws(HostError) -> Int32 {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw .posix(.io, "open \(label)", path: path) }
        return fd
    }

    /// The pairing ids that have a directory under `base`.
    public static func pairingIDs(inBase base: String) -> [PairingID] {
        guard let stream = opendir(base) else { return [] }
        defer { closedir(stream) }
        var ids: [PairingID] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) {
                String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
            }
            if let id = PairingID(text: name) { ids.append(id) }
        }
        return ids
    }
}

extension String {
    func trimmingNewline() -> String {
        var text = self
        while text.last == "\n" || text.last == "\r" { text.removeLast() }
        return text
    }
}
