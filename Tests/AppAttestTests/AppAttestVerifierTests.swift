import AppAttest
import Foundation
import HerdrCrypto
import TestSupport
import Testing

/// The fixture's PKI is made once: its root and intermediate take openssl a moment.
let fixture: AppAttestFixture = try! AppAttestFixture()

/// Apple's procedure, step by step: evidence built by a throwaway PKI (openssl) passes, and each
/// check, broken alone, refuses it with its own reason.
@Suite struct AppAttestVerifierTests {
    let clientDataHash = SHA256.hash(Array("a challenge and an origin".utf8))
    /// Read after the fixture's certificates were made, so they are already valid.
    var now: Int64 { Int64(Date().timeIntervalSince1970) }

    func verifier(_ environment: AppAttestPolicy.Environment = .production, appID: String = AppAttestFixture.appID)
        throws -> AppAttestVerifier
    {
        AppAttestVerifier(
            policy: AppAttestPolicy(
                appID: appID, environment: environment, root: try X509Certificate(pem: fixture.rootPEM)))
    }

    /// The reason `attestation` is refused for, or nil when it is accepted.
    func refusal(
        _ attestation: AppAttestFixture.Attestation, environment: AppAttestPolicy.Environment = .production,
        at time: Int64? = nil, clientDataHash presented: [UInt8]? = nil
    ) throws -> String? {
        let device = try fixture.makeDevice()
        let object = try fixture.attestationObject(for: device, clientDataHash: clientDataHash, attestation)
        let verifier = try verifier(environment)
        do throws(AppAttestFailure) {
            let key = try verifier.verifyAttestation(
                object, clientDataHash: presented ?? clientDataHash, now: time ?? now)
            #expect(key == AttestedKey(keyID: device.keyID, publicKey: device.publicKey))
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aGenuineAttestationGivesTheKeyAndItsID() throws {
        let device = try fixture.makeDevice()
        let object = try fixture.attestationObject(for: device, clientDataHash: clientDataHash)
        let key = try verifier().verifyAttestation(object, clientDataHash: clientDataHash, now: now)
        #expect(key.keyID == SHA256.hash(device.publicKey))
        #expect(key.publicKey == device.publicKey)
        #expect(AttestedKey(attachment: key.attachment) == key)
        #expect(AttestedKey(attachment: []) == nil)
    }

    @Test func theWrongFormatIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.format = "packed"
        #expect(try refusal(attestation)?.contains("unexpected attestation format \"packed\"") == true)
    }

    @Test func aChainToAnotherRootIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.untrustedIntermediate = true
        let reason = try #require(try refusal(attestation))
        #expect(reason.hasPrefix("certificate chain: "), "\(reason)")
    }

    @Test func anExpiredOrNotYetValidCredentialCertificateIsRefused() throws {
        let expired = try #require(try refusal(AppAttestFixture.Attestation(), at: now + 3 * 86_400))
        #expect(expired == "certificate chain: certificate has expired (the credential certificate)")
        // A day early every certificate of the chain is not yet valid; OpenSSL names the root first.
        let early = try #require(try refusal(AppAttestFixture.Attestation(), at: now - 86_400))
        #expect(early == "certificate chain: certificate is not yet valid (the root)")
    }

