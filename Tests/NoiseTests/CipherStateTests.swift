import HerdrCrypto
import Noise
import Testing

@Suite struct CipherStateTests {
    static let key = (0..<32).map { UInt8($0) }

    func kind(_ body: () throws -> Void) -> NoiseError.Kind? {
        do {
            try body()
            return nil
        } catch let error as NoiseError {
            return error.kind
        } catch {
            return nil
        }
    }

    @Test func emptyKeyPassesThrough() throws {
        var state = CipherState<CipherChaChaPoly>()
        #expect(!state.hasKey)
        #expect(try state.encryptWithAd([1], [5, 6, 7]) == [5, 6, 7])
        #expect(try state.decryptWithAd([1], [5, 6, 7]) == [5, 6, 7])
        #expect(state.n == 0)
    }

    @Test func roundTripAndNonceLayout() throws {
        var sender = try CipherState<CipherChaChaPoly>(key: Self.key)
        var receiver = try CipherState<CipherChaChaPoly>(key: Self.key)
        let first = try sender.encryptWithAd([9], Array("hello".utf8))
        #expect(first.count == 5 + 16)
        #expect(sender.n == 1)
        // ENCRYPT(k, n, ad, p) is ChaCha20-Poly1305 with nonce 0^32 ‖ LE64(n).
        let aead = try ChaCha20Poly1305(key: Self.key)
        #expect(
            try aead.seal(nonce: ChaCha20Poly1305.noiseNonce(0), authenticating: [9], plaintext: Array("hello".utf8))
                == first)
        let second = try sender.encryptWithAd([], [])
        #expect(try aead.seal(nonce: ChaCha20Poly1305.noiseNonce(1), plaintext: []) == second)
        #expect(try receiver.decryptWithAd([9], first) == Array("hello".utf8))
        #expect(try receiver.decryptWithAd([], second) == [])
        #expect(receiver.n == 2)
    }

    @Test func failedDecryptDoesNotAdvanceTheNonce() throws {
        var sender = try CipherState<CipherChaChaPoly>(key: Self.key)
        var receiver = try CipherState<CipherChaChaPoly>(key: Self.key)
        let message = try sender.encryptWithAd([], [1, 2, 3])
        var tampered = message
        tampered[0] ^= 1
        #expect(kind { _ = try receiver.decryptWithAd([], tampered) } == .decryptionFailed)
        #expect(kind { _ = try receiver.decryptWithAd([1], message) } == .decryptionFailed)
        #expect(kind { _ = try receiver.decryptWithAd([], Array(message.prefix(15))) } == .decryptionFailed)
        #expect(receiver.n == 0)
        #expect(try receiver.decryptWithAd([], message) == [1, 2, 3])
    }

    /// Nonce 2^64 − 1 is reserved (Noise section 5.1).
    @Test func nonceExhaustion() throws {
        var sender = try CipherState<CipherChaChaPoly>(key: Self.key)
        var receiver = try CipherState<CipherChaChaPoly>(key: Self.key)
        sender.setNonce(UInt64.max - 1)
        receiver.setNonce(UInt64.max - 1)
        let last = try sender.encryptWithAd([], [42])
        #expect(sender.n == UInt64.max)
        #expect(kind { _ = try sender.encryptWithAd([], [43]) } == .nonceExhausted)
        #expect(sender.n == UInt64.max)
        #expect(try receiver.decryptWithAd([], last) == [42])
        #expect(kind { _ = try receiver.decryptWithAd([], last) } == .nonceExhausted)

        var fresh = try CipherState<CipherChaChaPoly>(key: Self.key)
        fresh.setNonce(.max)
        #expect(kind { _ = try fresh.encryptWithAd([], []) } == .nonceExhausted)
        #expect(kind { _ = try fresh.decryptWithAd([], [UInt8](repeating: 0, count: 16)) } == .nonceExhausted)
    }

    /// Rekey (section 4.2): k = first 32 bytes of ENCRYPT(k, 2^64 − 1, "", 32 zero bytes); n unchanged.
    @Test func rekey() throws {
        var state = try CipherState<CipherChaChaPoly>(key: Self.key)
        _ = try state.encryptWithAd([], [1])
        try state.rekey()
        #expect(state.n == 1)
        let aead = try ChaCha20Poly1305(key: Self.key)
        let newKey = Array(
            try aead.seal(nonce: ChaCha20Poly1305.noiseNonce(.max), plaintext: [UInt8](repeating: 0, count: 32)).prefix(
                32))
        var expected = try CipherState<CipherChaChaPoly>(key: newKey)
        expected.setNonce(1)
        #expect(try state.encryptWithAd([], [2]) == expected.encryptWithAd([], [2]))
        var empty = CipherState<CipherChaChaPoly>()
        #expect(kind { try empty.rekey() } == .invalidKey)
    }

    @Test func messageLimit() throws {
        var state = try CipherState<CipherChaChaPoly>(key: Self.key)
        #expect(try state.encryptWithAd([], [UInt8](repeating: 0, count: 65519)).count == 65535)
        #expect(kind { _ = try state.encryptWithAd([], [UInt8](repeating: 0, count: 65520)) } == .messageTooLong)
        #expect(kind { _ = try state.decryptWithAd([], [UInt8](repeating: 0, count: 65536)) } == .messageTooLong)
        #expect(kind { _ = try CipherState<CipherChaChaPoly>(key: [1, 2, 3]) } == .invalidKey)
    }

    @Test func inPlaceBuffers() throws {
        var sender = try CipherState<CipherChaChaPoly>(key: Self.key)
        var receiver = try CipherState<CipherChaChaPoly>(key: Self.key)
        var buffer = Array("in place".utf8) + [UInt8](repeating: 0, count: 16)
        let written = try buffer.withUnsafeMutableBytes { bytes in
            try sender.encryptWithAd(
                UnsafeRawBufferPointer(start: nil, count: 0), plaintext: UnsafeRawBufferPointer(rebasing: bytes[..<8]),
                into: bytes)
        }
        #expect(written == 24)
        let read = try buffer.withUnsafeMutableBytes { bytes in
            try receiver.decryptWithAd(
                UnsafeRawBufferPointer(start: nil, count: 0), ciphertext: UnsafeRawBufferPointer(bytes), into: bytes)
        }
        #expect(read == 8)
        #expect(Array(buffer.prefix(8)) == Array("in place".utf8))
    }

    /// Copies are independent values: each keeps its own nonce, and they share no scratch state.
    @Test func copiesAreIndependent() throws {
        var a = try CipherState<CipherChaChaPoly>(key: Self.key)
        var b = a
        let fromA = try a.encryptWithAd([], [1])
        let fromB = try b.encryptWithAd([], [1])
        #expect(fromA == fromB)
        #expect(a.n == 1 && b.n == 1)
    }
}
