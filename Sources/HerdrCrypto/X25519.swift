import COpenSSL
import Synchronization

/// An X25519 private key (RFC 7748) held in an OpenSSL `EVP_PKEY`.
///
/// The key itself is immutable after init and may be used from several threads at once. For speed
/// it keeps one derivation context (`X25519Agreement`) behind a lock: a derivation takes it when
/// it is free and otherwise makes a context of its own, so concurrent use stays correct and a
/// static key used for many handshakes does not pay OpenSSL's per-context setup each time.
public final class X25519PrivateKey: @unchecked Sendable {
    public static let size = 32

    private let key: OpaquePointer
    private let agreement: Mutex<X25519Agreement?>
    /// The 32-byte public key, computed once.
    public let publicKey: X25519PublicKey

    /// Creates a new random key.
    public convenience init() {
        // SecureRandom never returns a wrong-sized scalar, and any 32 bytes are a valid X25519
        // private key, so this can only fail when OpenSSL cannot allocate.
        do {
            try self.init(rawRepresentation: SecureRandom.bytes(Self.size))
        } catch {
            preconditionFailure("X25519 key generation failed: \(error)")
        }
    }

    /// Creates the key for a 32-byte scalar. OpenSSL clamps it as RFC 7748 section 5 says when
    /// it is used, so any 32 bytes are accepted.
    ///
    /// The public key is computed here as X25519(k, 9) through this key's own derivation
    /// context, which then serves the key's first DH. Importing the scalar alone would make
    /// OpenSSL 3.0 compute the public key on its portable fixed-base path, slower than its
    /// assembly X25519 ladder, and it would also cost a second context. So the `EVP_PKEY` is
    /// imported with the base point as a placeholder public value, and keeps it: OpenSSL's X25519
    /// derivation reads only the private scalar of this side's key, and this class never reads
    /// the `EVP_PKEY`'s public value (`publicKey` holds the computed one). (Replacing it with
    /// `EVP_PKEY_set1_encoded_public_key` is not an option: OpenSSL 3.0 then drops the private
    /// key.) Anything added here that exports the `EVP_PKEY` must re-import it consistently.
    public init(rawRepresentation: [UInt8]) throws(CryptoError) {
        guard rawRepresentation.count == Self.size else {
            throw CryptoError(.invalidKey, "X25519 private key must be 32 bytes, got \(rawRepresentation.count)")
        }
        let key = try Self.importKeyPair(
            privateKey: rawRepresentation, placeholderPublicKey: X25519PublicKey.basePoint.raw)
        let agreement: X25519Agreement
        var raw = [UInt8](repeating: 0, count: Self.size)
        do {
            agreement = try X25519Agreement(privateKey: key, peer: .basePoint)
            try raw.withMutableBytes { buffer throws(CryptoError) in try agreement.derive(peer: nil, into: buffer) }
        } catch {
            EVP_PKEY_free(key)
            throw error
        }
        self.key = key
        self.publicKey = X25519PublicKey(uncheckedRaw: raw)
        self.agreement = Mutex(agreement)
    }

    /// An X25519 `EVP_PKEY` from a raw private value and a placeholder public value (see init),
    /// through a shared import context when it is free (creating one costs a method fetch).
    private static func importKeyPair(privateKey: [UInt8], placeholderPublicKey publicKey: [UInt8]) throws(CryptoError)
        -> OpaquePointer
    {
        let shared: Result<OpaquePointer, CryptoError>? = importer.withLockIfAvailable { importer in
            Result { () throws(CryptoError) in
                if importer == nil { importer = try X25519Importer() }
                return try importer!.importKeyPair(privateKey: privateKey, publicKey: publicKey)
            }
        }
        if let shared { return try shared.get() }
        return try X25519Importer().importKeyPair(privateKey: privateKey, publicKey: publicKey)
    }

    private static let importer = Mutex<X25519Importer?>(nil)

    deinit { EVP_PKEY_free(key) }

