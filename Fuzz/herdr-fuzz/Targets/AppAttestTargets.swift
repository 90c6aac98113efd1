import AppAttest
import HerdrCrypto

/// The App Attest parsers' targets: the CBOR decoder, the DER pieces (nonce extension,
/// certificate, public key, authenticator data), and whole attestations and assertions checked
/// against a root the seeds chain to, so the fuzzer gets past the chain with genuine evidence.
extension FuzzTargets {
    static let appAttest: [FuzzTarget] = [cbor, appAttestParts, appAttestAttestation, appAttestAssertion]

    /// The fuzz PKI's root (P-384, valid 2026–2126), which signed the seeds' intermediate. Made
    /// once with openssl for the seeds; its key was thrown away.
    static let fuzzRootPEM = """
        -----BEGIN CERTIFICATE-----
        MIIBzjCCAVOgAwIBAgIUT6FrSLD4iacxZYw/xDQIBWJBTvMwCgYIKoZIzj0EAwMw
        JTEjMCEGA1UEAwwaaGVyZHIgZnV6eiBBcHAgQXR0ZXN0IHJvb3QwIBcNMjYxMjAx
        MjE0MDE5WhgPMjEyNjExMDcyMTQwMTlaMCUxIzAhBgNVBAMMGmhlcmRyIGZ1enog
        QXBwIEF0dGVzdCByb290MHYwEAYHKoZIzj0CAQYFK4EEACIDYgAE5aI1y7cBcl5Q
        aEhyYjmRBa9tBrjY52JBsamtYKRZpP0Jmtr+ngh4FNmuExL2vWmVtzAJ7xmf+XIb
        gGAQlQjZlMhSvq74wnxhB+Lsf1e/4tERjHK743JxaDn8NSFn9Df1o0IwQDAPBgNV
        HRMBAf8EBTADAQH/MA4GA1UdDwEB/wQEAwIBBjAdBgNVHQ4EFgQUrnbvDUC9mpC3
        A0zqCWrFrxXzV+kwCgYIKoZIzj0EAwMDaQAwZgIxAPC7ldH2ShrkdkVV6zXNqrCB
        Q35ZaSWlqCz7q1Xoa9W52etxrl7wa7ErjcU0a9EtfwIxAPutpVxt0iyO5shlP4GG
        r4+n7cav+cIWWhX4NV8VI/jQx/uyXM9fRLjA1ekvSrTE6g==
        -----END CERTIFICATE-----
        """
    /// The seeds' device key (P-256, uncompressed point).
    static let fuzzDevicePoint = Hex.decode(
        "04b91a76dd32e6c7073ec00a5ae622a43dce0725903fcbe7a4bcc233d8b3c44e5aad7e81e8d0a2c2340426acdaba5defdc13ec591fe635aa7e93f9a079cdc129d3"
    )!
    /// The client data hash the seeds are bound to: SHA256("herdr-fuzz client data").
    static let fuzzClientDataHash = SHA256.hash(Array("herdr-fuzz client data".utf8))
    static let fuzzVerifier = AppAttestVerifier(
        policy: AppAttestPolicy(
            appID: "TESTTEAM01.org.herdr.fuzz", environment: .production, root: try! X509Certificate(pem: fuzzRootPEM)))
    /// A fixed moment inside every seed certificate's validity (2030).
    static let fuzzNow: Int64 = 1_900_000_000

    /// `CBORDecoder`: any bytes decode or are refused; decoding is the same twice, and a decoded
    /// item never holds more items than the limit.
    static let cbor = FuzzTarget("cbor", "AppAttest: the bounded CBOR decoder") { data in
        let decoder = CBORDecoder()
        let first = try? decoder.decode(data)
        FuzzCheck.expect(first == (try? decoder.decode(data)), "the same bytes decoded twice differently")
        guard let first else { return }
        func count(_ value: CBORValue) -> Int {
            switch value {
            case .array(let items): 1 + items.map(count).reduce(0, +)
            case .map(let entries): 1 + entries.map { count($0.key) + count($0.value) }.reduce(0, +)
            default: 1
            }
        }
        FuzzCheck.expect(count(first) <= decoder.maximumItems, "more items than the limit")
    }

