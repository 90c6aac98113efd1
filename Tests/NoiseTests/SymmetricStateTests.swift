import HerdrCrypto
import Noise
import Testing

@Suite struct SymmetricStateTests {
    /// InitializeSymmetric: a name of at most HASHLEN bytes is zero-padded, a longer one hashed.
    @Test func initializeSymmetric() {
        let short = SymmetricState<CipherChaChaPoly, HashSHA256>(protocolName: "Noise_NN_25519_ChaChaPoly_SHA256")
        #expect(short.getHandshakeHash() == Array("Noise_NN_25519_ChaChaPoly_SHA256".utf8))
        let padded = SymmetricState<CipherChaChaPoly, HashSHA256>(protocolName: "Noise_N")
        #expect(padded.getHandshakeHash() == Array("Noise_N".utf8) + [UInt8](repeating: 0, count: 25))
        let long = SymmetricState<CipherChaChaPoly, HashBLAKE2s>(protocolName: "Noise_XK_25519_ChaChaPoly_BLAKE2s")
        #expect(long.getHandshakeHash() == BLAKE2s.hash(Array("Noise_XK_25519_ChaChaPoly_BLAKE2s".utf8)))
        #expect(!long.cipherState.hasKey)
    }

    @Test func mixHash() {
        var state = SymmetricState<CipherChaChaPoly, HashBLAKE2s>(protocolName: "Noise_N")
        let before = state.getHandshakeHash()
        state.mixHash([1, 2, 3])
        #expect(state.getHandshakeHash() == BLAKE2s.hash(before + [1, 2, 3]))
    }

    /// Noise's HKDF is RFC 5869 HKDF with the chaining key as salt and empty info: check it
    /// against OpenSSL's EVP_KDF, for every hash.
    @Test func hkdfIsRFC5869() throws {
        func check<H: NoiseHash>(_ hash: H.Type) throws {
            let ck = (0..<H.hashLength).map { UInt8($0) }
            let ikm = Array("input key material".utf8)
            let expected = try HKDF.derive(
                H.algorithm, inputKeyMaterial: ikm, salt: ck, outputByteCount: 3 * H.hashLength)
            let outputs = H.hkdf(chainingKey: ck, inputKeyMaterial: ikm, outputs: 3)
            #expect(outputs.joined().elementsEqual(expected), "\(H.name)")
            #expect(H.hkdf(chainingKey: ck, inputKeyMaterial: ikm, outputs: 2) == Array(outputs.prefix(2)))
            let empty = try HKDF.derive(H.algorithm, inputKeyMaterial: [], salt: ck, outputByteCount: 2 * H.hashLength)
            #expect(H.hkdf(chainingKey: ck, inputKeyMaterial: [], outputs: 2).joined().elementsEqual(empty))
            #expect(H.hmac(key: ck, data: ikm) == HMAC.authenticationCode(H.algorithm, key: ck, message: ikm))
        }
        try check(HashBLAKE2s.self)
        try check(HashSHA256.self)
        try check(HashBLAKE2b.self)
        try check(HashSHA512.self)
    }

    @Test func encryptAndHashThenSplit() throws {
        var a = SymmetricState<CipherChaChaPoly, HashSHA256>(protocolName: "Noise_NN_25519_ChaChaPoly_SHA256")
        var b = a
        // Without a key EncryptAndHash only hashes.
        #expect(try a.encryptAndHash([7]) == [7])
        #expect(try b.decryptAndHash([7]) == [7])
        try a.mixKey(Array(repeating: 1, count: 32))
        try b.mixKey(Array(repeating: 1, count: 32))
        let ciphertext = try a.encryptAndHash(Array("secret".utf8))
        #expect(ciphertext.count == 6 + 16)
        #expect(try b.decryptAndHash(ciphertext) == Array("secret".utf8))
        #expect(a.getHandshakeHash() == b.getHandshakeHash())
        try a.mixKeyAndHash([9, 9])
        try b.mixKeyAndHash([9, 9])
        #expect(a.getHandshakeHash() == b.getHandshakeHash())

        var (a1, a2) = try a.split()
        var (b1, b2) = try b.split()
        let m1 = try a1.encryptWithAd([], [1])
        let m2 = try a2.encryptWithAd([], [1])
        #expect(m1 != m2)
        #expect(try b1.decryptWithAd([], m1) == [1])
        #expect(try b2.decryptWithAd([], m2) == [1])
    }
}
