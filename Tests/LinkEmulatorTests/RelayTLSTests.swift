import Foundation
import TestSupport
import Testing

/// herdr-relay with TLS from a throwaway CA, in an emulated namespace, reached by name from
/// another: as an operator's private relay would be.
@Suite(.serialized) struct RelayTLSTests {
    @Test func aRelayWithATestCAsCertificateIsReachedByNameWhenTheCAIsTrusted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let authority = try TestCertificateAuthority(in: directory)
        let certificate = try authority.issue(hostName: "relay.test")
        let network = try EmulatedNetwork([
            .init("device", links: [.init("wifi")]),
            .init("relay", links: [.init("relay", hostNames: ["relay.test"])]),
        ])
        defer { network.remove() }
        let origin = "https://relay.test:8443"
        let relay = try network.startRelay(
            on: "relay", port: 8443, certificate: certificate, arguments: ["--origin", origin, "--db", ":memory:"],
            environment: ["ATTEST_REQUIRED": "false"])
        #expect(relay.port == 8443)

        let trusted = try network.run(
            in: "device", RelayProcess.executable, ["probe", origin, "--ca-file", authority.certificate], timeout: 60)
        #expect(trusted.status == 0, "\(trusted.stdout)\(trusted.stderr)")
        #expect(trusted.stdout.contains("ok"))

        // OpenSSL's default trust store, which herdr-remote and herdr-host use, takes SSL_CERT_FILE.
        var environment = ProcessInfo.processInfo.environment
        environment["SSL_CERT_FILE"] = authority.certificate
        let throughEnvironment = try network.run(
            in: "device", RelayProcess.executable, ["probe", origin], environment: environment, timeout: 60)
        #expect(throughEnvironment.status == 0, "\(throughEnvironment.stdout)\(throughEnvironment.stderr)")

        environment.removeValue(forKey: "SSL_CERT_FILE")
        let untrusted = try network.run(
            in: "device", RelayProcess.executable, ["probe", origin], environment: environment, timeout: 60)
        #expect(untrusted.status != 0)
        #expect((untrusted.stdout + untrusted.stderr).lowercased().contains("certificate"), "\(untrusted.stdout)")
    }
}
