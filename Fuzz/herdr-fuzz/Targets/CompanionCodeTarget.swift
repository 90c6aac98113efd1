import CompanionPairing
import Foundation
import HerdrBase

extension FuzzTargets {
    /// The `herdr://companion` pairing code (docs/companion-code.md), parsed at a fixed time: any
    /// text parses or is refused with a reason; a parsed code has a 32-byte key, a 16-byte pairing
    /// id, a relay or a home address, a name of at most 64 characters, a session herdr accepts and
    /// an expiry within 15 minutes; its own link (`url`) is within the size cap and parses back
    /// to the same code.
    static let companionCode = FuzzTarget("companion-code", "herdr://companion pairing code") { data in
        let text = String(decoding: data, as: UTF8.self)
        let now = LinkFixtures.now
        let code: CompanionCode
        do throws(PairingCodeError) {
            code = try CompanionCode(parsing: text, now: now)
        } catch {
            FuzzCheck.expect(!error.message.isEmpty, "a refusal without a reason")
            return
        }
        FuzzCheck.expect(code.staticPublicKey.count == CompanionCode.staticKeySize, "a key of the wrong size")
        FuzzCheck.expect(code.pairingID.count == CompanionCode.pairingIDSize, "a pairing id of the wrong size")
        FuzzCheck.expect(code.relay != nil || !code.home.isEmpty, "a code with no road")
        FuzzCheck.expect(code.computerName.count <= PairingCodeRules.maximumNameLength, "a name too long")
        FuzzCheck.expect(code.session.map(HerdrSessionName.isValid) ?? true, "a session herdr refuses")
        if let expiry = code.expiresAt {
            FuzzCheck.expect(
                expiry > now && expiry.timeIntervalSince(now) <= PairingCodeRules.maximumLifetime,
                "an expiry out of bounds")
        }
        let url = code.url
        FuzzCheck.expect(url.utf8.count <= CompanionCode.maximumLength, "the code's link is over the size cap")
        do throws(PairingCodeError) {
            let again = try CompanionCode(parsing: url, now: now)
            FuzzCheck.expect(again == code, "the code's link parses to another code: \(url)")
        } catch {
            FuzzCheck.expect(false, "the code's link is refused (\(error)): \(url)")
        }
    }
}

/// The fixed clock of the link targets (the seeds' expiries are a few minutes after it).
enum LinkFixtures {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)
}
