/// HMAC (RFC 2104) over any `HashAlgorithm`, built from the hash itself exactly as RFC 2104 and
/// the Noise specification (section 4.3, `HMAC-HASH`) define it:
/// `H((K0 ⊕ opad) ‖ H((K0 ⊕ ipad) ‖ message))`, where K0 is the key hashed if longer than a
/// block, then zero-padded to the block length.
///
/// Streaming: `update` any number of times, then `finalize`, which also re-keys the object for the
/// next message under the same key. Not thread-safe: one instance belongs to one caller at a time.
/// The static `authenticationCode` functions compute one code with a single digest context and
/// the padded keys on the stack.
public final class HMAC {
    public let algorithm: HashAlgorithm
    private let inner: Digest
    private let outer: Digest
    /// K0 ⊕ ipad and K0 ⊕ opad, one block each.
    private let innerPad: [UInt8]
    private let outerPad: [UInt8]

    public convenience init(_ algorithm: HashAlgorithm, key: [UInt8]) {
        self.init(algorithm, key: key[...])
    }

    public init(_ algorithm: HashAlgorithm, key: ArraySlice<UInt8>) {
        self.algorithm = algorithm
        var block = key.count > algorithm.blockSize ? algorithm.hash(Array(key)) : Array(key)
        block += [UInt8](repeating: 0, count: algorithm.blockSize - block.count)
        innerPad = block.map { $0 ^ Self.ipad }
        outerPad = block.map { $0 ^ Self.opad }
        inner = Digest(algorithm)
        outer = Digest(algorithm)
        inner.update(innerPad)
    }

    public func update(_ data: [UInt8]) { inner.update(data) }

    public func update(_ data: UnsafeRawBufferPointer) { inner.update(data) }

    /// Writes the code into `output` (at least `digestSize` bytes) and starts a new message under
    /// the same key.
    public func finalize(into output: UnsafeMutableRawBufferPointer) {
        inner.finalize(into: output)
        outer.update(outerPad)
        outer.update(UnsafeRawBufferPointer(rebasing: output[0..<algorithm.digestSize]))
        outer.finalize(into: output)
        inner.update(innerPad)
    }

    /// Returns the code and starts a new message under the same key.
    public func finalize() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: algorithm.digestSize) { buffer, count in
            finalize(into: UnsafeMutableRawBufferPointer(buffer))
            count = algorithm.digestSize
        }
    }

    static let ipad: UInt8 = 0x36
    static let opad: UInt8 = 0x5c
}

extension HMAC {
    /// The HMAC of `message` under `key` in one call.
    public static func authenticationCode(_ algorithm: HashAlgorithm, key: [UInt8], message: [UInt8]) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: algorithm.digestSize) { buffer, count in
            key.withUnsafeBytes { k in
                message.withUnsafeBytes { m in
                    authenticationCode(
                        using: Digest(algorithm), key: k, message: m, into: UnsafeMutableRawBufferPointer(buffer))
                }
            }
            count = algorithm.digestSize
        }
    }

    /// HMAC(key, message ‖ suffix) into `output` (at least `digestSize` bytes), reusing `digest`
    /// (left reset) and keeping the padded key on the stack: no allocation. `output` may overlap
    /// `message` or `suffix`.
    public static func authenticationCode(
        using digest: Digest, key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer,
        suffix: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
        into output: UnsafeMutableRawBufferPointer
    ) {
        let algorithm = digest.algorithm
        let blockSize = algorithm.blockSize
        let digestSize = algorithm.digestSize
        precondition(output.count >= digestSize, "HMAC output buffer too small")
        withUnsafeTemporaryAllocation(byteCount: blockSize + digestSize, alignment: 16) { scratch in
            let pad = UnsafeMutableRawBufferPointer(rebasing: scratch[..<blockSize])
            let innerHash = UnsafeMutableRawBufferPointer(rebasing: scratch[blockSize...])
            pad.initializeMemory(as: UInt8.self, repeating: 0)
            if key.count > blockSize {
                digest.update(key)
                digest.finalize(into: pad)
            } else if !key.isEmpty {
                pad.copyMemory(from: key)
            }
            for index in 0..<blockSize { pad[index] ^= ipad }
            digest.update(UnsafeRawBufferPointer(pad))
            digest.update(message)
            digest.update(suffix)
            digest.finalize(into: innerHash)
            for index in 0..<blockSize { pad[index] ^= ipad ^ opad }
            digest.update(UnsafeRawBufferPointer(pad))
            digest.update(UnsafeRawBufferPointer(innerHash))
            digest.finalize(into: output)
        }
    }
}