    /// The 32-byte scalar as given. Handle with care: it is the secret.
    public var rawRepresentation: [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.size)
        var size = Self.size
        let status = EVP_PKEY_get_raw_private_key(key, &out, &size)
        precondition(status == 1 && size == Self.size, "EVP_PKEY_get_raw_private_key(X25519) failed")
        return out
    }

    /// X25519(this scalar, the peer's u-coordinate). Throws when the result is all zeros (the peer
    /// sent a low-order point), which RFC 7748 section 6.1 allows a caller to reject.
    public func sharedSecret(with peer: X25519PublicKey) throws(CryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.size)
        try out.withMutableBytes { buffer throws(CryptoError) in try sharedSecret(with: peer, into: buffer) }
        return out
    }

    /// X25519 into `output` (at least 32 bytes), without allocating the result.
    public func sharedSecret(with peer: X25519PublicKey, into output: UnsafeMutableRawBufferPointer) throws(CryptoError)
    {
        precondition(output.count >= Self.size, "X25519 output buffer too small")
        let key = self.key
        let cached: Result<Void, CryptoError>? = agreement.withLockIfAvailable { agreement in
            Result { () throws(CryptoError) in
                if let agreement {
                    try agreement.derive(peer: peer, into: output)
                } else {
                    let fresh = try X25519Agreement(privateKey: key, peer: peer)
                    try fresh.derive(peer: nil, into: output)
                    agreement = fresh
                }
            }
        }
        if let cached { return try cached.get() }
        // Another thread holds the cached context: use one of our own for this call.
        try X25519Agreement(privateKey: key, peer: peer).derive(peer: nil, into: output)
    }
}

/// One X25519 derivation context: an `EVP_PKEY_CTX` set up for derivation with this side's key,
/// and a peer `EVP_PKEY` whose public value is replaced for each derivation
/// (`EVP_PKEY_set1_encoded_public_key`), which avoids OpenSSL's per-key import and per-context
/// method fetches on every DH. Not thread-safe: it is only ever used by one caller at a time,
/// under X25519PrivateKey's lock or as one call's own (hence the unchecked Sendable, which lets it
/// live inside that Mutex).
final class X25519Agreement: @unchecked Sendable {
    private let context: OpaquePointer
    private let peerKey: OpaquePointer

    init(privateKey: OpaquePointer, peer: X25519PublicKey) throws(CryptoError) {
        guard let peerKey = EVP_PKEY_dup(X25519BasePointKey.shared.pointer) else {
            throw CryptoError.openSSL("EVP_PKEY_dup(X25519)")
        }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, privateKey, nil) else {
            EVP_PKEY_free(peerKey)
            throw CryptoError.openSSL("EVP_PKEY_CTX_new_from_pkey(X25519)")
        }
        self.peerKey = peerKey
        self.context = context
        guard EVP_PKEY_derive_init(context) == 1 else { throw CryptoError.openSSL("EVP_PKEY_derive_init(X25519)") }
        try setPeer(peer)
    }

    deinit {
        EVP_PKEY_CTX_free(context)
        EVP_PKEY_free(peerKey)
    }

    /// X25519 with `peer` (nil: the peer this context holds already) into `output`.
    func derive(peer: X25519PublicKey?, into output: UnsafeMutableRawBufferPointer) throws(CryptoError) {
        if let peer { try setPeer(peer) }
        var size = X25519PublicKey.size
        guard EVP_PKEY_derive(context, output.baseAddress!.assumingMemoryBound(to: UInt8.self), &size) == 1,
            size == X25519PublicKey.size
        else {
            throw CryptoError(
                .invalidKey, "\(CryptoError.openSSL("EVP_PKEY_derive(X25519)").message) (low-order public key?)")
        }
    }

    private func setPeer(_ peer: X25519PublicKey) throws(CryptoError) {
        let status = peer.raw.withUnsafeBufferPointer {
            EVP_PKEY_set1_encoded_public_key(peerKey, $0.baseAddress, X25519PublicKey.size)
        }
        guard status == 1 else { throw CryptoError.openSSL("EVP_PKEY_set1_encoded_public_key(X25519)") }
        // Every 32-byte string is a u-coordinate; there is nothing to validate beyond the all-zero
        // output OpenSSL refuses in EVP_PKEY_derive.
        guard EVP_PKEY_derive_set_peer_ex(context, peerKey, 0) == 1 else {
            throw CryptoError.openSSL("EVP_PKEY_derive_set_peer_ex(X25519)")
        }
    }
}