    @Test func aNonceForOtherDataIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.nonce = SHA256.hash(Array("something else".utf8))
        #expect(try refusal(attestation)?.hasPrefix("nonce mismatch") == true)
        // The right nonce for another challenge: the relay computes the hash from its own challenge.
        let other = SHA256.hash(Array("another challenge".utf8))
        #expect(try refusal(AppAttestFixture.Attestation(), clientDataHash: other)?.hasPrefix("nonce mismatch") == true)
    }

    @Test func aCredentialIDThatIsNotTheKeyIDIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.credentialID = SHA256.hash(Array("another key".utf8))
        #expect(try refusal(attestation) == "credentialId does not match keyId")
        // The certificate carries another key than the one authData names.
        var swapped = AppAttestFixture.Attestation()
        swapped.certificateKey = try fixture.makeDevice()
        #expect(try refusal(swapped) == "credentialId does not match keyId")
    }

    @Test func anotherAppsKeyIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.appID = "TESTTEAM01.org.herdr.another-app"
        #expect(try refusal(attestation)?.hasPrefix("rpIdHash (app id) mismatch") == true)
    }

    @Test func aKeyThatSignedBeforeIsRefused() throws {
        var attestation = AppAttestFixture.Attestation()
        attestation.signCount = 1
        #expect(try refusal(attestation) == "the sign counter is 1, not 0")
    }

    @Test func theEnvironmentMustBeTheOneTheRelayAccepts() throws {
        var development = AppAttestFixture.Attestation()
        development.aaguid = Array("appattestdevelop".utf8)
        #expect(
            try refusal(development)
                == "AAGUID/environment mismatch: the key was made in the development environment, this relay accepts production"
        )
        #expect(try refusal(development, environment: .development) == nil)
        #expect(
            try refusal(AppAttestFixture.Attestation(), environment: .development)
                == "AAGUID/environment mismatch: the key was made in the production environment, this relay accepts development"
        )
        var unknown = AppAttestFixture.Attestation()
        unknown.aaguid = [UInt8](repeating: 0, count: 16)
        #expect(try refusal(unknown)?.contains("no App Attest environment") == true)
    }

    @Test func malformedObjectsAreRefusedWithTheirReason() throws {
        let verifier = try verifier()
        func reason(_ object: [UInt8]) -> String? {
            do {
                _ = try verifier.verifyAttestation(object, clientDataHash: clientDataHash, now: now)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(reason([])?.hasPrefix("malformed attestation CBOR") == true)
        #expect(
            reason(CBOREncoder.map([("fmt", .text("apple-appattest"))]))
                == "bad attestation shape: no authData bytes or no attStmt")
        #expect(
            reason(
                CBOREncoder.map([
                    ("fmt", .text("apple-appattest")),
                    ("attStmt", .map([("x5c", .array([.bytes(fixture.intermediateDER)]))])),
                    ("authData", .bytes([UInt8](repeating: 0, count: 37))),
                ])) == "missing or malformed certificate chain (x5c)")
        #expect(
            reason(
                CBOREncoder.map([
                    ("fmt", .text("apple-appattest")),
                    ("attStmt", .map([("x5c", .array([.bytes([0x30, 0x00]), .bytes(fixture.intermediateDER)]))])),
                    ("authData", .bytes([UInt8](repeating: 0, count: 37))),
                ])) == "a certificate is not DER X.509")
    }

    // MARK: - Assertions

    func assertionRefusal(_ assertion: [UInt8], key: [UInt8], clientDataHash presented: [UInt8]? = nil) throws
        -> String?
    {
        let verifier = try verifier()
        do throws(AppAttestFailure) {
            _ = try verifier.verifyAssertion(assertion, publicKey: key, clientDataHash: presented ?? clientDataHash)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func anAssertionGivesItsCounter() throws {
        let device = try fixture.makeDevice()
        let assertion = try fixture.assertion(by: device, clientDataHash: clientDataHash, counter: 7)
        #expect(
            try verifier().verifyAssertion(assertion, publicKey: device.publicKey, clientDataHash: clientDataHash) == 7)
    }

    @Test func anAssertionByAnotherKeyOrOverAnotherChallengeIsRefused() throws {
        let device = try fixture.makeDevice()
        let other = try fixture.makeDevice()
        let assertion = try fixture.assertion(by: other, clientDataHash: clientDataHash, counter: 1)
        #expect(try assertionRefusal(assertion, key: device.publicKey) == "assertion signature invalid")
        let mine = try fixture.assertion(by: device, clientDataHash: clientDataHash, counter: 1)
        #expect(
            try assertionRefusal(mine, key: device.publicKey, clientDataHash: SHA256.hash([1]))
                == "assertion signature invalid")
    }

    @Test func anAssertionSignedOverTheNonceItselfIsRefused() throws {
        // One hash short: a signature whose digest is the nonce, not SHA256(nonce), as a verifier
        // that hashes once would accept. Signed with `openssl pkeyutl` over the raw nonce.
        let device = try fixture.makeDevice()
        let authenticatorData = SHA256.hash(Array(AppAttestFixture.appID.utf8)) + [0, 0, 0, 0, 1]
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        let input = fixture.directory.file("raw-nonce").path
        try Data(nonce).write(to: URL(fileURLWithPath: input))
        let signature = try ProcessRunner.run(
            try ProcessRunner.which("openssl"), ["pkeyutl", "-sign", "-inkey", device.keyFile, "-in", input],
            timeout: 20, check: true
        ).stdoutBytes
        let assertion = CBOREncoder.map([
            ("signature", .bytes(signature)), ("authenticatorData", .bytes(authenticatorData)),
        ])
        #expect(try assertionRefusal(assertion, key: device.publicKey) == "assertion signature invalid")
    }

    @Test func anAssertionForAnotherAppIsRefused() throws {
        let device = try fixture.makeDevice()
        let assertion = try fixture.assertion(
            by: device, clientDataHash: clientDataHash, counter: 1, appID: "TESTTEAM01.org.herdr.another-app")
        #expect(try assertionRefusal(assertion, key: device.publicKey) == "assertion rpIdHash mismatch")
    }

    @Test func malformedAssertionsAreRefusedWithTheOriginalsReasons() throws {
        let device = try fixture.makeDevice()
        #expect(try assertionRefusal([0xFF], key: device.publicKey)?.hasPrefix("malformed assertion CBOR: ") == true)
        #expect(
            try assertionRefusal(CBOREncoder.map([("signature", .text("x"))]), key: device.publicKey)
                == "bad assertion shape")
        #expect(
            try assertionRefusal(
                CBOREncoder.map([("signature", .bytes([0x30])), ("authenticatorData", .bytes([1, 2, 3]))]),
                key: device.publicKey) == "assertion authenticatorData too short")
        let good = try fixture.assertion(by: device, clientDataHash: clientDataHash, counter: 1)
        #expect(
            try assertionRefusal(good, key: [0x04] + [UInt8](repeating: 1, count: 64))?.hasPrefix(
                "pinned key import failed")
                == true)
    }

    // MARK: - The trust anchor

    @Test func theBuiltInRootIsApplesAppAttestationRoot() throws {
        let root = try X509Certificate(pem: AppleAppAttestRoot.pem)
        #expect(Hex.encode(root.sha256Fingerprint).uppercased() == AppleAppAttestRoot.sha256Fingerprint)
        // Self-signed, valid from 2020-03-18 to 2045-03-15.
        try root.verifyChain(intermediates: [], root: root, at: 1_900_000_000)
        #expect(throws: AppAttestFailure.self) {
            try root.verifyChain(intermediates: [], root: root, at: 2_400_000_000)
        }
        #expect(AppAttestPolicy.iTerm2Buddy.appID == "H7V7XYVQ7D.com.googlecode.iterm2.companion")
        #expect(AppAttestPolicy.iTerm2Buddy.environment == .production)
    }

    @Test func pemTextThatHoldsNoCertificateIsRefused() {
        #expect(throws: AppAttestFailure.self) { try X509Certificate(pem: "not a certificate") }
        #expect(throws: AppAttestFailure.self) { try X509Certificate(pem: "") }
        #expect(throws: AppAttestFailure.self) { try X509Certificate(der: fixture.intermediateDER + [0]) }
        #expect((try? X509Certificate(der: fixture.intermediateDER)) != nil)
    }
}
