import HomeRoad
import Testing

/// The home road's 16-bit length framing: boundaries, splits, refusals.
@Suite struct HomeFrameDecoderTests {
    @Test(arguments: [1, 2, 255, 256, 65534, 65535])
    func aFrameOfEveryBoundaryLengthRoundTrips(_ length: Int) throws {
        let frame = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let encoded = try #require(HomeFrameDecoder.encode(frame))
        #expect(encoded.count == length + 2)
        #expect(Int(encoded[0]) << 8 | Int(encoded[1]) == length, "big-endian length")
        var decoder = HomeFrameDecoder()
        #expect(try decoder.append(encoded) == [frame])
        #expect(decoder.bufferedCount == 0)
    }

    @Test func nothingEmptyAndNothingLongerThan65535IsEncoded() {
        #expect(HomeFrameDecoder.encode([]) == nil)
        #expect(HomeFrameDecoder.encode([UInt8](repeating: 0, count: 65536)) == nil)
    }

    @Test func framesSplitAnywhereComeOutWholeAndInOrder() throws {
        let frames: [[UInt8]] = [[1], [2, 3], [UInt8](repeating: 9, count: 1000), [4, 5, 6]]
        let stream = frames.flatMap { HomeFrameDecoder.encode($0)! }
        for cut in 0...stream.count {
            var decoder = HomeFrameDecoder()
            let first = try decoder.append(stream[..<cut])
            let second = try decoder.append(stream[cut...])
            #expect(first + second == frames, "cut at \(cut)")
        }
        // One byte at a time.
        var decoder = HomeFrameDecoder()
        var out: [[UInt8]] = []
        for byte in stream { out += try decoder.append([byte]) }
        #expect(out == frames)
    }

    @Test func aZeroLengthIsMalformedAndAPartialFrameIsHeldNotMore() throws {
        var decoder = HomeFrameDecoder()
        #expect(throws: HomeFrameDecoder.Malformed.self) { try decoder.append([0, 0, 1, 2]) }
        var partial = HomeFrameDecoder()
        #expect(try partial.append([0xff, 0xff] + [UInt8](repeating: 1, count: 65534)) == [])
        #expect(partial.bufferedCount == 65536, "at most one partial frame: 2 + 65534 bytes")
        #expect(try partial.append([7, 0, 1, 42]) == [[UInt8](repeating: 1, count: 65534) + [7], [42]])
    }
    /// The connection's call: each frame handed over as it completes, whole ones straight from
    /// the read, split ones through the buffer; a zero length stops it with the buffer empty.
    @Test func framesAreHandedOverAsTheyComplete() throws {
        var decoder = HomeFrameDecoder()
        var got: [[UInt8]] = []
        let stream: [UInt8] = [0, 1, 9, 0, 2, 8, 7, 0, 3, 1]
        try stream[0..<7].withUnsafeBytes { try decoder.append($0) { got.append($0) } }
        #expect(got == [[9], [8, 7]])
        #expect(decoder.bufferedCount == 0)
        try stream[7...].withUnsafeBytes { try decoder.append($0) { got.append($0) } }
        #expect(decoder.bufferedCount == 3, "the start of a frame waits")
        let rest: [UInt8] = [2, 3, 0, 1, 5, 0, 0, 1]
        #expect(throws: HomeFrameDecoder.Malformed.self) {
            try rest.withUnsafeBytes { try decoder.append($0) { got.append($0) } }
        }
        #expect(got == [[9], [8, 7], [1, 2, 3], [5]], "the frames before the zero length")
        #expect(decoder.bufferedCount == 0)
    }
}
