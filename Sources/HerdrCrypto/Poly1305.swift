/// The Poly1305 one-time authenticator of RFC 8439 section 2.5 in plain Swift, for
/// `ChaCha20Poly1305`'s short messages (see `ChaCha20` for why).
///
/// The accumulator is kept as 64 + 64 + a few bits, multiplied by the clamped `r` with 64×64→128
/// products. Clamping clears `r`'s low two bits of its upper half, so 2^128 · r₁ ≡ (r₁ + r₁/4) ·
/// 2^0 modulo 2^130 − 5, folding the high products back without a division. No branch or
/// memory access depends on a secret.
struct Poly1305 {
    private let r0: UInt64
    private let r1: UInt64
    /// r₁ + r₁/4: r₁ · 2^128 reduced modulo 2^130 − 5, divided by 2^128.
    private let r1Folded: UInt64
    private let pad0: UInt64
    private let pad1: UInt64
    private var h0: UInt64 = 0
    private var h1: UInt64 = 0
    private var h2: UInt64 = 0

    /// `key` holds the 32-byte one-time key: `r` then `s`.
    init(key: UnsafeRawPointer) {
        r0 = UInt64(littleEndian: key.loadUnaligned(as: UInt64.self)) & 0x0fff_fffc_0fff_ffff
        r1 = UInt64(littleEndian: key.loadUnaligned(fromByteOffset: 8, as: UInt64.self)) & 0x0fff_fffc_0fff_fffc
        r1Folded = r1 &+ (r1 &>> 2)
        pad0 = UInt64(littleEndian: key.loadUnaligned(fromByteOffset: 16, as: UInt64.self))
        pad1 = UInt64(littleEndian: key.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
    }

    /// Absorbs `count` bytes as the AEAD construction does (section 2.8): whole 16-byte blocks,
    /// then the remainder padded with zeros to a whole block.
    mutating func absorbPadded(_ bytes: UnsafeRawPointer?, count: Int) {
        guard let bytes, count > 0 else { return }
        let whole = count & ~15
        var offset = 0
        while offset < whole {
            absorbBlock(
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)),
                UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)))
            offset += 16
        }
        guard whole < count else { return }
        var last: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &last) {
            $0.baseAddress!.copyMemory(from: bytes + whole, byteCount: count - whole)
        }
        absorbBlock(UInt64(littleEndian: last.0), UInt64(littleEndian: last.1))
    }

    /// Absorbs one whole block, given as two little-endian words: h = (h + block + 2^128) · r.
    mutating func absorbBlock(_ m0: UInt64, _ m1: UInt64) {
        let (sum0, carry0) = h0.addingReportingOverflow(m0)
        let (partial1, carry1a) = h1.addingReportingOverflow(m1)
        let (sum1, carry1b) = partial1.addingReportingOverflow(carry0 ? 1 : 0)
        let sum2 = h2 &+ 1 &+ (carry1a ? 1 : 0) &+ (carry1b ? 1 : 0)

        // The product's three columns; the 2^128 and 2^192 terms fold through r1Folded.
        var d0 = Wide(sum0.multipliedFullWidth(by: r0))
        d0.add(Wide(sum1.multipliedFullWidth(by: r1Folded)))
        var d1 = Wide(sum0.multipliedFullWidth(by: r1))
        d1.add(Wide(sum1.multipliedFullWidth(by: r0)))
        d1.add(sum2 &* r1Folded)
        let d2 = sum2 &* r0

        d1.add(d0.high)
        let top = d2 &+ d1.high
        // Bits from 2^130 up are worth 5 each at 2^0.
        let over = (top & ~3) &+ (top &>> 2)
        let (low0, carryLow) = d0.low.addingReportingOverflow(over)
        let (low1, carryMid) = d1.low.addingReportingOverflow(carryLow ? 1 : 0)
        h0 = low0
        h1 = low1
        h2 = (top & 3) &+ (carryMid ? 1 : 0)
    }

    /// The 16-byte tag, (h mod 2^130 − 5 + s) mod 2^128, written to `output`.
    func finish(into output: UnsafeMutableRawPointer) {
        // One more fold leaves h below 2^130; then h − p is taken when it is not negative.
        let over = (h2 & ~3) &+ (h2 &>> 2)
        let (a0, c0) = h0.addingReportingOverflow(over)
        let (a1, c1) = h1.addingReportingOverflow(c0 ? 1 : 0)
        let a2 = (h2 & 3) &+ (c1 ? 1 : 0)
        let (g0, e0) = a0.addingReportingOverflow(5)
        let (g1, e1) = a1.addingReportingOverflow(e0 ? 1 : 0)
        let g2 = a2 &+ (e1 ? 1 : 0)
        // All ones when h + 5 reached 2^130, that is when h ≥ p.
        let useG = 0 &- (g2 &>> 2)
        let f0 = (a0 & ~useG) | (g0 & useG)
        let f1 = (a1 & ~useG) | (g1 & useG)
        let (t0, carry) = f0.addingReportingOverflow(pad0)
        let t1 = f1 &+ pad1 &+ (carry ? 1 : 0)
        output.storeBytes(of: t0.littleEndian, as: UInt64.self)
        output.storeBytes(of: t1.littleEndian, toByteOffset: 8, as: UInt64.self)
    }
}

/// A 128-bit sum of products, as two words.
private struct Wide {
    var high: UInt64
    var low: UInt64

    @inline(__always)
    init(_ product: (high: UInt64, low: UInt64)) {
        high = product.high
        low = product.low
    }

    @inline(__always)
    mutating func add(_ other: Wide) {
        let (sum, carry) = low.addingReportingOverflow(other.low)
        low = sum
        high = high &+ other.high &+ (carry ? 1 : 0)
    }

    @inline(__always)
    mutating func add(_ value: UInt64) {
        let (sum, carry) = low.addingReportingOverflow(value)
        low = sum
        high &+= carry ? 1 : 0
    }
}
