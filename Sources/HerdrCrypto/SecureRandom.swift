import COpenSSL

/// Cryptographically secure random bytes from OpenSSL's DRBG.
public enum SecureRandom {
    /// Returns `count` random bytes. Traps only if the system's random source is broken,
    /// because no caller can continue safely without randomness.
    public static func bytes(_ count: Int) -> [UInt8] {
        OpenSSLRuntime.prepare()
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let status = out.withUnsafeMutableBytes {
            RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count))
        }
        precondition(status == 1, "RAND_bytes failed: the system random source is unavailable")
        return out
    }
}
