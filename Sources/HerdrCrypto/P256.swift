import COpenSSL

/// An ECDSA P-256 (prime256v1) public key held in an OpenSSL `EVP_PKEY`: the key App Attest
/// makes on a phone, read from its credential certificate and checked against its assertions.
public final class P256PublicKey: @unchecked Sendable {
    /// An uncompressed point: 0x04, x, y.
    public static let pointSize = 65
    /// A DER ECDSA signature of two 32-byte integers is at most 72 bytes; a little slack for
    /// encoders that pad, none for anything that is no signature.
    public static let maximumSignatureSize = 80
    /// The longest SubjectPublicKeyInfo read (a P-256 one is 91 bytes).
    public static let maximumKeyInfoSize = 512

    /// The SubjectPublicKeyInfo DER before the point of every uncompressed P-256 key
    /// (id-ecPublicKey, prime256v1, a BIT STRING of 66 bytes).
    private static let keyInfoPrefix: [UInt8] = [
        0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
        0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
    ]

    /// The uncompressed point, as App Attest hashes it into the key id.
    public let point: [UInt8]
    // Immutable after init; verifying with one key from several threads is safe in OpenSSL.
    private let key: OpaquePointer

    /// The key at an uncompressed point; refuses a point that is not on the curve.
    public convenience init(point: [UInt8]) throws(CryptoError) {
        guard point.count == Self.pointSize, point.first == 0x04 else {
            throw CryptoError(
                .invalidKey, "a P-256 public key is a 65-byte uncompressed point, got \(point.count) bytes")
        }
        try self.init(subjectPublicKeyInfo: Self.keyInfoPrefix + point)
    }

    /// The key in a DER SubjectPublicKeyInfo (as a certificate carries it); refuses any other
    /// algorithm or curve, and a point that is not on the curve.
    public init(subjectPublicKeyInfo der: [UInt8]) throws(CryptoError) {
        OpenSSLRuntime.prepare()
        guard !der.isEmpty, der.count <= Self.maximumKeyInfoSize else {
            throw CryptoError(.invalidKey, "a public key info of \(der.count) bytes is no P-256 key")
        }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let key = d2i_PUBKEY(nil, &cursor, buffer.count)
            // Trailing bytes after the structure are not part of any key.
            guard let key, cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                if let key { EVP_PKEY_free(key) }
                return nil
            }
            return key
        }
        guard let parsed else { throw CryptoError.openSSL("d2i_PUBKEY (not a DER public key)") }
        var name = [CChar](repeating: 0, count: 64)
        var nameLength = 0
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_EC,
            EVP_PKEY_get_group_name(parsed, &name, name.count, &nameLength) == 1,
            String(decoding: name.prefix(nameLength).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        else {
            EVP_PKEY_free(parsed)
            throw CryptoError(.invalidKey, "the public key is not an EC key on P-256")
        }
        var point = [UInt8](repeating: 0, count: Self.pointSize)
        var pointLength = 0
        guard EVP_PKEY_get_octet_string_param(parsed, "encoded-pub-key", &point, point.count, &pointLength) == 1,
            pointLength == Self.pointSize, point[0] == 0x04
        else {
            EVP_PKEY_free(parsed)
            throw CryptoError.openSSL("EVP_PKEY_get_octet_string_param(encoded-pub-key)")
        }
        key = parsed
        self.point = point
    }

    deinit { EVP_PKEY_free(key) }

    /// Whether `signature` (DER) is this key's ECDSA signature over SHA-256 of `message`.
    public func isValidSignature(_ signature: [UInt8], forSHA256Of message: [UInt8]) -> Bool {
        guard !signature.isEmpty, signature.count <= Self.maximumSignatureSize else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        // OpenSSL wants a non-null pointer even for an empty message.
        let input = message.isEmpty ? [0] : message
        let verdict = EVP_DigestVerify(context, signature, signature.count, input, message.count)
        // A malformed signature leaves reasons queued; they are this refusal's, not the next call's.
        ERR_clear_error()
        return verdict == 1
    }
}
