import HerdrCrypto
import Testing

/// RFC 5869 appendix A, test cases 1–3 (HKDF-SHA256).
@Suite struct HKDFTests {
    @Test func case1() throws {
        let okm = try HKDF.sha256(
            inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), salt: hex("000102030405060708090a0b0c"),
            info: hex("f0f1f2f3f4f5f6f7f8f9"), outputByteCount: 42)
        #expect(
            Hex.encode(okm) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func case2() throws {
        let okm = try HKDF.sha256(
            inputKeyMaterial: Array(0x00...0x4f), salt: Array(0x60...0xaf), info: Array(0xb0...0xff),
            outputByteCount: 82)
        #expect(
            Hex.encode(okm)
                == "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
                + "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
                + "cc30c58179ec3e87c14c01d5c1f3434f1d87")
    }

    @Test func case3EmptySaltAndInfo() throws {
        let okm = try HKDF.sha256(inputKeyMaterial: [UInt8](repeating: 0x0b, count: 22), outputByteCount: 42)
        #expect(
            Hex.encode(okm) == "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    }

    /// Empty input key material is allowed by RFC 5869 (value from Python's `cryptography`).
    @Test func emptyInputKeyMaterial() throws {
        let okm = try HKDF.sha256(inputKeyMaterial: [], outputByteCount: 32)
        #expect(Hex.encode(okm) == "eb70f01dede9afafa449eee1b1286504e1f62388b3f7dd4f956697b0e828fe18")
    }

    /// HKDF is HMAC-extract then HMAC-expand: our HMAC and OpenSSL's KDF agree on every hash.
    @Test func agreesWithHMACConstruction() throws {
        for algorithm in HashAlgorithm.allCases {
            let ikm = Array("input".utf8)
            let salt = Array("salt".utf8)
            let info = Array("info".utf8)
            let prk = HMAC.authenticationCode(algorithm, key: salt, message: ikm)
            let t1 = HMAC.authenticationCode(algorithm, key: prk, message: info + [1])
            let t2 = HMAC.authenticationCode(algorithm, key: prk, message: t1 + info + [2])
            let okm = try HKDF.derive(
                algorithm, inputKeyMaterial: ikm, salt: salt, info: info, outputByteCount: 2 * algorithm.digestSize)
            #expect(okm == t1 + t2)
        }
    }

    @Test func outputLengthIsBounded() {
        #expect(throws: CryptoError.self) { try HKDF.sha256(inputKeyMaterial: [1], outputByteCount: 255 * 32 + 1) }
        #expect(throws: CryptoError.self) { try HKDF.sha256(inputKeyMaterial: [1], outputByteCount: 0) }
    }
}
