import Foundation

extension EmulatedNetwork {
    /// Starts `herdr-relay serve` inside a link's namespace, listening on the link's IPv6
    /// address (or IPv4 with `ipv4: true`) at `port`, with TLS from `certificate` when given
    /// (one a `TestCertificateAuthority` issued for the link's host name), and `arguments`
    /// after those. The origin clients must use is `https://HOSTNAME:PORT`.
    public func startRelay(
        on linkName: String, port: UInt16, certificate: TestCertificate?, ipv4: Bool = false,
        arguments: [String] = [], environment: [String: String] = [:]
    ) throws -> RelayProcess {
        let link = try link(linkName)
        let address: String
        if ipv4 {
            guard let ipv4Address = link.ipv4 else { throw FixtureError("link \(linkName) has no IPv4 address") }
            address = ipv4Address
        } else {
            address = "[\(link.ipv6)]"
        }
        var all = ["--listen", "\(address):\(port)"]
        if let certificate { all += ["--tls-cert", certificate.certificate, "--tls-key", certificate.key] }
        all += arguments
        let wanted = all
        // Made on the namespace's thread and handed back once, never shared.
        final class Started: @unchecked Sendable {
            let relay: RelayProcess
            init(_ relay: RelayProcess) { self.relay = relay }
        }
        return try NamespaceThread.run(in: link.namespace) {
            Started(try RelayProcess(wanted, environment: environment))
        }.relay
    }
}
