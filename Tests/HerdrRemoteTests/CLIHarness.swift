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
