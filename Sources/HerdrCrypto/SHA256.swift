import COpenSSL

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    public static let digestSize = 32

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        OneShotDigest.compute(data, EVP_sha256(), size: digestSize, name: "SHA-256")
    }
}
