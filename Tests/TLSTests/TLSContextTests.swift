import Foundation
import Glibc
import TLS
import TestSupport
import Testing

@Suite("TLS contexts refuse bad files with a message that names them")
struct TLSContextTests {
    @Test("a missing certificate file")
    func missingCertificate() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let path = directory.file("absent.pem").path
        let error = try refusal { try TLSContext.server(certificateChainFile: path, privateKeyFile: identity.key) }
        #expect(error.kind == .certificate)
        #expect(error.message == "TLS certificate \(path): No such file or directory")
        #expect(error.errno == ENOENT)
    }

    @Test("a certificate file that is not PEM")
    func garbageCertificate() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let path = directory.file("garbage.pem").path
        try writeText("this is not a certificate\n", to: URL(fileURLWithPath: path))
        let error = try refusal { try TLSContext.server(certificateChainFile: path, privateKeyFile: identity.key) }
        #expect(error.kind == .certificate)
        #expect(error.message.hasPrefix("TLS certificate \(path): "), "\(error)")
        #expect(error.message.contains("no start line"), "\(error)")
    }

    @Test("a missing or garbage private key file")
    func badKeyFile() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let absent = directory.file("absent-key.pem").path
        let missing = try refusal {
            try TLSContext.server(certificateChainFile: identity.certificate, privateKeyFile: absent)
        }
        #expect(missing.kind == .privateKey)
        #expect(missing.message == "TLS private key \(absent): No such file or directory")

        let garbage = directory.file("garbage-key.pem").path
        try writeText(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", to: URL(fileURLWithPath: garbage))
        let bad = try refusal {
            try TLSContext.server(certificateChainFile: identity.certificate, privateKeyFile: garbage)
        }
        #expect(bad.kind == .privateKey)
        #expect(
            bad.message.hasPrefix("TLS private key \(garbage) (for certificate \(identity.certificate)): "), "\(bad)")
    }

    @Test("a key that is not the certificate's")
    func mismatchedKey() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let identity = try TestCertificate(in: directory)
        let other = try TestCertificate(in: directory, name: "other")
        let error = try refusal {
            try TLSContext.server(certificateChainFile: identity.certificate, privateKeyFile: other.key)
        }
        #expect(error.kind == .privateKey)
        #expect(
            error.message.hasPrefix(
                "TLS private key \(other.key) does not match certificate \(identity.certificate): "), "\(error)")
        #expect(error.message.contains("key values mismatch"), "\(error)")
    }

    @Test("a missing trusted certificates file; the system trust store loads")
    func trustStore() throws {
        let directory = try TemporaryDirectory(prefix: "herdr-tls-")
        let path = directory.file("absent-ca.pem").path
        let error = try refusal { try TLSContext.client(trustedCertificatesFile: path) }
        #expect(error.kind == .trustStore)
        #expect(error.message == "TLS trusted certificates \(path): No such file or directory")
        _ = try TLSContext.client(trustedCertificatesFile: nil)
    }

    /// The error `body` throws, failing the test if it returns.
    private func refusal(_ body: () throws -> TLSContext) throws -> TLSError {
        do {
            _ = try body()
        } catch let error as TLSError {
            return error
        }
        throw FixtureError("the context was accepted")
    }
}
