import COpenSSL

/// SHA-1 (FIPS 180-4). Broken for collision resistance: use it only where a protocol fixes it,
/// as RFC 6455 does for the WebSocket `Sec-WebSocket-Accept` value.
public enum SHA1 {
    public static let digestSize = 20

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        OneShotDigest.compute(data, EVP_sha1(), size: digestSize, name: "SHA-1")
    }
}
