import COpenSSL

/// SHA-256 (FIPS 180-4).
public enum SHA256 {
    public static let digestSize = 32

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        OpenSSLRuntime.prepare()
        var digest = [UInt8](repeating: 0, count: digestSize)
        var size: UInt32 = 0
        let status = data.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { out in
                EVP_Digest(
                    input.baseAddress, input.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &size,
                    EVP_sha256(), nil)
            }
        }
        precondition(status == 1 && size == 32, "EVP_Digest(SHA-256) failed")
        return digest
    }
}
