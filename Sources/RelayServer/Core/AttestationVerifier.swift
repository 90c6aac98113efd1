/// Checks App Attest evidence for the relay. Behind a protocol so a real verifier (Apple's chain,
/// app id, AAGUID environment, counters) can be added without touching admission.
public protocol AttestationVerifier: Sendable {
    /// Verifies an attestation object bound to `clientDataHash`; returns the attested key id.
    func verifyAttestation(_ attestationObject: [UInt8], clientDataHash: [UInt8]) -> Result<[UInt8], AttestationFailure>
    /// Verifies an assertion by the key `keyID` over `clientDataHash` (counter strictly increasing).
    func verifyAssertion(_ assertion: [UInt8], keyID: [UInt8], clientDataHash: [UInt8]) -> Result<
        Void, AttestationFailure
    >
}

/// Why attestation evidence was refused.
public struct AttestationFailure: Error, Hashable, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
}

/// The verifier of a relay built without App Attest support: refuses everything, so a relay that
/// requires attestation fails closed instead of admitting unverified phones.
public struct UnavailableAttestationVerifier: AttestationVerifier {
    public init() {}

    static let failure = AttestationFailure("App Attest verification is not available in this relay")

    public func verifyAttestation(_ attestationObject: [UInt8], clientDataHash: [UInt8]) -> Result<
        [UInt8], AttestationFailure
    > { .failure(Self.failure) }

    public func verifyAssertion(_ assertion: [UInt8], keyID: [UInt8], clientDataHash: [UInt8]) -> Result<
        Void, AttestationFailure
    > { .failure(Self.failure) }
}