    /// The DER and binary pieces, the first byte choosing: the nonce extension (a nonce is
    /// exactly Apple's structure around 32 bytes), a certificate (its extension read without
    /// crashing, the P-256 point it holds imports), a P-256 point (an imported key keeps it and
    /// never verifies the input as a signature), authenticator data (the counter is bytes 33–36).
    static let appAttestParts = FuzzTarget(
        "app-attest-parts", "AppAttest: nonce extension, X.509 DER, P-256 points, authenticator data"
    ) { data in
        guard let selector = data.first else { return }
        let bytes = Array(data.dropFirst())
        switch selector % 4 {
        case 0:
            if let nonce = try? AppleNonceExtension.nonce(fromExtensionValue: bytes) {
                FuzzCheck.expect(
                    bytes == [0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce, "a nonce read from another structure")
            }
        case 1:
            if let certificate = try? X509Certificate(der: bytes) {
                _ = certificate.extensionValue(oid: AppleNonceExtension.oid)
                if let point = try? certificate.p256Point() {
                    FuzzCheck.expect(
                        (try? P256PublicKey(point: point))?.point == point, "a certificate's point that does not import"
                    )
                }
                _ = certificate.sha256Fingerprint
            }
        case 2:
            if let key = try? P256PublicKey(point: bytes) {
                FuzzCheck.expect(key.point == bytes, "a key at another point")
                FuzzCheck.expect(!key.isValidSignature(bytes, forSHA256Of: bytes), "the input verified as a signature")
            }
        default:
            if let authData = try? AuthenticatorData(bytes) {
                FuzzCheck.expect(
                    authData.signCount == bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }, "the counter misread")
                if let credential = try? authData.attestedCredential() {
                    FuzzCheck.expect(credential.aaguid == Array(bytes[37..<53]), "the AAGUID misread")
                }
            }
        }
    }

    /// A whole attestation object against the fuzz root: refused, or accepted with a key whose id
    /// is SHA-256 of its point, and never accepted for another client data hash.
    static let appAttestAttestation = FuzzTarget("app-attest-attestation", "AppAttest: attestation objects") {
        data in
        guard
            let key = try? fuzzVerifier.verifyAttestation(data, clientDataHash: fuzzClientDataHash, now: fuzzNow)
        else { return }
        FuzzCheck.expect(key.keyID == SHA256.hash(key.publicKey), "a key id that is not the key's")
        FuzzCheck.expect(AttestedKey(attachment: key.attachment) == key, "the attachment does not read back")
        let other = SHA256.hash(fuzzClientDataHash)
        FuzzCheck.expect(
            (try? fuzzVerifier.verifyAttestation(data, clientDataHash: other, now: fuzzNow)) == nil,
            "accepted for another challenge")
    }

    /// An assertion by the seeds' device key: refused, or accepted with the counter its
    /// authenticator data carries, and never for another client data hash.
    static let appAttestAssertion = FuzzTarget("app-attest-assertion", "AppAttest: assertions") { data in
        guard
            let counter = try? fuzzVerifier.verifyAssertion(
                data, publicKey: fuzzDevicePoint, clientDataHash: fuzzClientDataHash)
        else { return }
        let authenticatorData = (try? CBORDecoder().decode(data))?["authenticatorData"]?.bytes ?? []
        FuzzCheck.expect(
            counter == authenticatorData[33..<37].reduce(0) { $0 << 8 | UInt32($1) }, "the counter misread")
        FuzzCheck.expect(
            (try? fuzzVerifier.verifyAssertion(
                data, publicKey: fuzzDevicePoint, clientDataHash: SHA256.hash(fuzzClientDataHash))) == nil,
            "accepted for another challenge")
    }
}
