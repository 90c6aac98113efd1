import HomeRoad

extension FuzzTargets {
    /// The home road's length framing, fed in the chunks the input's first byte chooses: the
    /// frames are the same however the stream is cut, each within the bound, and re-encoding
    /// them gives back the bytes they came from.
    static let homeFrames = FuzzTarget("home-frames", "home road: 16-bit length framing, any chunking") { data in
        guard let first = data.first else { return }
        let stream = Array(data.dropFirst())
        let chunk = Int(first % 16) + 1
        var whole = HomeFrameDecoder()
        var pieces = HomeFrameDecoder()
        let oneShot = Result { () throws(HomeFrameDecoder.Malformed) in try whole.append(stream) }
        var chunked: [[UInt8]] = []
        var failed = false
        var offset = 0
        while offset < stream.count && !failed {
            let end = min(stream.count, offset + chunk)
            do {
                chunked += try pieces.append(stream[offset..<end])
            } catch {
                failed = true
            }
            offset = end
        }
        switch oneShot {
        case .success(let frames):
            FuzzCheck.expect(!failed && frames == chunked, "chunking changed the frames")
            FuzzCheck.expect(
                frames.allSatisfy { !$0.isEmpty && $0.count <= HomeFrameDecoder.maximumFrame }, "a frame out of bounds")
            FuzzCheck.expect(whole.bufferedCount <= HomeFrameDecoder.maximumFrame + 1, "held more than one frame")
            let encoded = frames.flatMap { HomeFrameDecoder.encode($0) ?? [] }
            FuzzCheck.expect(Array(stream.prefix(encoded.count)) == encoded, "re-encoding differs")
        case .failure:
            // The one-shot decoder refuses a zero length; the chunked one must reach the same
            // zero length, having given back the frames before it.
            FuzzCheck.expect(failed, "only the one-shot decoder refused")
        }
    }
}
