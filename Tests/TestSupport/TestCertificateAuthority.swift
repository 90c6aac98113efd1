import Foundation
import Glibc

/// A throwaway certificate authority (a P-256 key and a self-signed CA certificate, valid a
/// day) made by the real `openssl` command, which issues server certificates, as an operator's
/// private relay would have. A client is told to trust `certificate` (the CA's PEM file).
public struct TestCertificateAuthority: Sendable {
    /// The CA certificate (PEM): the file a client trusts.
    public let certificate: String
    private let key: String
    private let directory: String

    public init(in directory: TemporaryDirectory, name: String = "test-ca") throws {
        self.directory = directory.path
        certificate = directory.file("\(name)-cert.pem").path
        key = directory.file("\(name)-key.pem").path
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
            "-subj", "/CN=herdr test CA \(name)", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", key, "-out", certificate,
        ])
        guard chmod(key, 0o600) == 0 else { throw FixtureError("chmod \(key): \(String(cString: strerror(errno)))") }
    }

    /// A server certificate for `hostName` (its CN and a DNS subjectAltName) and the IP
    /// addresses given, signed by this CA, with its key; files `NAME-cert.pem`, `NAME-key.pem`.
    public func issue(hostName: String, ipAddresses: [String] = [], name: String = "server") throws -> TestCertificate {
        let base = URL(fileURLWithPath: directory)
        let serverKey = base.appendingPathComponent("\(name)-key.pem").path
        let request = base.appendingPathComponent("\(name).csr").path
        let extensions = base.appendingPathComponent("\(name).ext").path
        let serverCertificate = base.appendingPathComponent("\(name)-cert.pem").path
        try Self.openssl([
            "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=\(hostName)",
            "-keyout", serverKey, "-out", request,
        ])
        guard chmod(serverKey, 0o600) == 0 else {
            throw FixtureError("chmod \(serverKey): \(String(cString: strerror(errno)))")
        }
        let alternativeNames = (["DNS:\(hostName)"] + ipAddresses.map { "IP:\($0)" }).joined(separator: ",")
        try writeText(
            """
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth
            subjectAltName=\(alternativeNames)

            """, to: URL(fileURLWithPath: extensions))
        try Self.openssl([
            "x509", "-req", "-in", request, "-CA", certificate, "-CAkey", key, "-days", "1",
            "-set_serial", "0x" + String(UInt64.random(in: 1...UInt64.max), radix: 16), "-extfile", extensions,
            "-out", serverCertificate,
        ])
        return TestCertificate(certificate: serverCertificate, key: serverKey)
    }

    private static func openssl(_ arguments: [String]) throws {
        try ProcessRunner.run(try ProcessRunner.which("openssl"), arguments, timeout: 20, check: true)
    }
}

extension TestCertificate {
    /// A certificate and key already on disk (one a `TestCertificateAuthority` issued).
    init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}
