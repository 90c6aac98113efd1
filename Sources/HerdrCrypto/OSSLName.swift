#if canImport(Glibc)
    import Glibc
#else
    import Darwin
#endif

/// A C string that lives for the whole process, for OpenSSL APIs that keep the pointer they are
/// given (`OSSL_PARAM` names and values) instead of copying the string.
final class OSSLName: @unchecked Sendable {
    static let x25519 = OSSLName("X25519")
    static let ec = OSSLName("EC")
    static let groupName = OSSLName("group")  // OSSL_PKEY_PARAM_GROUP_NAME
    static let prime256v1 = OSSLName("prime256v1")
    static let encodedPublicKey = OSSLName("encoded-pub-key")  // OSSL_PKEY_PARAM_ENCODED_PUBLIC_KEY
    static let privateKey = OSSLName("priv")  // OSSL_PKEY_PARAM_PRIV_KEY
    static let publicKey = OSSLName("pub")  // OSSL_PKEY_PARAM_PUB_KEY
    static let digest = OSSLName("digest")  // OSSL_KDF_PARAM_DIGEST
    static let key = OSSLName("key")  // OSSL_KDF_PARAM_KEY
    static let salt = OSSLName("salt")  // OSSL_KDF_PARAM_SALT
    static let info = OSSLName("info")  // OSSL_KDF_PARAM_INFO

    private static let sha256 = OSSLName(HashAlgorithm.sha256.openSSLName)
    private static let sha512 = OSSLName(HashAlgorithm.sha512.openSSLName)
    private static let blake2s256 = OSSLName(HashAlgorithm.blake2s256.openSSLName)
    private static let blake2b512 = OSSLName(HashAlgorithm.blake2b512.openSSLName)

    /// OpenSSL's name for `algorithm`, as a static C string.
    static func digestName(_ algorithm: HashAlgorithm) -> OSSLName {
        switch algorithm {
        case .sha256: sha256
        case .sha512: sha512
        case .blake2s256: blake2s256
        case .blake2b512: blake2b512
        }
    }

    /// Never freed: every instance is a static constant.
    let pointer: UnsafeMutablePointer<CChar>

    private init(_ string: String) {
        guard let copy = strdup(string) else { preconditionFailure("strdup failed: out of memory") }
        pointer = copy
    }
}
