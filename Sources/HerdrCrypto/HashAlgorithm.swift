import COpenSSL

/// The hash functions the project uses, each fetched once from OpenSSL's default provider.
///
/// SHA-256 and BLAKE2s-256 are the two Noise hashes the product speaks; SHA-512 and BLAKE2b-512
/// are here so the other Noise test vectors can be checked with the same code.
public enum HashAlgorithm: String, Sendable, CaseIterable {
    case sha256 = "SHA256"
    case sha512 = "SHA512"
    case blake2s256 = "BLAKE2S-256"
    case blake2b512 = "BLAKE2B-512"

    /// The digest length in bytes (Noise's HASHLEN).
    public var digestSize: Int {
        switch self {
        case .sha256, .blake2s256: 32
        case .sha512, .blake2b512: 64
        }
    }

    /// The internal block length in bytes (Noise's BLOCKLEN; HMAC pads keys to it).
    public var blockSize: Int {
        switch self {
        case .sha256, .blake2s256: 64
        case .sha512, .blake2b512: 128
        }
    }

    /// OpenSSL's name for the algorithm, as `EVP_MD_fetch` and the `digest` parameters take it.
    public var openSSLName: String { rawValue }

    /// The hash of `data` in one call.
    public func hash(_ data: [UInt8]) -> [UInt8] {
        data.withUnsafeBytes { hash($0) }
    }

    /// The hash of `data` in one call.
    public func hash(_ data: UnsafeRawBufferPointer) -> [UInt8] {
        let digest = Digest(self)
        digest.update(data)
        return digest.finalize()
    }

    /// The fetched `EVP_MD`, shared by every context of this algorithm.
    var messageDigest: OpaquePointer {
        switch self {
        case .sha256: FetchedDigest.sha256.pointer
        case .sha512: FetchedDigest.sha512.pointer
        case .blake2s256: FetchedDigest.blake2s256.pointer
        case .blake2b512: FetchedDigest.blake2b512.pointer
        }
    }
}

/// An `EVP_MD` fetched once and kept for the life of the process. Fetching is the expensive part
/// of a digest in OpenSSL 3 (a locked method-store lookup); a fetched `EVP_MD` is immutable and
/// safe to share between threads.
final class FetchedDigest: @unchecked Sendable {
    static let sha256 = FetchedDigest("SHA256")
    static let sha512 = FetchedDigest("SHA512")
    static let blake2s256 = FetchedDigest("BLAKE2S-256")
    static let blake2b512 = FetchedDigest("BLAKE2B-512")

    let pointer: OpaquePointer

    private init(_ name: String) {
        // The default provider always has these; without them no caller can continue safely.
        guard let md = EVP_MD_fetch(nil, name, nil) else {
            preconditionFailure("\(CryptoError.openSSL("EVP_MD_fetch(\(name))"))")
        }
        pointer = md
    }

    deinit { EVP_MD_free(pointer) }
}

/// A streaming hash over one `EVP_MD_CTX`: `update` any number of times, then `finalize`.
/// Not thread-safe: one digest belongs to one caller at a time.
public final class Digest {
    public let algorithm: HashAlgorithm
    private let context: OpaquePointer

    /// Starts a new hash.
    public init(_ algorithm: HashAlgorithm) {
        self.algorithm = algorithm
        // Allocation failure and a failed init of a fetched default-provider digest mean the
        // process is out of memory; there is nothing a caller could do but stop.
        guard let context = EVP_MD_CTX_new() else { preconditionFailure("EVP_MD_CTX_new failed: out of memory") }
        self.context = context
        reset()
    }

    deinit { EVP_MD_CTX_free(context) }

    /// Forgets everything hashed so far and starts over.
    public func reset() {
        let status = EVP_DigestInit_ex2(context, algorithm.messageDigest, nil)
        precondition(status == 1, "\(CryptoError.openSSL("EVP_DigestInit_ex2(\(algorithm.rawValue))"))")
    }

    public func update(_ data: [UInt8]) {
        data.withUnsafeBytes { update($0) }
    }

    public func update(_ data: UnsafeRawBufferPointer) {
        guard !data.isEmpty else { return }
        let status = EVP_DigestUpdate(context, data.baseAddress, data.count)
        precondition(status == 1, "\(CryptoError.openSSL("EVP_DigestUpdate(\(algorithm.rawValue))"))")
    }

    /// Writes the digest into `output` (at least `digestSize` bytes) and resets for a new hash.
    public func finalize(into output: UnsafeMutableRawBufferPointer) {
        precondition(output.count >= algorithm.digestSize, "digest output buffer too small")
        var size: UInt32 = 0
        let status = EVP_DigestFinal_ex(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &size)
        precondition(
            status == 1 && Int(size) == algorithm.digestSize,
            "\(CryptoError.openSSL("EVP_DigestFinal_ex(\(algorithm.rawValue))"))")
        reset()
    }

    /// Returns the digest and resets for a new hash.
    public func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: algorithm.digestSize) { buffer, count in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            count = algorithm.digestSize
        }
    }
}

/// BLAKE2s-256 (RFC 7693), the hash of `Noise_XK_25519_ChaChaPoly_BLAKE2s`.
public enum BLAKE2s {
    public static let digestSize = 32
    public static let blockSize = 64

    public static func hash(_ data: [UInt8]) -> [UInt8] { HashAlgorithm.blake2s256.hash(data) }
}

/// SHA-512 (FIPS 180-4).
public enum SHA512 {
    public static let digestSize = 64
    public static let blockSize = 128

    public static func hash(_ data: [UInt8]) -> [UInt8] { HashAlgorithm.sha512.hash(data) }
}

/// BLAKE2b-512 (RFC 7693).
public enum BLAKE2b {
    public static let digestSize = 64
    public static let blockSize = 128

    public static func hash(_ data: [UInt8]) -> [UInt8] { HashAlgorithm.blake2b512.hash(data) }
}
