import Foundation
import Glibc
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport
import Testing

/// `GET /status` (the PeerGate status document) names peer addresses, so the relay serves it to
/// loopback only, like `/metrics`: a "tailnet" client in a test network namespace gets 403.
@Suite(.serialized) struct StatusEndpointTests {
    static let fetch =
        "import urllib.request, urllib.error, sys\n"
        + "try:\n    r = urllib.request.urlopen(sys.argv[1], timeout=10); print(r.status, r.read().decode())\n"
        + "except urllib.error.HTTPError as e:\n    print(e.code, e.read().decode())\n"

    @Test func statusIsForLoopbackOnly() throws {
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let server = try RelayServer(options: .init(bindAddress: "0.0.0.0")) {
            RelayCore(
                configuration: RelayConfiguration(origin: "https://relay.test", attestationRequired: false),
                store: MemoryRelayStore(), clock: SystemRelayClock())
        }
        defer { server.shutdown() }
        let local = try ProcessRunner.run(
            "python3", ["-c", Self.fetch, "http://127.0.0.1:\(server.port)/status"], timeout: 20)
        #expect(local.stdout.hasPrefix("200 "), "\(local.stdout) \(local.stderr)")
        #expect(local.stdout.contains("refusedCount"))
        let remote = try namespace.run(
            "python3", ["-c", Self.fetch, "http://\(namespace.rootAddress):\(server.port)/status"], timeout: 20)
        #expect(remote.stdout.hasPrefix("403 "), "\(remote.stdout) \(remote.stderr)")
        #expect(!remote.stdout.contains("127.0.0.1"))
        // The same client may use the relay itself.
        let health = try namespace.run(
            "python3", ["-c", Self.fetch, "http://\(namespace.rootAddress):\(server.port)/healthz"], timeout: 20)
        #expect(health.stdout.hasPrefix("200 "), "\(health.stdout) \(health.stderr)")
    }
}
