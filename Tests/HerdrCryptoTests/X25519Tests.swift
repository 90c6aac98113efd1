import HerdrCrypto
import Testing

/// RFC 7748 section 5.2 (scalar multiplication, including the iterated test) and section 6.1
/// (the Diffie-Hellman example).
@Suite struct X25519Tests {
    struct Vector: Sendable {
        let scalar: String
        let u: String
        let output: String
    }

    static let vectors = [
        Vector(
            scalar: "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            u: "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            output: "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
        Vector(
            scalar: "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            u: "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            output: "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
    ]

    @Test(arguments: vectors) func scalarMultiplication(_ vector: Vector) throws {
        let key = try X25519PrivateKey(rawRepresentation: hex(vector.scalar))
        let shared = try key.sharedSecret(with: X25519PublicKey(raw: hex(vector.u)))
        #expect(Hex.encode(shared) == vector.output)
    }

    /// k = u = 9; repeatedly k, u = X25519(k, u), k. Checked after 1 and after 1,000 iterations.
    @Test func iterated() throws {
        var k: [UInt8] = [9] + [UInt8](repeating: 0, count: 31)
        var u = k
        for iteration in 1...1000 {
            let next = try X25519PrivateKey(rawRepresentation: k).sharedSecret(with: X25519PublicKey(raw: u))
            u = k
            k = next
            if iteration == 1 {
                #expect(Hex.encode(k) == "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079")
            }
        }
        #expect(Hex.encode(k) == "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51")
    }

    @Test func diffieHellmanExample() throws {
        let alice = try X25519PrivateKey(
            rawRepresentation: hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        let bob = try X25519PrivateKey(
            rawRepresentation: hex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"))
        #expect(Hex.encode(alice.publicKey.raw) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        #expect(Hex.encode(bob.publicKey.raw) == "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
        let k = "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
        #expect(Hex.encode(try alice.sharedSecret(with: bob.publicKey)) == k)
        #expect(Hex.encode(try bob.sharedSecret(with: alice.publicKey)) == k)
        #expect(alice.rawRepresentation == hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
    }

    @Test func randomKeysAgree() throws {
        let a = X25519PrivateKey()
        let b = X25519PrivateKey()
        #expect(a.publicKey != b.publicKey)
        #expect(try a.sharedSecret(with: b.publicKey) == b.sharedSecret(with: a.publicKey))
    }

    @Test func lowOrderPointIsRefused() throws {
        // u = 0 is a point of small order: X25519 gives all zeros, which a caller may reject.
        let zero = try X25519PublicKey(raw: [UInt8](repeating: 0, count: 32))
        #expect(throws: CryptoError.self) { try X25519PrivateKey().sharedSecret(with: zero) }
    }

    @Test func wrongSizesAreRefused() {
        #expect(throws: CryptoError(.invalidKey, "X25519 private key must be 32 bytes, got 31")) {
            try X25519PrivateKey(rawRepresentation: [UInt8](repeating: 1, count: 31))
        }
        #expect(throws: CryptoError.self) { try X25519PublicKey(raw: [1, 2, 3]) }
    }
}

/// The cached derivation context of a private key: results never depend on which peer came
/// before, and concurrent use from several threads (which falls back to per-call contexts) agrees.
@Suite struct X25519ContextReuseTests {
    @Test func onePrivateKeyManyPeers() throws {
        let key = X25519PrivateKey()
        let peers = (0..<20).map { _ in X25519PrivateKey() }
        for peer in peers + peers.reversed() {
            let fresh = try X25519PrivateKey(rawRepresentation: key.rawRepresentation)
            #expect(try key.sharedSecret(with: peer.publicKey) == fresh.sharedSecret(with: peer.publicKey))
            #expect(try key.sharedSecret(with: peer.publicKey) == peer.sharedSecret(with: key.publicKey))
        }
    }

    @Test func concurrentUse() async throws {
        let key = X25519PrivateKey()
        let peers = (0..<8).map { _ in X25519PrivateKey() }
        let expected = try peers.map { try $0.sharedSecret(with: key.publicKey) }
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for round in 0..<64 {
                let index = round % peers.count
                let peer = peers[index].publicKey
                let want = expected[index]
                group.addTask { try key.sharedSecret(with: peer) == want }
            }
            for try await ok in group { #expect(ok) }
        }
    }

    @Test func publicKeyMatchesRFC7748() throws {
        // The public key is computed through the derivation context (X25519(k, 9)).
        let alice = try X25519PrivateKey(
            rawRepresentation: hex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"))
        #expect(Hex.encode(alice.publicKey.raw) == "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
        let scalar = SecureRandom.bytes(32)
        let mine = try X25519PrivateKey(rawRepresentation: scalar)
        let base = try X25519PublicKey(raw: [9] + [UInt8](repeating: 0, count: 31))
        #expect(try X25519PrivateKey(rawRepresentation: scalar).sharedSecret(with: base) == mine.publicKey.raw)
    }
}
