import Foundation
import Glibc

/// A real `redis-server` of the test's own, on a Unix socket in a private directory (and on a
/// loopback TCP port when asked), stopped with the object. It can be killed and started again on
/// the same socket and data, to test a store riding out a Redis outage.
public final class RedisServer {
    public let directory: TemporaryDirectory
    public let appendOnly: Bool
    /// The `requirepass` the server demands, if any.
    public let password: String?
    /// The loopback TCP port, when the server listens on one.
    public let tcpPort: Int?
    private var process: ChildProcess?

    public var socketPath: String { directory.file("redis.sock").path }
    /// The store URL for this server's socket (`database` 0 unless given).
    public func url(database: Int = 0) -> String { "unix://\(socketPath)?db=\(database)" }

    /// Starts the server and waits until it answers PING. `appendOnly` turns on the AOF with an
    /// fsync on every write, so a kill loses nothing it acknowledged.
    public init(appendOnly: Bool = false, tcp: Bool = false, password: String? = nil) throws {
        directory = try TemporaryDirectory(prefix: "herdr-redis-")
        self.appendOnly = appendOnly
        self.password = password
        tcpPort = tcp ? try SSHServer.freePort(on: "127.0.0.1") : nil
        try start()
    }

    deinit {
        stop()
        directory.remove()
    }

    public var pid: pid_t? { process?.isRunning == true ? process?.pid : nil }

    /// Starts (again) on the same socket, port and data directory.
    public func start() throws {
        guard process?.isRunning != true else { return }
        var arguments = [
            "--port", String(tcpPort ?? 0), "--bind", "127.0.0.1", "--unixsocket", socketPath,
            "--unixsocketperm", "700", "--dir", directory.path, "--save", "", "--daemonize", "no",
            "--logfile", directory.file("redis.log").path,
        ]
        if let password { arguments += ["--requirepass", password] }
        arguments += appendOnly ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]
        process = try ChildProcess("redis-server", arguments)
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if process?.isRunning != true { break }
            if Self.ping(socketPath, password: password) { return }
            usleep(10_000)
        }
        let log = (try? String(contentsOf: directory.file("redis.log"), encoding: .utf8)) ?? ""
        stop()
        throw FixtureError("redis-server did not start: \(log.suffix(2000))")
    }

    /// SIGKILL (`graceful` false) or SIGTERM, and the exit.
    public func stop(graceful: Bool = false) {
        guard let process else { return }
        process.signal(graceful ? SIGTERM : SIGKILL)
        process.wait()
        self.process = nil
        unlink(socketPath)
    }

    /// True when a server on `path` answers `PING` with `+PONG` (not `-LOADING`).
    static func ping(_ path: String, password: String?) -> Bool {
        let request = Array(((password.map { "AUTH \($0)\r\n" } ?? "") + "PING\r\n").utf8)
        // At most two replies (AUTH's and PING's); an error reply ends it too.
        let reply = UnixSocketClient.exchange(path, request) { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            return text.contains("+PONG") || text.contains("-")
        }
        return reply.map { String(decoding: $0, as: UTF8.self).contains("+PONG") } ?? false
    }
}
