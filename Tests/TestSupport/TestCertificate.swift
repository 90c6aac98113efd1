import Foundation

/// A throwaway self-signed certificate (CN and subjectAltName `commonName` and 127.0.0.1) and its
/// P-256 key, made by the real `openssl` command in `directory`.
public struct TestCertificate: Sendable {
    public let certificate: String
    public let key: String

    public init(in directory: TemporaryDirectory, name: String = "server", commonName: String = "localhost") throws {
        certificate = directory.file("\(name)-cert.pem").path
        key = directory.file("\(name)-key.pem").path
        try ProcessRunner.run(
            try ProcessRunner.which("openssl"),
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "1",
                "-subj", "/CN=\(commonName)", "-addext", "subjectAltName=DNS:\(commonName),IP:127.0.0.1",
                "-keyout", key, "-out", certificate,
            ], timeout: 20, check: true)
    }
}
