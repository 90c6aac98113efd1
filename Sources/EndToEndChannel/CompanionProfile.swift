import HerdrCrypto
import Noise

/// The handshake every companion connection runs: `Noise_XK_25519_ChaChaPoly_BLAKE2s`, the
/// phone (client) as initiator knowing the computer's static key from the QR.
public typealias CompanionHandshake = HandshakeState<CipherChaChaPoly, HashBLAKE2s>
/// The channel over it.
public typealias CompanionChannel = SecureChannel<CipherChaChaPoly, HashBLAKE2s>

/// What names an app inside the companion cryptography: the prologue's app and the SAS label.
/// Two apps with different profiles never complete a handshake with each other (the prologue
/// differs) and never show matching SAS codes.
public struct CompanionProfile: Sendable, Hashable {
    /// `<app>` in the prologue `"<app>/v1/pid:" + pid`.
    public let prologueApp: String
    /// `<label>` in the SAS info `<label>-sas-v1`.
    public let sasLabel: String

    public init(prologueApp: String, sasLabel: String) {
        self.prologueApp = prologueApp
        self.sasLabel = sasLabel
    }

    /// Ours.
    public static let herdrRemote = CompanionProfile(prologueApp: "herdr-remote", sasLabel: "herdr-remote")
    /// iTerm2's companion (interop-facts §5): prologue app `iterm2-companion`, SAS label `iterm2`.
    public static let iTerm2 = CompanionProfile(prologueApp: "iterm2-companion", sasLabel: "iterm2")

    /// The protocol every companion handshake runs.
    public static let protocolName = CompanionHandshake.protocolName(for: .xk)

    /// The Noise prologue binding the pairing id: `"<app>/v1/pid:" + pid`, UTF-8.
    public func prologue(pid: String) -> [UInt8] {
        Array("\(prologueApp)/v1/pid:\(pid)".utf8)
    }

    /// The 6-digit short authentication string for a finished handshake (interop-facts §5):
    /// HKDF-SHA256(IKM = handshake hash, empty salt, info `<label>-sas-v1`, 8 bytes) read as a
    /// big-endian UInt64, mod 10^6, zero-padded to 6 digits.
    public func sas(handshakeHash: [UInt8]) throws(CryptoError) -> String {
        let bytes = try HKDF.sha256(
            inputKeyMaterial: handshakeHash, info: Array("\(sasLabel)-sas-v1".utf8), outputByteCount: 8)
        let value = bytes.reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 1_000_000
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// The phone's (initiator's) handshake: it knows the computer's static key `rs` from the QR.
    public func initiatorHandshake(pid: String, localStatic: KeyPair, remoteStatic: [UInt8]) throws(NoiseError)
        -> CompanionHandshake
    {
        try CompanionHandshake(
            pattern: .xk, initiator: true, prologue: prologue(pid: pid), s: localStatic, rs: remoteStatic)
    }

    /// The computer's (responder's) handshake: it learns the phone's static key from message 3.
    public func responderHandshake(pid: String, localStatic: KeyPair) throws(NoiseError) -> CompanionHandshake {
        try CompanionHandshake(pattern: .xk, initiator: false, prologue: prologue(pid: pid), s: localStatic)
    }
}
