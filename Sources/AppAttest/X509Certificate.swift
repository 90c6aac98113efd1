import COpenSSL
import HerdrCrypto

/// One X.509 certificate held in an OpenSSL `X509`, parsed from DER a phone sent or from an
/// operator's PEM.
public final class X509Certificate: @unchecked Sendable {
    /// A certificate longer than this is refused before OpenSSL reads it (Apple's are under 1 KiB).
    public static let maximumSize = 16 * 1024

    // Immutable after init; OpenSSL certificates are safe to read from several threads.
    let handle: OpaquePointer

    /// Parses one DER certificate; throws for anything else, trailing bytes included.
    public init(der: [UInt8]) throws(AppAttestFailure) {
        OpenSSLRuntime.prepare()
        guard !der.isEmpty, der.count <= Self.maximumSize else {
            throw AppAttestFailure("a certificate of \(der.count) bytes (at most \(Self.maximumSize))")
        }
        let parsed: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            let certificate = d2i_X509(nil, &cursor, buffer.count)
            guard let certificate, cursor == buffer.baseAddress.map({ $0 + buffer.count }) else {
                if let certificate { X509_free(certificate) }
                return nil
            }
            return certificate
        }
        ERR_clear_error()
        guard let parsed else { throw AppAttestFailure("a certificate is not DER X.509") }
        handle = parsed
    }

    /// Parses the first certificate of PEM text (`-----BEGIN CERTIFICATE-----`).
    public init(pem: String) throws(AppAttestFailure) {
        OpenSSLRuntime.prepare()
        let bytes = Array(pem.utf8)
        guard !bytes.isEmpty, bytes.count <= 4 * Self.maximumSize else {
            throw AppAttestFailure("PEM text of \(bytes.count) bytes is no certificate")
        }
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        ERR_clear_error()
        guard let parsed else { throw AppAttestFailure("no PEM certificate (-----BEGIN CERTIFICATE-----) in the text") }
        handle = parsed
    }

    deinit { X509_free(handle) }

    /// The certificate's DER encoding.
    public var der: [UInt8] {
        let length = i2d_X509(handle, nil)
        guard length > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: Int(length))
        out.withUnsafeMutableBufferPointer { buffer in
            var cursor = buffer.baseAddress
            _ = i2d_X509(handle, &cursor)
        }
        return out
    }

    /// SHA-256 of the DER encoding, as `openssl x509 -fingerprint -sha256` prints it.
    public var sha256Fingerprint: [UInt8] { SHA256.hash(der) }

    /// The value (the bytes inside the OCTET STRING) of the extension `oid`, nil when absent.
    public func extensionValue(oid: String) -> [UInt8]? {
        guard let object = OBJ_txt2obj(oid, 1) else {
            ERR_clear_error()
            return nil
        }
        defer { ASN1_OBJECT_free(object) }
        let index = X509_get_ext_by_OBJ(handle, object, -1)
        guard index >= 0, let ext = X509_get_ext(handle, index), let data = X509_EXTENSION_get_data(ext),
            let bytes = ASN1_STRING_get0_data(data)
        else { return nil }
        return Array(UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data))))
    }

    /// The uncompressed point of the certificate's public key, which must be ECDSA P-256 (App
    /// Attest's credential key).
    public func p256Point() throws(AppAttestFailure) -> [UInt8] {
        guard let key = X509_get0_pubkey(handle) else {
            ERR_clear_error()
            throw AppAttestFailure("the credential certificate's public key cannot be read")
        }
        do {
            return try P256PublicKey.point(ofKey: key)
        } catch {
            throw AppAttestFailure("the credential certificate's public key: \(error.message)")
        }
    }

    /// Verifies that this certificate chains through `intermediates` to `root` and that every
    /// certificate on the chain is valid at `now` (Unix seconds); throws with OpenSSL's reason.
    public func verifyChain(intermediates: [X509Certificate], root: X509Certificate, at now: Int64)
        throws(AppAttestFailure)
    {
        guard let store = X509_STORE_new() else { throw AppAttestFailure("X509_STORE_new failed") }
        defer { X509_STORE_free(store) }
        guard X509_STORE_add_cert(store, root.handle) == 1 else {
            ERR_clear_error()
            throw AppAttestFailure("the trusted root cannot be added to a store")
        }
        guard let untrusted = OPENSSL_sk_new_null() else { throw AppAttestFailure("OPENSSL_sk_new_null failed") }
        // The stack borrows the certificates: freed without freeing its items.
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates {
            guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.handle)) > 0 else {
                throw AppAttestFailure("OPENSSL_sk_push failed")
            }
        }
        guard let context = X509_STORE_CTX_new() else { throw AppAttestFailure("X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, handle, untrusted) == 1 else {
            ERR_clear_error()
            throw AppAttestFailure("X509_STORE_CTX_init failed")
        }
        X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(context), time_t(now))
        let verdict = X509_verify_cert(context)
        ERR_clear_error()
        guard verdict == 1 else {
            let code = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let reason = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
            let failing = X509_STORE_CTX_get_current_cert(context)
            let which =
                depth == 0
                ? "the credential certificate"
                : failing.map { X509_cmp($0, root.handle) == 0 } == true
                    ? "the root" : "the intermediate at depth \(depth)"
            throw AppAttestFailure("certificate chain: \(reason) (\(which))")
        }
    }
}
