import Foundation
import TestSupport
import Testing

/// What the repository ships for operators (contrib/) works as shipped: the env file example
/// starts the real relay, and the systemd unit passes systemd's own checks.
@Suite(.serialized) struct ContribFilesTests {
    /// contrib/, found from this source file (the checkout the tests were built from).
    static let contrib = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("contrib")

    /// `NAME=value` lines of an env file; with `commented`, also the `# NAME=value` ones.
    static func variables(_ text: String, commented: Bool) -> [(String, String)] {
        text.split(separator: "\n").compactMap { line in
            var entry = line.trimmingCharacters(in: .whitespaces)
            if commented && entry.hasPrefix("# ") { entry.removeFirst(2) }
            guard !entry.hasPrefix("#"), let equals = entry.firstIndex(of: "="),
                entry[..<equals].allSatisfy({ $0.isUppercase || $0 == "_" })
            else { return nil }
            return (String(entry[..<equals]), String(entry[entry.index(after: equals)...]))
        }
    }

    @Test func theEnvFileExampleRunsTheRelay() throws {
        let text = try String(
            contentsOf: Self.contrib.appendingPathComponent("herdr-relay.env.example"), encoding: .utf8)
        let directory = try TemporaryDirectory()
        var environment: [String: String] = [:]
        for (name, value) in Self.variables(text, commented: false) { environment[name] = value }
        #expect(environment["RELAY_ORIGIN"] != nil && environment["ATTEST_REQUIRED"] == "false")
        // Only where it listens and keeps its state differ from a real installation.
        environment["RELAY_PORT"] = "0"
        environment["RELAY_DB"] = directory.appending("relay.sqlite").path
        let relay = try RelayProcess([], environment: environment)
        #expect(relay.terminate() == 0)
        #expect(relay.stderrText().contains("X-Forwarded-For"), "RELAY_TRUST_PROXY=true was read")
    }

    /// Every number the example shows as a default, uncommented, is one the relay accepts.
    @Test func theExamplesCommentedDefaultsAreAccepted() throws {
        let text = try String(
            contentsOf: Self.contrib.appendingPathComponent("herdr-relay.env.example"), encoding: .utf8)
        let directory = try TemporaryDirectory()
        var environment: [String: String] = [:]
        for (name, value) in Self.variables(text, commented: true) where Int(value) != nil { environment[name] = value }
        #expect(environment.count >= 10, "\(environment)")
        environment["RELAY_ORIGIN"] = "https://relay.example.com"
        environment["RELAY_PORT"] = "0"
        environment["RELAY_DB"] = directory.appending("relay.sqlite").path
        let relay = try RelayProcess([], environment: environment)
        #expect(relay.terminate() == 0)
    }

    /// `systemd-analyze verify` on the unit, pointed at the built binary: no error, no warning.
    @Test func theSystemdUnitVerifies() throws {
        let unit = try String(contentsOf: Self.contrib.appendingPathComponent("herdr-relay.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/herdr-relay serve"))
        #expect(unit.contains("EnvironmentFile=/etc/herdr-relay.env"))
        let directory = try TemporaryDirectory()
        let copy = directory.appending("herdr-relay.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/herdr-relay", with: RelayProcess.executable)
            .write(to: copy, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(
            "/usr/bin/systemd-analyze", ["verify", copy.path], currentDirectory: directory.url, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty && result.stdout.isEmpty, "\(result.stdout)\(result.stderr)")
    }

    /// The agent's user unit verifies too, pointed at the built herdr-host.
    @Test func theHostAgentsUserUnitVerifies() throws {
        let unit = try String(contentsOf: Self.contrib.appendingPathComponent("herdr-host.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/local/bin/herdr-host run"))
        #expect(unit.contains("WantedBy=default.target"))
        let directory = try TemporaryDirectory()
        let copy = directory.appending("herdr-host.service")
        try unit.replacingOccurrences(of: "/usr/local/bin/herdr-host", with: BuiltProgram.path("herdr-host"))
            .write(to: copy, atomically: true, encoding: .utf8)
        let result = try ProcessRunner.run(
            "/usr/bin/systemd-analyze", ["verify", copy.path], currentDirectory: directory.url, timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty && result.stdout.isEmpty, "\(result.stdout)\(result.stderr)")
    }
}
