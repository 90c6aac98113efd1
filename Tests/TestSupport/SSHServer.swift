import Foundation
import Glibc

/// A private OpenSSH sshd for tests: its own config, host keys made for this run, a high port on
/// loopback (or inside a test network namespace), a fixture HOME owned by the test user whose
/// PATH holds the `herdr` stand-in (`herdr`, tmux behind it, sessions and agents a test starts
/// through `herdr`), and its own authorized_keys.
public final class SSHServer: @unchecked Sendable {
    public struct Options: Sendable {
        public var listenAddress = "127.0.0.1"
        public var port = 0
        /// Run sshd inside this network namespace (`ip netns exec`).
        public var networkNamespace: String?
        /// e.g. ["publickey"], ["password"], ["keyboard-interactive"].
        public var authenticationMethods = ["publickey"]
        public var hostKeyTypes = ["ed25519", "ecdsa"]
        public var extraConfig: [String] = []
        public var userName = "herdrtest"

        public init() {}
    }

    public let options: Options
    public let user: TestUser
    public let directory: TemporaryDirectory
    /// The computer's herdr, installed in the fixture HOME and run as the test user.
    public let herdr: HerdrStandIn
    public private(set) var port: Int
    private var process: ChildProcess?
    private let lock = NSLock()

    public var host: String { options.listenAddress }
    public var homeDirectory: URL { directory.appending("home") }
    public var binDirectory: URL { herdr.binDirectory }
    public var authorizedKeysFile: URL { directory.appending("authorized_keys") }
    public var logFile: URL { directory.appending("sshd.log") }
    /// A directory the test user may write in, outside its HOME.
    public var runDirectory: URL { directory.appending("run") }
    public var pid: Int32? { lock.withLock { process?.pid } }

    public init(_ options: Options = Options()) throws {
        self.options = options
        self.user = try TestUser.ensure(name: options.userName)
        self.directory = try TemporaryDirectory(prefix: "herdr-sshd-", mode: 0o755)
        self.herdr = try HerdrStandIn(home: directory.appending("home"), owner: user)
        self.port = options.port
        try prepareFiles()
        try start()
    }

    deinit { stop() }

    // MARK: Files

