import Foundation
import Glibc
import TestSupport
import Testing

/// A device that cannot reach the relay at all says why and when it tries again, and stops
/// cleanly when told: no silent hang (a name that does not resolve, a port nobody listens on).
@Suite struct UnreachableRoadTests {
    /// A well-formed code for a computer behind `relay`.
    static func code(relay: String) -> String {
        let escaped = relay.replacingOccurrences(of: "/", with: "%2F")
        return "herdr://companion?v=1&proto=Noise_XK_25519_ChaChaPoly_BLAKE2s"
            + "&rs=\(String(repeating: "A", count: 43))&pid=\(String(repeating: "Q", count: 21))A"
            + "&relay=\(escaped)&n=studio"
    }

    @Test(arguments: [
        ("https://no-such-relay.invalid", "cannot resolve no-such-relay.invalid"),
        ("http://127.0.0.1:1", "Connection refused"),
    ])
    func pairingSaysWhyTheRelayCannotBeReachedAndRetriesVisibly(relay: String, why: String) throws {
        let directory = try TemporaryDirectory(prefix: "unreachable-pair-")
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.file("config").path
        let device = try InteractiveProcess(
            BuiltProgram.path("herdr-remote"), ["pair", Self.code(relay: relay), "--yes", "--name", "phone"],
            environment: environment)
        // Twice: the second attempt shows the retry goes on, with its backoff.
        #expect(
            device.waitFor(timeout: 30) { _, stderr in
                stderr.components(separatedBy: "Cannot reach").count > 2
            }, "\(device.stderr)")
        #expect(device.stderr.contains(why), "\(device.stderr)")
        #expect(device.stderr.contains("retrying in 1 s"), "\(device.stderr)")
        device.signal(SIGINT)
        #expect(device.wait(timeout: 30) == 130, "\(device.stderr)")
        #expect(device.stderr.contains("nothing was kept"), "\(device.stderr)")
        let hosts = directory.file("config/herdr-remote/hosts.json")
        let saved = (try? String(contentsOf: hosts, encoding: .utf8)) ?? ""
        #expect(!saved.contains("studio"), "nothing was saved: \(saved)")
    }
}
