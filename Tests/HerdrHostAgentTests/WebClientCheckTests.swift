import Foundation
import Glibc
import TestSupport
import Testing

/// `herdr-host pair --web` compares the web client the relay serves with the copy installed on
/// the computer (`HERDR_WEB_ROOT` here), file by file, before it shows the code: the same files
/// are said with the manifest SHA-256 the relay logs; a changed file is a warning naming it.
@Suite(.serialized) struct WebClientCheckTests {
    /// Starts `herdr-host pair --web` against `road` with the installed copy at `installed`, and
    /// returns what it said before showing the code (stdout, stderr), then stops it.
    static func pairSays(_ road: RelayRoadFixture, installed: String) throws -> (String, String) {
        var environment = road.hostEnvironment
        environment["HERDR_WEB_ROOT"] = installed
        let host = try InteractiveProcess(
            BuiltProgram.path("herdr-host"), ["pair", "--relay", road.origin, "--name", "studio", "--web"],
            environment: environment)
        defer {
            host.signal(SIGTERM)
            _ = host.wait(timeout: 10)
        }
        guard host.waitFor("waiting for a device") else {
            throw FixtureError("herdr-host pair did not show its code: \(host.stdout) \(host.stderr)")
        }
        return (host.stdout, host.stderr)
    }

    /// A copy of this checkout's web client.
    static func copyOfTheWebClient() throws -> TemporaryDirectory {
        let directory = try TemporaryDirectory(prefix: "web-copy-")
        try ProcessRunner.run(
            "/bin/cp", ["-r", PhoneBrowserTests.webRoot + "/.", directory.url.path], timeout: 30, check: true)
        return directory
    }

    @Test func theSameFilesAreSaidWithTheirManifestHash() throws {
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", PhoneBrowserTests.webRoot])
        let log = road.relay.stderrText()
        let marker = try #require(log.range(of: ", manifest sha256 "), "\(log)")
        let manifest = String(log[marker.upperBound...].prefix(64))
        let (stdout, stderr) = try Self.pairSays(road, installed: PhoneBrowserTests.webRoot)
        #expect(stdout.contains("Web client: \(road.origin)/ serves the "), "\(stdout) \(stderr)")
        #expect(stdout.contains("files installed here, as they are (manifest sha256 \(manifest))."), "\(stdout)")
        #expect(!stderr.contains("warning"), "\(stderr)")
    }

    @Test func aChangedFileIsAWarningNamingIt() throws {
        let served = try Self.copyOfTheWebClient()
        try Data("body { display: none }\n".utf8).write(to: served.appending("app.css"))
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", served.url.path])
        let (stdout, stderr) = try Self.pairSays(road, installed: PhoneBrowserTests.webRoot)
        #expect(
            stderr.contains("warning: \(road.origin)/ does not serve the web client installed here"), "\(stderr)")
        #expect(stderr.contains("serves app.css with sha256 "), "\(stderr)")
        #expect(!stdout.contains("as they are"), "\(stdout)")
        // A file the server lacks is said so.
        let missing = try Self.copyOfTheWebClient()
        try FileManager.default.removeItem(at: missing.appending("js/x25519.js"))
        let second = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", missing.url.path])
        #expect(try Self.pairSays(second, installed: PhoneBrowserTests.webRoot).1.contains("js/x25519.js answered 404"))
    }

    @Test func withNothingInstalledItSaysSoAndPairs() throws {
        let road = try RelayRoadFixture(relayArguments: ["--web-client", "--web-root", PhoneBrowserTests.webRoot])
        let (stdout, _) = try Self.pairSays(road, installed: "/nonexistent/web")
        #expect(
            stdout.contains(
                "Web client: not compared with this computer's copy: no web client installed here to compare it with"),
            "\(stdout)")
    }
}
