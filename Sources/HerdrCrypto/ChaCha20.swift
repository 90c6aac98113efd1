/// The ChaCha20 stream cipher of RFC 8439 section 2.4 in plain Swift, for `ChaCha20Poly1305`'s
/// short messages: one keystroke's message is a few dozen bytes, and this is a few hundred bytes
/// of straight-line code that stays cheap when it runs cold after the process slept, where
/// OpenSSL's provider dispatch around the same work costs tens of microseconds.
struct ChaCha20 {
    /// The key as eight little-endian words, then the nonce as three.
    private let key: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)
    private let nonce: (UInt32, UInt32, UInt32)

    /// `key` holds 32 bytes and `nonce` 12; the caller has checked both.
    init(key: UnsafeRawPointer, nonce: UnsafeRawPointer) {
        func word(_ base: UnsafeRawPointer, _ index: Int) -> UInt32 {
            UInt32(littleEndian: base.loadUnaligned(fromByteOffset: 4 * index, as: UInt32.self))
        }
        self.key = (
            word(key, 0), word(key, 1), word(key, 2), word(key, 3), word(key, 4), word(key, 5), word(key, 6),
            word(key, 7)
        )
        self.nonce = (word(nonce, 0), word(nonce, 1), word(nonce, 2))
    }

    /// Writes the 64-byte block for `counter` (section 2.3) to `output`.
    func block(counter: UInt32, into output: UnsafeMutableRawPointer) {
        // "expand 32-byte k"
        let s0: UInt32 = 0x6170_7865
        let s1: UInt32 = 0x3320_646e
        let s2: UInt32 = 0x7962_2d32
        let s3: UInt32 = 0x6b20_6574
        var x0 = s0
        var x1 = s1
        var x2 = s2
        var x3 = s3
        var x4 = key.0
        var x5 = key.1
        var x6 = key.2
        var x7 = key.3
        var x8 = key.4
        var x9 = key.5
        var x10 = key.6
        var x11 = key.7
        var x12 = counter
        var x13 = nonce.0
        var x14 = nonce.1
        var x15 = nonce.2
        for _ in 0..<10 {
            // A column round, then a diagonal round (section 2.3).
            Self.quarterRound(&x0, &x4, &x8, &x12)
            Self.quarterRound(&x1, &x5, &x9, &x13)
            Self.quarterRound(&x2, &x6, &x10, &x14)
            Self.quarterRound(&x3, &x7, &x11, &x15)
            Self.quarterRound(&x0, &x5, &x10, &x15)
            Self.quarterRound(&x1, &x6, &x11, &x12)
            Self.quarterRound(&x2, &x7, &x8, &x13)
            Self.quarterRound(&x3, &x4, &x9, &x14)
        }
        func store(_ value: UInt32, _ index: Int) {
            output.storeBytes(of: value.littleEndian, toByteOffset: 4 * index, as: UInt32.self)
        }
        store(x0 &+ s0, 0)
        store(x1 &+ s1, 1)
        store(x2 &+ s2, 2)
        store(x3 &+ s3, 3)
        store(x4 &+ key.0, 4)
        store(x5 &+ key.1, 5)
        store(x6 &+ key.2, 6)
        store(x7 &+ key.3, 7)
        store(x8 &+ key.4, 8)
        store(x9 &+ key.5, 9)
        store(x10 &+ key.6, 10)
        store(x11 &+ key.7, 11)
        store(x12 &+ counter, 12)
        store(x13 &+ nonce.0, 13)
        store(x14 &+ nonce.1, 14)
        store(x15 &+ nonce.2, 15)
    }

    /// XORs `count` bytes of `input` with the key stream from byte `offset` of block `counter`
    /// on, into `output`, which may be `input` itself.
    func apply(
        _ input: UnsafeRawPointer, count: Int, into output: UnsafeMutableRawPointer, counter: UInt32, offset: Int
    ) {
        var stream: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &stream) { stream in
            let keyStream = stream.baseAddress!
            var done = 0
            var position = offset
            while done < count {
                let blockIndex = position / 64
                let within = position % 64
                block(counter: counter &+ UInt32(truncatingIfNeeded: blockIndex), into: keyStream)
                let take = min(64 - within, count - done)
                var index = 0
                while index + 8 <= take {
                    let word =
                        input.loadUnaligned(fromByteOffset: done + index, as: UInt64.self)
                        ^ keyStream.loadUnaligned(fromByteOffset: within + index, as: UInt64.self)
                    output.storeBytes(of: word, toByteOffset: done + index, as: UInt64.self)
                    index += 8
                }
                while index < take {
                    let byte =
                        input.load(fromByteOffset: done + index, as: UInt8.self)
                        ^ keyStream.load(fromByteOffset: within + index, as: UInt8.self)
                    output.storeBytes(of: byte, toByteOffset: done + index, as: UInt8.self)
                    index += 1
                }
                done += take
                position += take
            }
            // The key stream is as secret as the key.
            stream.initializeMemory(as: UInt8.self, repeating: 0)
        }
    }

    @inline(__always)
    private static func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
        a &+= b
        d ^= a
        d = d.rotatedLeft(16)
        c &+= d
        b ^= c
        b = b.rotatedLeft(12)
        a &+= b
        d ^= a
        d = d.rotatedLeft(8)
        c &+= d
        b ^= c
        b = b.rotatedLeft(7)
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedLeft(_ count: UInt32) -> UInt32 { (self &<< count) | (self &>> (32 &- count)) }
}
