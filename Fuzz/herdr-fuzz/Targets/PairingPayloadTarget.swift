import Foundation
import HerdrBase
import HerdrKit

extension FuzzTargets {
    /// The SSH road's pairing payload v1 (`herdr://pair?…`, interop-facts §3) and the link rules
    /// under it (HerdrLink, Base64URL, PairingCodeRules, HerdrSessionName), at a fixed time.
    /// A parsed payload keeps every documented bound and its own link (`url`) parses back to the
    /// same payload. Whatever the payload says, the link's fields (any key) written again with
    /// `HerdrLink.url` read back the same; every field value that decodes as canonical base64url
    /// encodes back to itself; a session the rules accept is one herdr's name rule accepts.
    static let pairingPayload = FuzzTarget("pairing-payload", "herdr://pair payload v1 and herdr:// links") { data in
        let text = String(decoding: data, as: UTF8.self)
        checkLinkFields(text)
        let payload: PairingPayload
        do throws(PairingCodeError) {
            payload = try PairingPayload(parsing: text, now: LinkFixtures.now)
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
            return
        }
        FuzzCheck.expect(payload.pairingID.count == PairingPayload.pairingIDSize, "a pairing id of the wrong size")
        FuzzCheck.expect(payload.oneTimeKeySeed.count == 32, "a one-time key of the wrong size")
        FuzzCheck.expect((1...PairingPayload.maximumHostnames).contains(payload.hostnames.count), "hosts out of bounds")
        FuzzCheck.expect(
            (1...PairingPayload.maximumFingerprints).contains(payload.hostKeyFingerprints.count),
            "fingerprints out of bounds")
        FuzzCheck.expect((1...65535).contains(payload.port), "a port out of bounds")
        FuzzCheck.expect(payload.computerName.count <= PairingPayload.maximumNameLength, "a name too long")
        FuzzCheck.expect(
            (1...PairingPayload.maximumNameLength).contains(payload.username.count), "a user name out of bounds")
        FuzzCheck.expect(payload.session.map(HerdrSessionName.isValid) ?? true, "a session herdr refuses")
        FuzzCheck.expect(
            payload.expiresAt > LinkFixtures.now
                && payload.expiresAt.timeIntervalSince(LinkFixtures.now) <= PairingPayload.maximumLifetime,
            "an expiry out of bounds")
        let url = payload.url
        FuzzCheck.expect(url.utf8.count <= PairingPayload.maximumLength, "the payload's link is over the size cap")
        do throws(PairingCodeError) {
            let again = try PairingPayload(parsing: url, now: LinkFixtures.now)
            FuzzCheck.expect(again == payload, "the payload's link parses to another payload: \(url)")
        } catch {
            FuzzCheck.expect(false, "the payload's link is refused (\(error)): \(url)")
        }
    }

    /// HerdrLink's fields of `text` as a link of its own host, with every key it carries known:
    /// written again, they read back the same.
    private static func checkLinkFields(_ text: String) {
        guard let host = HerdrLink.host(of: text), !host.isEmpty,
            host.utf8.allSatisfy({ (0x61...0x7a).contains($0) })
        else { return }
        // The keys the link carries (undecoded), so every field is known.
        let query = text.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        let keys = Set(
            query.split(separator: "&").map { part in
                String(part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
            }
        )
        guard keys.allSatisfy({ key in key.utf8.allSatisfy { (0x61...0x7a).contains($0) } && !key.isEmpty }),
            let fields = try? HerdrLink.fields(
                of: text, host: host, knownKeys: keys, maximumLength: PairingCodeRules.maximumCodeLength)
        else { return }
        let ordered = fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        let again = HerdrLink.url(host: host, fields: ordered)
        guard again.utf8.count <= PairingCodeRules.maximumCodeLength else { return }
        let reread = try? HerdrLink.fields(
            of: again, host: host, knownKeys: keys, maximumLength: PairingCodeRules.maximumCodeLength)
        FuzzCheck.expect(reread == fields, "the link's fields written again read back otherwise: \(again)")
        for value in fields.values {
            if let bytes = Base64URL.decodeCanonical(value) {
                FuzzCheck.expect(Base64URL.encode(bytes) == value, "a canonical base64url value encodes otherwise")
            }
        }
        if let session = fields["s"], (try? PairingCodeRules.session(session)) != nil {
            FuzzCheck.expect(HerdrSessionName.isValid(session), "the rules took a session herdr refuses")
        }
    }
}
