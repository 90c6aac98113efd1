import Glibc
import HerdrCrypto

/// A keystroke's seal and open as the roads see them: once per key press, after the thread slept,
/// with the code and data gone cold. The compact path (`ChaCha20`, `Poly1305`) and OpenSSL's EVP
/// path take turns after the same sleeps, so both see the same moments of the machine.
struct ColdCipherBench {
    /// A keystroke message's plaintext: the session protocol's input header and one byte.
    static let plaintextLength = 24
    let samples: Int
    let sleepMicroseconds: UInt32

    struct Result {
        var compact: [Double]
        var openSSL: [Double]
    }

    func run() throws -> Result {
        let key = (0..<32).map { UInt8($0) }
        let compact = try ChaCha20Poly1305(key: key, engine: .compact)
        let openSSL = try ChaCha20Poly1305(key: key, engine: .openSSL)
        var result = Result(compact: [], openSSL: [])
        var buffer = [UInt8](repeating: 0x61, count: Self.plaintextLength + ChaCha20Poly1305.tagSize)
        for sample in 0..<samples {
            for (aead, isCompact) in [(compact, true), (openSSL, false)] {
                usleep(sleepMicroseconds)
                let elapsed = try buffer.withUnsafeMutableBytes { bytes in
                    try ChaCha20Poly1305.withNoiseNonce(UInt64(sample)) { nonce in
                        let start = now()
                        let plaintext = UnsafeRawBufferPointer(rebasing: bytes[..<Self.plaintextLength])
                        let sealed = try aead.seal(
                            nonce: nonce, authenticating: UnsafeRawBufferPointer(start: nil, count: 0),
                            plaintext: plaintext, into: bytes)
                        _ = try aead.open(
                            nonce: nonce, authenticating: UnsafeRawBufferPointer(start: nil, count: 0),
                            ciphertext: UnsafeRawBufferPointer(rebasing: bytes[..<sealed]), into: bytes)
                        return (now() - start) * 1e6
                    }
                }
                if isCompact { result.compact.append(elapsed) } else { result.openSSL.append(elapsed) }
            }
        }
        return result
    }
}
