import Foundation
import Glibc
import HerdrCrypto
import Synchronization

/// A throwaway App Attest PKI made by the real `openssl` command: a P-384 root and intermediate
/// (as Apple's are), and per device a P-256 key with a credential certificate carrying the nonce
/// extension, so tests build attestation objects and assertions the way a phone's do.
public final class AppAttestFixture: @unchecked Sendable {
    /// The app id the fixture's evidence is for.
    public static let appID = "TESTTEAM01.org.herdr.attest-test"

    public let directory: TemporaryDirectory
    /// The root's PEM, the trust anchor a relay under test is given.
    public let rootPEM: String
    /// The intermediate's DER, the second entry of `x5c`.
    public let intermediateDER: [UInt8]
    private let openssl: String
    private var serial = 100

    /// A key made on a "phone": its private key file, public point and key id.
    public struct Device: Sendable {
        public let keyFile: String
        /// The uncompressed P-256 point.
        public let publicKey: [UInt8]
        /// SHA-256 of the point.
        public var keyID: [UInt8] { SHA256.hash(publicKey) }
    }

    /// What an attestation object says; each field can be set wrong for a refusal test.
    public struct Attestation: Sendable {
        public var format = "apple-appattest"
        public var appID = AppAttestFixture.appID
        public var signCount: UInt32 = 0
        /// "appattest" padded with zeros (production) or "appattestdevelop".
        public var aaguid = Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        /// Nil: the device's key id.
        public var credentialID: [UInt8]?
        /// Nil: SHA256(authData ‖ clientDataHash), the right one.
        public var nonce: [UInt8]?
        /// Days the credential certificate is valid from now.
        public var validDays = 1
        /// Signed by a fresh intermediate the root never signed instead of the fixture's.
        public var untrustedIntermediate = false
        /// Nil: the device's key in the certificate.
        public var certificateKey: Device?

        public init() {}
    }

    public init() throws {
        directory = try TemporaryDirectory(prefix: "herdr-appattest-")
        Self.removeAtExit(directory.path)
        openssl = try ProcessRunner.which("openssl")
        let root = directory.file("root").path
        let intermediate = directory.file("intermediate").path
        try Self.makeAuthority(
            openssl, at: root, subject: "/CN=Test App Attestation Root CA/O=herdr tests", issuer: nil)
        try Self.makeAuthority(
            openssl, at: intermediate, subject: "/CN=Test App Attestation CA 1/O=herdr tests", issuer: root)
        rootPEM = try String(contentsOfFile: root + ".pem", encoding: .utf8)
        intermediateDER = try Self.der(openssl, ofCertificate: intermediate + ".pem")
    }

