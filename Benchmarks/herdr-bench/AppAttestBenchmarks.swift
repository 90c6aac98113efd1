import AppAttest
import Foundation
import HerdrCrypto
import TestSupport

/// The relay's App Attest checks measured beside `openssl speed` on the same machine in the same
/// run: an attestation is two ECDSA P-384 verifications (the credential certificate by the
/// intermediate, the intermediate by the root; Apple's CAs are P-384), an assertion one P-256
/// verification; the rest (CBOR, DER, hashing, chain building) is the overhead the ratio shows.
/// The evidence comes from the tests' throwaway PKI (openssl), shaped as Apple's.
struct AppAttestBenchmarks {
    /// CPU seconds per measurement.
    let seconds: Double
    let runs: Int

    init(runs: Int, seconds: Double = 1.0) {
        self.runs = max(3, runs)
        self.seconds = seconds
    }

    func run() throws -> BenchReport {
        var report = BenchReport(
            title: "App Attest (issue 16): attestations and assertions verified per second vs `openssl speed`, same run"
        )
        let fixture = try AppAttestFixture()
        let verifier = AppAttestVerifier(
            policy: AppAttestPolicy(
                appID: AppAttestFixture.appID, environment: .production, root: try X509Certificate(pem: fixture.rootPEM)
            ))
        let device = try fixture.makeDevice()
        let clientDataHash = SHA256.hash(Array("benchmark challenge".utf8))
        let object = try fixture.attestationObject(for: device, clientDataHash: clientDataHash)
        let assertion = try fixture.assertion(by: device, clientDataHash: clientDataHash, counter: 1)
        let now = Int64(Date().timeIntervalSince1970)
        // Checked once outside the timing: a refused object would measure the refusal.
        _ = try verifier.verifyAttestation(object, clientDataHash: clientDataHash, now: now)
        _ = try verifier.verifyAssertion(assertion, publicKey: device.publicKey, clientDataHash: clientDataHash)

        var attestations: [Double] = []
        var assertions: [Double] = []
        var p384: [Double] = []
        var p256: [Double] = []
        var version = ""
        for index in 0..<runs {
            attestations.append(
                try measureRate(seconds: seconds) {
                    _ = try verifier.verifyAttestation(object, clientDataHash: clientDataHash, now: now)
                    return 1
                })
            assertions.append(
                try measureRate(seconds: seconds) {
                    _ = try verifier.verifyAssertion(
                        assertion, publicKey: device.publicKey, clientDataHash: clientDataHash)
                    return 1
                })
            let speed = try Self.ecdsaVerifyRates(seconds: max(1, Int(seconds.rounded(.up))))
            p256.append(speed.p256)
            p384.append(speed.p384)
            version = speed.version
            print("  round \(index + 1)/\(runs) done")
        }
        let attestationLimit = median(p384) / 2
        report.add(
            "/attest verification (CBOR, chain of 2 P-384 signatures, nonce, key id, authData) per second, one core",
            ours: format(median(attestations), 0),
            anchor: "\(format(attestationLimit, 0)) (P-384 verify \(format(median(p384), 0))/s ÷ 2)",
            ratio: "\(format(median(attestations) / attestationLimit))×", target: "report")
        report.add(
            "/register assertion verification (CBOR, 1 P-256 signature) per second, one core",
            ours: format(median(assertions), 0), anchor: "\(format(median(p256), 0)) (P-256 verify/s)",
            ratio: "\(format(median(assertions) / median(p256)))×", target: "report")
        report.notes += [
            "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; \(version). Medians of \(runs) rounds; each "
                + "round measures ours, then `openssl speed -mr -seconds 1 ecdsap256 ecdsap384` (verify/s). Rates are per CPU "
                + "second: openssl counts user CPU time, ours this thread's CPU time.",
            "What the ratio leaves out: parsing two certificates and building the chain (OpenSSL 3.0 decodes each "
                + "certificate's key through its provider framework), and for an assertion importing the key "
                + "(EVP_PKEY_fromdata, on a shared context) and setting up the verification; openssl speed signs and "
                + "verifies with a key made once.",
            "The attestation object is \(object.count) bytes (credential certificate, intermediate, a 2-byte receipt; "
                + "Apple's carry a receipt of a few KiB, which is read as one CBOR byte string). With the per-address limit of "
                + "30 `/attest*` requests a minute, one core checks attestations for about "
                + "\(format(median(attestations) * 60 / 30, 0)) addresses at their limit.",
        ]
        return report
    }

    /// `openssl speed -mr` for ECDSA: `+F4:<n>:<bits>:<sign/s>:<verify/s>`.
    static func ecdsaVerifyRates(seconds: Int) throws -> (p256: Double, p384: Double, version: String) {
        let version = try ProcessRunner.run("openssl", ["version"], check: true).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let output = try ProcessRunner.run(
            "openssl", ["speed", "-mr", "-seconds", String(seconds), "ecdsap256", "ecdsap384"],
            timeout: Double(seconds * 6 + 30), check: true
        ).stdout
        func verify(bits: String) throws -> Double {
            guard
                let line = output.split(separator: "\n").first(where: {
                    $0.hasPrefix("+F4:") && $0.split(separator: ":").dropFirst(2).first.map(String.init) == bits
                }),
                case let fields = line.split(separator: ":"), fields.count >= 5, let value = Double(fields[4])
            else { throw FixtureError("cannot read ECDSA P-\(bits) verify/s from openssl speed:\n\(output)") }
            return value
        }
        return (try verify(bits: "256"), try verify(bits: "384"), version)
    }
}
