import COpenSSL

/// `EVP_Digest` in one call, for the fixed hashes with a type of their own (SHA-256, SHA-1).
enum OneShotDigest {
    static func compute(_ data: [UInt8], _ md: OpaquePointer?, size: Int, name: String) -> [UInt8] {
        OpenSSLRuntime.prepare()
        var digest = [UInt8](repeating: 0, count: size)
        var written: UInt32 = 0
        let status = data.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { out in
                EVP_Digest(
                    input.baseAddress, input.count, out.baseAddress!.assumingMemoryBound(to: UInt8.self), &written, md,
                    nil)
            }
        }
        precondition(status == 1 && written == size, "EVP_Digest(\(name)) failed")
        return digest
    }
}
