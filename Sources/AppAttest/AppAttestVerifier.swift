import HerdrCrypto

/// Checks App Attest evidence against a policy, following Apple's documented procedure
/// ("Validating apps that connect to your server"). Pure: no store, no clock of its own.
public struct AppAttestVerifier: Sendable {
    /// The format an App Attest attestation object names.
    public static let format = "apple-appattest"
    /// Certificates in `x5c` at most (Apple sends the credential certificate and one intermediate).
    public static let maximumChainLength = 4

    public let policy: AppAttestPolicy
    private let decoder = CBORDecoder()
    /// SHA-256 of the app id, the RP ID hash every attestation and assertion must carry.
    private let rpIDHash: [UInt8]

    public init(policy: AppAttestPolicy) {
        self.policy = policy
        rpIDHash = SHA256.hash(Array(policy.appID.utf8))
    }

    /// Verifies an attestation object bound to `clientDataHash` at `now` (Unix seconds); returns
    /// the attested key. Every step fails closed with the reason.
    public func verifyAttestation(_ attestationObject: [UInt8], clientDataHash: [UInt8], now: Int64)
        throws(AppAttestFailure) -> AttestedKey
    {
        let object: CBORValue
        do {
            object = try decoder.decode(attestationObject)
        } catch {
            throw AppAttestFailure("malformed attestation CBOR: \(error.message)")
        }
        guard let format = object["fmt"]?.text else { throw AppAttestFailure("the attestation names no fmt") }
        guard format == Self.format else {
            throw AppAttestFailure("unexpected attestation format \"\(format)\" (not \(Self.format))")
        }
        guard let authDataBytes = object["authData"]?.bytes, let statement = object["attStmt"] else {
            throw AppAttestFailure("bad attestation shape: no authData bytes or no attStmt")
        }
        guard let chain = statement["x5c"]?.array, (2...Self.maximumChainLength).contains(chain.count) else {
            throw AppAttestFailure("missing or malformed certificate chain (x5c)")
        }
        var certificates: [X509Certificate] = []
        for item in chain {
            guard let der = item.bytes else { throw AppAttestFailure("an x5c entry is not a byte string") }
            certificates.append(try X509Certificate(der: der))
        }
        // 1. The credential certificate chains through the intermediate to the trusted root.
        let credential = certificates[0]
        try credential.verifyChain(intermediates: Array(certificates[1...]), root: policy.root, at: now)
        // 2–3. nonce = SHA256(authData ‖ clientDataHash) is the one the certificate carries.
        guard let extensionValue = credential.extensionValue(oid: AppleNonceExtension.oid) else {
            throw AppAttestFailure("missing nonce extension \(AppleNonceExtension.oid)")
        }
        let certified = try AppleNonceExtension.nonce(fromExtensionValue: extensionValue)
        guard ConstantTime.equal(certified, SHA256.hash(authDataBytes + clientDataHash)) else {
            throw AppAttestFailure(
                "nonce mismatch: the certificate is for other authenticator data or another challenge")
        }
        // 4. The key id is SHA-256 of the credential certificate's public key.
        let point = try credential.p256Point()
        let keyID = SHA256.hash(point)
        let authData = try AuthenticatorData(authDataBytes)
        // 5. The RP ID hash is this app's.
        guard ConstantTime.equal(authData.rpIDHash, rpIDHash) else {
            throw AppAttestFailure("rpIdHash (app id) mismatch: the key is not \(policy.appID)'s")
        }
        // 6. A fresh key has signed nothing yet.
        guard authData.signCount == 0 else {
            throw AppAttestFailure("the sign counter is \(authData.signCount), not 0")
        }
        // 7. The environment is the one this relay accepts.
        let credentialData = try authData.attestedCredential()
        guard credentialData.aaguid == policy.environment.aaguid else {
            let named = AppAttestPolicy.Environment.allCases.first { $0.aaguid == credentialData.aaguid }
            throw AppAttestFailure(
                "AAGUID/environment mismatch: the key was made in \(named.map { "the \($0.rawValue) environment" } ?? "no App Attest environment"), this relay accepts \(policy.environment.rawValue)"
            )
        }
        // 8. The credential id is the key id.
        guard credentialData.credentialID == keyID else {
            throw AppAttestFailure("credentialId does not match keyId")
        }
        return AttestedKey(keyID: keyID, publicKey: point)
    }

    /// Verifies an assertion (CBOR `{signature, authenticatorData}`) by the key `publicKey` over
    /// `clientDataHash`; returns its counter, which the caller requires to grow. The reasons are
    /// the original relay's, since the phone sees them.
    public func verifyAssertion(_ assertion: [UInt8], publicKey: [UInt8], clientDataHash: [UInt8])
        throws(AppAttestFailure) -> UInt32
    {
        let object: CBORValue
        do {
            object = try decoder.decode(assertion)
        } catch {
            throw AppAttestFailure("malformed assertion CBOR: \(error.message)")
        }
        guard let signature = object["signature"]?.bytes, let authenticatorData = object["authenticatorData"]?.bytes
        else { throw AppAttestFailure("bad assertion shape") }
        guard authenticatorData.count >= AuthenticatorData.fixedSize else {
            throw AppAttestFailure("assertion authenticatorData too short")
        }
        let authData = try AuthenticatorData(authenticatorData)
        let key: P256PublicKey
        do {
            key = try P256PublicKey(point: publicKey)
        } catch {
            throw AppAttestFailure("pinned key import failed: \(error.message)")
        }
        // The phone signs nonce = SHA256(authenticatorData ‖ clientDataHash) with ECDSA-SHA256,
        // so the digest the signature covers is SHA256 of that nonce.
        let nonce = SHA256.hash(authenticatorData + clientDataHash)
        guard key.isValidSignature(signature, forSHA256Of: nonce) else {
            throw AppAttestFailure("assertion signature invalid")
        }
        guard ConstantTime.equal(authData.rpIDHash, rpIDHash) else {
            throw AppAttestFailure("assertion rpIdHash mismatch")
        }
        return authData.signCount
    }
}
