import HerdrCrypto

/// Deterministic Ed25519 keys for tests: key `n` has the seed of 32 bytes all equal to `n + 1`.
enum Ed25519TestKeys {
    static func privateKey(_ n: Int) -> Ed25519PrivateKey {
        try! Ed25519PrivateKey(seed: [UInt8](repeating: UInt8(n + 1), count: 32))
    }

    static func publicKey(_ n: Int) -> Ed25519PublicKey {
        privateKey(n).publicKey
    }
}
