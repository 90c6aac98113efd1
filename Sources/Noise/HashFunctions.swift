import HerdrCrypto

/// A Noise hash function (Noise section 4.3): HASH, with HASHLEN and BLOCKLEN, from which
/// HMAC-HASH and HKDF are built.
public protocol NoiseHash: Sendable {
    /// The name in protocol names, e.g. `BLAKE2s`.
    static var name: String { get }
    /// The OpenSSL digest behind it.
    static var algorithm: HashAlgorithm { get }
}

extension NoiseHash {
    /// HASHLEN: 32 for SHA256 and BLAKE2s, 64 for SHA512 and BLAKE2b.
    public static var hashLength: Int { algorithm.digestSize }
    /// BLOCKLEN: 64 for SHA256 and BLAKE2s, 128 for SHA512 and BLAKE2b.
    public static var blockLength: Int { algorithm.blockSize }

    /// HASH(data).
    public static func hash(_ data: [UInt8]) -> [UInt8] { algorithm.hash(data) }

    /// HMAC-HASH(key, data): RFC 2104 over HASH (Noise section 4.3).
    public static func hmac(key: [UInt8], data: [UInt8]) -> [UInt8] {
        HMAC.authenticationCode(algorithm, key: key, message: data)
    }

    /// HKDF(chaining_key, input_key_material, num_outputs) of Noise section 4.3, for 2 or 3
    /// outputs of HASHLEN bytes each:
    /// temp_key = HMAC(ck, ikm); output1 = HMAC(temp_key, 0x01);
    /// output2 = HMAC(temp_key, output1 ‖ 0x02); output3 = HMAC(temp_key, output2 ‖ 0x03).
    public static func hkdf(chainingKey: [UInt8], inputKeyMaterial: [UInt8], outputs: Int) -> [[UInt8]] {
        hkdf(chainingKey: chainingKey, inputKeyMaterial: inputKeyMaterial, outputs: outputs, using: Digest(algorithm))
    }

    /// HKDF with a caller's digest context (left reset), one buffer for temp_key and the outputs.
    static func hkdf(chainingKey: [UInt8], inputKeyMaterial: [UInt8], outputs: Int, using digest: Digest) -> [[UInt8]] {
        precondition(outputs == 2 || outputs == 3, "Noise HKDF makes 2 or 3 outputs")
        let length = hashLength
        var block = [UInt8](repeating: 0, count: length * (outputs + 1))
        block.withUnsafeMutableBytes { all in
            let tempKey = UnsafeMutableRawBufferPointer(rebasing: all[..<length])
            chainingKey.withUnsafeBytes { ck in
                inputKeyMaterial.withUnsafeBytes { ikm in
                    HMAC.authenticationCode(using: digest, key: ck, message: ikm, into: tempKey)
                }
            }
            for index in 1...outputs {
                let previous =
                    index == 1
                    ? UnsafeRawBufferPointer(start: nil, count: 0)
                    : UnsafeRawBufferPointer(rebasing: all[((index - 1) * length)..<(index * length)])
                let output = UnsafeMutableRawBufferPointer(rebasing: all[(index * length)..<((index + 1) * length)])
                withUnsafeBytes(of: UInt8(index)) { counter in
                    HMAC.authenticationCode(
                        using: digest, key: UnsafeRawBufferPointer(tempKey), message: previous, suffix: counter,
                        into: output)
                }
            }
        }
        return (1...outputs).map { Array(block[($0 * length)..<(($0 + 1) * length)]) }
    }
}

/// BLAKE2s (RFC 7693), HASHLEN 32, BLOCKLEN 64.
public enum HashBLAKE2s: NoiseHash {
    public static let name = "BLAKE2s"
    public static let algorithm = HashAlgorithm.blake2s256
}

/// SHA-256 (FIPS 180-4), HASHLEN 32, BLOCKLEN 64.
public enum HashSHA256: NoiseHash {
    public static let name = "SHA256"
    public static let algorithm = HashAlgorithm.sha256
}

/// BLAKE2b (RFC 7693), HASHLEN 64, BLOCKLEN 128. Here for the test vectors.
public enum HashBLAKE2b: NoiseHash {
    public static let name = "BLAKE2b"
    public static let algorithm = HashAlgorithm.blake2b512
}

/// SHA-512 (FIPS 180-4), HASHLEN 64, BLOCKLEN 128. Here for the test vectors.
public enum HashSHA512: NoiseHash {
    public static let name = "SHA512"
    public static let algorithm = HashAlgorithm.sha512
}
