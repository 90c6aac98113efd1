import HerdrCrypto

/// Which App Attest evidence a relay accepts: the app, the environment, the trust anchor.
public struct AppAttestPolicy: Sendable {
    /// The App Attest environment a key was made in, told apart by the AAGUID.
    public enum Environment: String, Sendable, CaseIterable {
        /// `appattest` followed by seven zero bytes: App Store, TestFlight and enterprise builds.
        case production
        /// `appattestdevelop`: builds signed for development.
        case development

        /// The 16-byte AAGUID of an attestation made in this environment.
        public var aaguid: [UInt8] {
            switch self {
            case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
            case .development: Array("appattestdevelop".utf8)
            }
        }
    }

    /// iTerm2 Buddy's team-prefixed app id, the original relay's `APP_ID`.
    public static let iTerm2BuddyAppID = "H7V7XYVQ7D.com.googlecode.iterm2.companion"

    /// The team-prefixed app id (`TEAMID.bundle.id`) whose RP ID hash the evidence must carry.
    public var appID: String
    /// The one environment accepted.
    public var environment: Environment
    /// The certificate every credential certificate must chain to.
    public var root: X509Certificate

    public init(appID: String, environment: Environment, root: X509Certificate) {
        self.appID = appID
        self.environment = environment
        self.root = root
    }

    /// The trust anchor as a start-up line names it: Apple's root, or another by its fingerprint.
    public var rootDescription: String {
        let fingerprint = Hex.encode(root.sha256Fingerprint).uppercased()
        return fingerprint == AppleAppAttestRoot.sha256Fingerprint
            ? "Apple's App Attestation root" : "root SHA256:\(fingerprint)"
    }

    /// The original relay's defaults: iTerm2 Buddy, production, Apple's root.
    public static let iTerm2Buddy = AppAttestPolicy(
        // The built-in root is a constant a test parses: it cannot fail here.
        appID: iTerm2BuddyAppID, environment: .production, root: try! X509Certificate(pem: AppleAppAttestRoot.pem))
}
