import COpenSSL
import Synchronization

/// An ECDSA P-256 (prime256v1) public key held in an OpenSSL `EVP_PKEY`: the key App Attest
/// makes on a phone, read from its credential certificate and checked against its assertions.
public final class P256PublicKey: @unchecked Sendable {
    /// An uncompressed point: 0x04, x, y.
    public static let pointSize = 65
    /// A DER ECDSA signature of two 32-byte integers is at most 72 bytes; a little slack for
    /// encoders that pad, none for anything that is no signature.
    public static let maximumSignatureSize = 80

    /// The uncompressed point, as App Attest hashes it into the key id.
    public let point: [UInt8]
    // Immutable after init; verifying with one key from several threads is safe in OpenSSL.
    private let key: OpaquePointer

    /// The key at an uncompressed point; refuses a point that is not on the curve. Imported from
    /// its parameters (`EVP_PKEY_fromdata`), several times faster than decoding DER in OpenSSL 3.
    public init(point: [UInt8]) throws(CryptoError) {
        OpenSSLRuntime.prepare()
        guard point.count == Self.pointSize, point.first == 0x04 else {
            throw CryptoError(
                .invalidKey, "a P-256 public key is a 65-byte uncompressed point, got \(point.count) bytes")
        }
        // Through a shared import context when it is free: creating one costs a method fetch.
        let shared: Result<OpaquePointer, CryptoError>? = Self.importer.withLockIfAvailable { importer in
            Result { () throws(CryptoError) in
                if importer == nil { importer = try P256Importer() }
                return try importer!.importPublicKey(point)
            }
        }
        if let shared {
            key = try shared.get()
        } else {
            key = try P256Importer().importPublicKey(point)
        }
        self.point = point
    }

    deinit { EVP_PKEY_free(key) }

    private static let importer = Mutex<P256Importer?>(nil)

    /// The uncompressed point of an `EVP_PKEY` OpenSSL already decoded (a certificate's key);
    /// throws unless it is an EC key on P-256.
    public static func point(ofKey key: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var name = [CChar](repeating: 0, count: 64)
        var nameLength = 0
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC,
            EVP_PKEY_get_group_name(key, &name, name.count, &nameLength) == 1,
            String(decoding: name.prefix(nameLength).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
        else {
            ERR_clear_error()
            throw CryptoError(.invalidKey, "the public key is not an EC key on P-256")
        }
        var point = [UInt8](repeating: 0, count: pointSize)
        var pointLength = 0
        guard
            EVP_PKEY_get_octet_string_param(
                key, OSSLName.encodedPublicKey.pointer, &point, point.count, &pointLength) == 1,
            pointLength == pointSize, point[0] == 0x04
        else {
            ERR_clear_error()
            throw CryptoError(.invalidKey, "the P-256 public key has no uncompressed point")
        }
        return point
    }

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

/// An `EVP_PKEY_CTX` set up to import P-256 public keys. Not thread-safe: used under
/// P256PublicKey's lock or by one call alone.
final class P256Importer: @unchecked Sendable {
    private let context: OpaquePointer

    /// EVP_PKEY_PUBLIC_KEY, spelled out: the macro is too complex to import.
    private static let publicKeySelection =
        OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS

    init() throws(CryptoError) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, OSSLName.ec.pointer, nil) else {
            throw CryptoError.openSSL("EVP_PKEY_CTX_new_from_name(EC)")
        }
        self.context = context
        guard EVP_PKEY_fromdata_init(context) == 1 else { throw CryptoError.openSSL("EVP_PKEY_fromdata_init(EC)") }
    }

    deinit { EVP_PKEY_CTX_free(context) }

    /// The key at an uncompressed point; throws for a point that is not on the curve.
    func importPublicKey(_ point: [UInt8]) throws(CryptoError) -> OpaquePointer {
        var bytes = point
        var imported: OpaquePointer?
        let status = bytes.withUnsafeMutableBytes { pub in
            // OSSL_PARAM keeps these pointers; the names are static and the point lives until
            // EVP_PKEY_fromdata has returned.
            var params = [
                OSSL_PARAM_construct_utf8_string(OSSLName.groupName.pointer, OSSLName.prime256v1.pointer, 0),
                OSSL_PARAM_construct_octet_string(OSSLName.publicKey.pointer, pub.baseAddress, pub.count),
                OSSL_PARAM_construct_end(),
            ]
            return EVP_PKEY_fromdata(context, &imported, Self.publicKeySelection, &params)
        }
        guard status == 1, let imported else {
            ERR_clear_error()
            throw CryptoError(.invalidKey, "the point is not on the P-256 curve")
        }
        return imported
    }
}