    /// A new P-256 key, as DCAppAttestService.generateKey makes one.
    public func makeDevice() throws -> Device {
        serial += 1
        let keyFile = directory.file("device-\(serial).key").path
        try run(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", keyFile])
        let info = try run(["ec", "-in", keyFile, "-pubout", "-outform", "DER"]).stdoutBytes
        // A P-256 SubjectPublicKeyInfo ends with the 65-byte uncompressed point.
        return Device(keyFile: keyFile, publicKey: Array(info.suffix(65)))
    }

    /// The authenticator data an attestation carries.
    public func authenticatorData(for device: Device, _ attestation: Attestation) -> [UInt8] {
        let credential = attestation.credentialID ?? device.keyID
        return SHA256.hash(Array(attestation.appID.utf8)) + [0x40] + Self.bigEndian(attestation.signCount)
            + attestation.aaguid + [UInt8(credential.count >> 8), UInt8(credential.count & 0xFF)] + credential
    }

    /// An attestation object (CBOR `{fmt, attStmt: {x5c, receipt}, authData}`) for `device` over
    /// `clientDataHash`.
    public func attestationObject(
        for device: Device, clientDataHash: [UInt8], _ attestation: Attestation = Attestation()
    ) throws -> [UInt8] {
        let authData = authenticatorData(for: device, attestation)
        let nonce = attestation.nonce ?? SHA256.hash(authData + clientDataHash)
        var issuer = directory.file("intermediate").path
        var chainTail = intermediateDER
        if attestation.untrustedIntermediate {
            serial += 1
            let stranger = directory.file("stranger-\(serial)").path
            try Self.makeAuthority(
                openssl, at: stranger, subject: "/CN=Test App Attestation CA 1/O=herdr tests", issuer: nil)
            issuer = stranger
            chainTail = try Self.der(openssl, ofCertificate: stranger + ".pem")
        }
        let leaf = try credentialCertificate(
            key: (attestation.certificateKey ?? device).keyFile, nonce: nonce, issuer: issuer,
            days: attestation.validDays)
        return CBOREncoder.map([
            ("fmt", .text(attestation.format)),
            (
                "attStmt",
                .map([("x5c", .array([.bytes(leaf), .bytes(chainTail)])), ("receipt", .bytes([0x30, 0x00]))])
            ),
            ("authData", .bytes(authData)),
        ])
    }

    /// An assertion (CBOR `{signature, authenticatorData}`) by `device` over `clientDataHash`:
    /// ECDSA-SHA256 over nonce = SHA256(authenticatorData ‖ clientDataHash), as the phone signs.
    public func assertion(
        by device: Device, clientDataHash: [UInt8], counter: UInt32, appID: String = AppAttestFixture.appID
    ) throws -> [UInt8] {
        let authenticatorData = SHA256.hash(Array(appID.utf8)) + [0x00] + Self.bigEndian(counter)
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        serial += 1
        let input = directory.file("nonce-\(serial)").path
        try Data(nonce).write(to: URL(fileURLWithPath: input))
        let signature = try run(["dgst", "-sha256", "-sign", device.keyFile, input]).stdoutBytes
        return CBOREncoder.map([("signature", .bytes(signature)), ("authenticatorData", .bytes(authenticatorData))])
    }

    /// Fixtures mostly live as globals for the whole test process, so their deinit never runs:
    /// their directories go when the process exits.
    private static let directoriesToRemove = Mutex<[String]?>(nil)

    private static func removeAtExit(_ path: String) {
        directoriesToRemove.withLock { paths in
            if paths == nil {
                atexit {
                    AppAttestFixture.directoriesToRemove.withLock { paths in
                        for path in paths ?? [] { try? FileManager.default.removeItem(atPath: path) }
                    }
                }
            }
            paths = (paths ?? []) + [path]
        }
    }

    // MARK: - openssl

    private func credentialCertificate(key: String, nonce: [UInt8], issuer: String, days: Int) throws -> [UInt8] {
        serial += 1
        let base = directory.file("credential-\(serial)").path
        // SEQUENCE { [1] { OCTET STRING nonce } }, as Apple encodes it.
        let value = "3024a1220420" + nonce.map { String(format: "%02x", $0) }.joined()
        try "[credential]\nkeyUsage = critical, digitalSignature\n1.2.840.113635.100.8.2 = DER:\(value)\n".write(
            toFile: base + ".cnf", atomically: true, encoding: .utf8)
        try run(["req", "-new", "-key", key, "-subj", "/CN=credential-\(serial)", "-out", base + ".csr"])
        try run([
            "x509", "-req", "-in", base + ".csr", "-CA", issuer + ".pem", "-CAkey", issuer + ".key", "-set_serial",
            "\(serial)", "-days", "\(days)", "-sha256", "-extfile", base + ".cnf", "-extensions", "credential",
            "-outform", "DER", "-out", base + ".der",
        ])
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: base + ".der")))
    }

    /// A P-384 CA certificate at `base`.pem with its key at `base`.key, self-signed without an issuer.
    private static func makeAuthority(_ openssl: String, at base: String, subject: String, issuer: String?) throws {
        try ProcessRunner.run(
            openssl, ["ecparam", "-name", "secp384r1", "-genkey", "-noout", "-out", base + ".key"], timeout: 20,
            check: true)
        // The root's file also serves `req` as its configuration, so nothing of the system's is added.
        try
            "[req]\ndistinguished_name = dn\nx509_extensions = ca\n[dn]\n[ca]\nbasicConstraints = critical, CA:true\nkeyUsage = critical, keyCertSign, cRLSign\nsubjectKeyIdentifier = hash\n"
            .write(toFile: base + ".cnf", atomically: true, encoding: .utf8)
        if let issuer {
            try ProcessRunner.run(
                openssl, ["req", "-new", "-key", base + ".key", "-subj", subject, "-out", base + ".csr"], timeout: 20,
                check: true)
            try ProcessRunner.run(
                openssl,
                [
                    "x509", "-req", "-in", base + ".csr", "-CA", issuer + ".pem", "-CAkey", issuer + ".key",
                    "-set_serial", "2", "-days", "3650", "-sha384", "-extfile", base + ".cnf", "-extensions", "ca",
                    "-out", base + ".pem",
                ], timeout: 20, check: true)
        } else {
            try ProcessRunner.run(
                openssl,
                [
                    "req", "-x509", "-new", "-key", base + ".key", "-subj", subject, "-days", "3650", "-sha384",
                    "-config", base + ".cnf", "-out", base + ".pem",
                ], timeout: 20, check: true)
        }
    }

    private static func der(_ openssl: String, ofCertificate pem: String) throws -> [UInt8] {
        try ProcessRunner.run(openssl, ["x509", "-in", pem, "-outform", "DER"], timeout: 20, check: true).stdoutBytes
    }

    @discardableResult
    private func run(_ arguments: [String]) throws -> ProcessResult {
        try ProcessRunner.run(openssl, arguments, timeout: 20, check: true)
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}

/// Just enough of a CBOR encoder (RFC 8949, definite lengths) to build App Attest objects in tests.
public enum CBOREncoder {
    public indirect enum Item: Sendable {
        case unsigned(UInt64)
        case bytes([UInt8])
        case text(String)
        case array([Item])
        case map([(String, Item)])
    }

    /// A map with text keys, in the order given.
    public static func map(_ entries: [(String, Item)]) -> [UInt8] { encode(.map(entries)) }

    public static func encode(_ item: Item) -> [UInt8] {
        switch item {
        case .unsigned(let value): head(0, value)
        case .bytes(let bytes): head(2, UInt64(bytes.count)) + bytes
        case .text(let text): head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let items): head(4, UInt64(items.count)) + items.flatMap(encode)
        case .map(let entries):
            head(5, UInt64(entries.count)) + entries.flatMap { encode(.text($0.0)) + encode($0.1) }
        }
    }

    /// A head with the shortest argument encoding.
    public static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let type = major << 5
        switch value {
        case 0..<24: return [type | UInt8(value)]
        case 24..<256: return [type | 24, UInt8(value)]
        case 256..<65_536: return [type | 25, UInt8(value >> 8), UInt8(value & 0xFF)]
        case 65_536..<(1 << 32): return [type | 26] + AppAttestFixture.bigEndian(UInt32(value))
        default: return [type | 27] + (0..<8).reversed().map { UInt8(value >> (8 * UInt64($0)) & 0xFF) }
        }
    }
}