    private func prepareFiles() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: directory.appending("keys"), withIntermediateDirectories: true)
        // A directory the sessions' user writes (markers a test waits for).
        try fm.createDirectory(at: runDirectory, withIntermediateDirectories: true)
        guard chown(runDirectory.path, user.uid, user.gid) == 0 else {
            throw FixtureError("chown run failed: \(String(cString: strerror(errno)))")
        }
        for type in options.hostKeyTypes {
            let path = directory.appending("keys/ssh_host_\(type)_key").path
            try ProcessRunner.run("ssh-keygen", ["-q", "-t", type, "-N", "", "-f", path], check: true)
        }
        try write("", to: authorizedKeysFile, mode: 0o644)
        try write("", to: logFile, mode: 0o600)
    }

    private func write(_ text: String, to url: URL, mode: mode_t) throws {
        try Data(text.utf8).write(to: url)
        guard chmod(url.path, mode) == 0 else { throw FixtureError("chmod \(url.path) failed") }
    }

    /// Adds a line to the fixture's authorized_keys.
    public func authorize(_ line: String) throws {
        let handle = try FileHandle(forWritingTo: authorizedKeysFile)
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data((line.hasSuffix("\n") ? line : line + "\n").utf8))
    }

    public var configFile: URL { directory.appending("sshd_config") }

    private func writeConfig() throws {
        let methods = options.authenticationMethods
        var lines = [
            "Port \(port)",
            "ListenAddress \(options.listenAddress)",
            "AuthorizedKeysFile \(authorizedKeysFile.path)",
            "PidFile none",
            "StrictModes no",
            "UsePAM \(methods.contains("keyboard-interactive") ? "yes" : "no")",
            "PubkeyAuthentication \(methods.contains("publickey") ? "yes" : "no")",
            "PasswordAuthentication \(methods.contains("password") ? "yes" : "no")",
            "KbdInteractiveAuthentication \(methods.contains("keyboard-interactive") ? "yes" : "no")",
            "AuthenticationMethods \(methods.joined(separator: " "))",
            "AllowUsers \(user.name)",
            "PermitRootLogin no",
            "LogLevel DEBUG1",
            "UseDNS no",
            "X11Forwarding no",
            "PrintMotd no",
            "PrintLastLog no",
            "LoginGraceTime 60",
            "MaxStartups 100",
            // HERDR_FIXTURE marks every process a session starts, so teardown finds even those
            // that outlived their sshd (a daemonized tmux, a forced command whose client left).
            "SetEnv HOME=\(homeDirectory.path) HERDR_FIXTURE=\(directory.path)",
        ]
        for type in options.hostKeyTypes {
            lines.append("HostKey \(directory.appending("keys/ssh_host_\(type)_key").path)")
        }
        lines += options.extraConfig
        try write(lines.joined(separator: "\n") + "\n", to: configFile, mode: 0o600)
    }

    // MARK: Process

    /// Starts sshd (again, after `kill`), on the same port and host keys.
    public func start() throws {
        if port == 0 { port = try Self.freePort(on: options.listenAddress) }
        try writeConfig()
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        let sshd = "/usr/sbin/sshd"
        var arguments = ["-D", "-f", configFile.path, "-E", logFile.path]
        var executable = sshd
        if let namespace = options.networkNamespace {
            executable = try ProcessRunner.which("ip")
            arguments = ["netns", "exec", namespace, sshd] + arguments
        }
        let process = try ChildProcess(executable, arguments)
        lock.withLock { self.process = process }
        try waitUntilListening(process: process)
    }

    private func waitUntilListening(process: ChildProcess) throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if let status = process.status {
                throw FixtureError("sshd exited with \(status): \(log().suffix(2000))")
            }
            if log().contains("Server listening on") { return }
            usleep(20_000)
        }
        throw FixtureError("sshd did not start listening within 10 s: \(log().suffix(2000))")
    }

    /// Stops sshd and every process its sessions started: its descendants, the herdr stand-in's
    /// servers and tmux servers, and anything else carrying this fixture's HERDR_FIXTURE mark
    /// (orphaned commands). All ours, by PID or by our own sockets.
    public func stop() {
        if let process = lock.withLock({ () -> ChildProcess? in
            defer { self.process = nil }
            return self.process
        }) {
            for child in Self.descendants(of: process.pid) { kill(child, SIGKILL) }
            process.signal(SIGTERM)
            process.wait()
        }
        herdr.stop()
        for pid in markedProcesses() { kill(pid, SIGKILL) }
    }

    /// Kills sshd and its per-connection processes with SIGKILL, as if the host vanished.
    /// The tmux server daemonized (it is no descendant), so it survives and a reattach finds the session.
    public func killHard() {
        guard
            let process = lock.withLock({ () -> ChildProcess? in
                defer { self.process = nil }
                return self.process
            })
        else { return }
        for child in Self.descendants(of: process.pid) { kill(child, SIGKILL) }
        process.signal(SIGKILL)
        process.wait()
    }

    /// Stops everything (see `stop`) and removes the fixture directory.
    public func destroy() {
        stop()
        directory.remove()
    }

    /// Processes whose environment holds this fixture's mark, or whose command line names the
    /// fixture's directory (tmux rewrites its environment block, but not its arguments).
    public func markedProcesses() -> [Int32] {
        let mark = Array("HERDR_FIXTURE=\(directory.path)".utf8)
        let path = Array(directory.path.utf8)
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int32? in
            guard let pid = Int32(entry), pid != getpid() else { return nil }
            if let environment = FileManager.default.contents(atPath: "/proc/\(entry)/environ"),
                environment.split(separator: 0).contains(where: { Array($0) == mark })
            {
                return pid
            }
            if let arguments = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline"),
                arguments.split(separator: 0).contains(where: { Array($0).starts(with: path) })
            {
                return pid
            }
            return nil
        }
    }

    public func log() -> String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The host key lines `ssh-keyscan` reports for this server.
    public func keyscan(type: String = "ed25519") throws -> String {
        var arguments = ["-p", String(port), "-t", type, options.listenAddress]
        var executable = "ssh-keyscan"
        if let namespace = options.networkNamespace {
            arguments = ["netns", "exec", namespace, "ssh-keyscan"] + arguments
            executable = "ip"
        }
        let result = try ProcessRunner.run(executable, arguments, timeout: 15)
        return result.stdout.split(separator: "\n").first { !$0.hasPrefix("#") }.map(String.init) ?? ""
    }

    /// The host key as ssh-keyscan reports it, without the host field: `ssh-ed25519 AAAA…`.
    public func scannedKey(type: String = "ed25519") throws -> String {
        let line = try keyscan(type: type)
        let fields = line.split(separator: " ", maxSplits: 1)
        guard fields.count == 2 else { throw FixtureError("ssh-keyscan gave no \(type) key: \(line)") }
        return String(fields[1])
    }

    // MARK: Helpers

    /// Processes below this sshd whose command name (/proc/PID/comm) is `name`, e.g. "sleep".
    public func processes(named name: String) -> [Int32] {
        guard let pid else { return [] }
        return Self.descendants(of: pid).filter {
            (try? String(contentsOfFile: "/proc/\($0)/comm", encoding: .utf8))?.trimmingCharacters(
                in: .whitespacesAndNewlines) == name
        }
    }

    static func freePort(on address: String) throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw FixtureError("could not find a free port") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    /// Every process whose parent chain leads to `pid`, found through /proc.
    public static func descendants(of pid: Int32) -> [Int32] {
        var parents: [Int32: Int32] = [:]
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let child = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let parent = Int32(fields[1]) { parents[child] = parent }
        }
        var result: [Int32] = []
        var frontier = [pid]
        while let current = frontier.popLast() {
            for (child, parent) in parents where parent == current {
                result.append(child)
                frontier.append(child)
            }
        }
        return result
    }
}
