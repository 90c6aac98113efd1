import COpenSSL

/// HKDF (RFC 5869) through OpenSSL's `EVP_KDF` "HKDF", extract then expand.
public enum HKDF {
    /// HKDF-SHA256: `outputByteCount` bytes from `inputKeyMaterial`, `salt` (empty means the RFC's
    /// default of HashLen zero bytes) and `info`.
    public static func sha256(
        inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8] = [], outputByteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        try derive(
            .sha256, inputKeyMaterial: inputKeyMaterial, salt: salt, info: info, outputByteCount: outputByteCount)
    }

    /// HKDF over `algorithm`. At most 255 × digestSize bytes can be derived (RFC 5869 section 2.3).
    public static func derive(
        _ algorithm: HashAlgorithm, inputKeyMaterial: [UInt8], salt: [UInt8] = [], info: [UInt8] = [],
        outputByteCount: Int
    ) throws(CryptoError) -> [UInt8] {
        guard outputByteCount > 0, outputByteCount <= 255 * algorithm.digestSize else {
            throw CryptoError(
                .invalidInput,
                "HKDF output must be 1...\(255 * algorithm.digestSize) bytes, asked for \(outputByteCount)")
        }
        guard let context = EVP_KDF_CTX_new(FetchedKDF.hkdf.pointer) else {
            throw CryptoError.openSSL("EVP_KDF_CTX_new(HKDF)")
        }
        defer { EVP_KDF_CTX_free(context) }

        // OSSL_PARAM keeps raw pointers to its names and values: the names are static C strings
        // (OSSLName) and the byte arrays below live until EVP_KDF_derive has returned.
        var key = inputKeyMaterial.isEmpty ? [0] : inputKeyMaterial
        var saltBytes = salt
        var infoBytes = info
        var output = [UInt8](repeating: 0, count: outputByteCount)
        let status = key.withUnsafeMutableBytes { keyBuffer in
            saltBytes.withUnsafeMutableBytes { saltBuffer in
                infoBytes.withUnsafeMutableBytes { infoBuffer in
                    var params = [
                        OSSL_PARAM_construct_utf8_string(
                            OSSLName.digest.pointer, OSSLName.digestName(algorithm).pointer, 0),
                        OSSL_PARAM_construct_octet_string(
                            OSSLName.key.pointer, keyBuffer.baseAddress, inputKeyMaterial.count),
                    ]
                    // Left out when empty: no salt is HashLen zeros (RFC 5869 section 2.2), no info is empty.
                    if !salt.isEmpty {
                        params.append(
                            OSSL_PARAM_construct_octet_string(OSSLName.salt.pointer, saltBuffer.baseAddress, salt.count)
                        )
                    }
                    if !info.isEmpty {
                        params.append(
                            OSSL_PARAM_construct_octet_string(OSSLName.info.pointer, infoBuffer.baseAddress, info.count)
                        )
                    }
                    params.append(OSSL_PARAM_construct_end())
                    return output.withUnsafeMutableBufferPointer { out in
                        EVP_KDF_derive(context, out.baseAddress, outputByteCount, &params)
                    }
                }
            }
        }
        guard status == 1 else { throw CryptoError.openSSL("EVP_KDF_derive(HKDF-\(algorithm.openSSLName))") }
        return output
    }
}

/// The `EVP_KDF` for HKDF, fetched once for the life of the process (immutable, shareable).
final class FetchedKDF: @unchecked Sendable {
    static let hkdf = FetchedKDF("HKDF")

    let pointer: OpaquePointer

    private init(_ name: String) {
        guard let kdf = EVP_KDF_fetch(nil, name, nil) else {
            preconditionFailure("\(CryptoError.openSSL("EVP_KDF_fetch(\(name))"))")
        }
        pointer = kdf
    }

    deinit { EVP_KDF_free(pointer) }
}