/// An `EVP_PKEY_CTX` set up to import X25519 key pairs. Not thread-safe: used under
/// X25519PrivateKey's lock or by one call alone.
final class X25519Importer: @unchecked Sendable {
    private let context: OpaquePointer

    init() throws(CryptoError) {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, OSSLName.x25519.pointer, nil) else {
            throw CryptoError.openSSL("EVP_PKEY_CTX_new_from_name(X25519)")
        }
        self.context = context
        guard EVP_PKEY_fromdata_init(context) == 1 else { throw CryptoError.openSSL("EVP_PKEY_fromdata_init(X25519)") }
    }

    deinit { EVP_PKEY_CTX_free(context) }

    /// The private and public values as given, without a consistency check.
    func importKeyPair(privateKey: [UInt8], publicKey: [UInt8]) throws(CryptoError) -> OpaquePointer {
        var privateBytes = privateKey
        var publicBytes = publicKey
        var key: OpaquePointer?
        // EVP_PKEY_KEYPAIR, spelled out: the macro is too complex to import.
        let keyPairSelection =
            OSSL_KEYMGMT_SELECT_PRIVATE_KEY | OSSL_KEYMGMT_SELECT_PUBLIC_KEY | OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS
            | OSSL_KEYMGMT_SELECT_OTHER_PARAMETERS
        let status = privateBytes.withUnsafeMutableBytes { priv in
            publicBytes.withUnsafeMutableBytes { pub in
                // OSSL_PARAM keeps these pointers; the names are static and the values live
                // until EVP_PKEY_fromdata has returned.
                var params = [
                    OSSL_PARAM_construct_octet_string(OSSLName.privateKey.pointer, priv.baseAddress, priv.count),
                    OSSL_PARAM_construct_octet_string(OSSLName.publicKey.pointer, pub.baseAddress, pub.count),
                    OSSL_PARAM_construct_end(),
                ]
                return EVP_PKEY_fromdata(context, &key, keyPairSelection, &params)
            }
        }
        OPENSSL_cleanse(&privateBytes, privateBytes.count)
        guard status == 1, let key else { throw CryptoError.openSSL("EVP_PKEY_fromdata(X25519)") }
        return key
    }
}

/// The base point as an `EVP_PKEY` public key, made once: agreements copy it (`EVP_PKEY_dup`,
/// cheaper than an import) for their scratch peer key. Never modified, so shareable.
final class X25519BasePointKey: @unchecked Sendable {
    static let shared = X25519BasePointKey()

    let pointer: OpaquePointer

    private init() {
        let raw = X25519PublicKey.basePoint.raw
        guard
            let key = raw.withUnsafeBufferPointer({
                EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, nil, $0.baseAddress, 32)
            })
        else {
            preconditionFailure("\(CryptoError.openSSL("EVP_PKEY_new_raw_public_key(X25519 base point)"))")
        }
        pointer = key
    }

    deinit { EVP_PKEY_free(pointer) }
}

/// An X25519 public key: a 32-byte u-coordinate.
public struct X25519PublicKey: Hashable, Sendable {
    public static let size = 32
    public let raw: [UInt8]

    public init(raw: [UInt8]) throws(CryptoError) {
        guard raw.count == Self.size else {
            throw CryptoError(.invalidKey, "X25519 public key must be 32 bytes, got \(raw.count)")
        }
        self.raw = raw
    }

    init(uncheckedRaw: [UInt8]) { self.raw = uncheckedRaw }

    /// u = 9, the base point (RFC 7748 section 4.1).
    static let basePoint = X25519PublicKey(uncheckedRaw: [9] + [UInt8](repeating: 0, count: 31))
}
