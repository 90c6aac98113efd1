import Foundation
import TestSupport
import Testing

/// Runs the built `herdr-remote` program with its own config directory.
struct CLIHarness {
    let config: TemporaryDirectory

    init() throws {
        config = try TemporaryDirectory(prefix: "herdr-cli-")
    }

    /// The herdr-remote binary built beside this test bundle.
    static var executable: String {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("herdr-remote").path
    }

    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = config.path
        // A developer's own agent must not log the tests in; tests that want one set it.
        environment["SSH_AUTH_SOCK"] = nil
        return environment
    }

    var directory: URL { config.url.appendingPathComponent("herdr-remote") }

    @discardableResult
    func run(_ arguments: [String], input: String = "", timeout: Double = 60, setting extra: [String: String] = [:])
        throws -> ProcessResult
    {
        try ProcessRunner.run(
            Self.executable, arguments, environment: environment.merging(extra) { $1 }, input: Array(input.utf8),
            timeout: timeout)
    }

    /// Saves a host pointing at `server` and authorizes this config's device key there.
    func addHost(_ name: String, server: SSHServer, authorize: Bool = true, extra: [String] = []) throws {
        if authorize {
            let key = try run(["key"])
            try server.authorize(key.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let result = try run(
            ["add", name, "--host", server.host, "--port", String(server.port), "--user", server.user.name] + extra)
        guard result.status == 0 else { throw FixtureError("add failed: \(result.stderr)") }
    }
}

extension CLIHarness {
    /// Pins `server`'s host key for this config, as a first `connect` that was trusted does.
    func pin(_ server: SSHServer) throws {
        try pin(port: server.port, key: try server.scannedKey())
    }

    /// Pins `key` (`ssh-ed25519 AAAA…`) for 127.0.0.1:`port`.
    func pin(port: Int, key: String) throws {
        let knownHosts = directory.appendingPathComponent("known_hosts")
        let existing = FileManager.default.fileExists(atPath: knownHosts.path) ? try readText(knownHosts) : ""
        try writeText(existing + "[127.0.0.1]:\(port) \(key)\n", to: knownHosts)
    }

    /// Saves, authorizes and pins `server` as `name`.
    func addPinnedHost(_ name: String, server: SSHServer, extra: [String] = []) throws {
        try addHost(name, server: server, extra: extra)
        try pin(server)
    }
}

/// A TCP port on 127.0.0.1 that accepts connections and never says a word: an SSH server that
/// hangs after the TCP handshake (the kernel completes it from the listen backlog).
final class SilentListener {
    let port: Int
    private let fd: Int32

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 16) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else {
            close(fd)
            throw FixtureError("cannot listen on 127.0.0.1")
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { close(fd) }
}
