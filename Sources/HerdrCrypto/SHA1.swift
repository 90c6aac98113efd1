import COpenSSL

/// SHA-1 (FIPS 180-4). Broken for collision resistance: use it only where a protocol fixes it,
/// as RFC 6455 does for the WebSocket `Sec-WebSocket-Accept` value.
public enum SHA1 {
    public static let digestSize = 20

    public static func hash(_ data: [UInt8]) -> [UInt8] {
        OpenSSLRuntime.prepare()
        var digest = [UInt8](repeating: 0, count: digestSize)
        var size: UInt32 = 0
        let status = data.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { out in
                EVP_Digest(
                    input.baseAddress, input.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &size,
                    EVP_sha1(), nil)
            }
        }
        precondition(status == 1 && size == 20, "EVP_Digest(SHA-1) failed")
        return digest
    }
}
