import WebWire

extension FuzzTargets {
    /// The two WebSocket decoders on the same wire (same role, same limit, the stream decoder
    /// assembling text): the same messages, the same error or none, each fed in its own chunking.
    /// With text streamed, the stream decoder's messages are a prefix of the frame decoder's
    /// (it may refuse bad UTF-8 before the message ends) and it is refused whenever they differ.
    static let webSocketDifferential = FuzzTarget("websocket-differential", "WebWire: frame decoder vs stream decoder")
    { data in
        guard let input = WebSocketFuzzInput(data) else { return }
        let frames = WebSocketFuzzing.frameDecoder(input, pieces: [input.wire])
        let stream = WebSocketFuzzing.streamDecoder(input, pieces: input.pieces, streamsText: false)
        FuzzCheck.expect(frames == stream, "the decoders disagree: \(frames) vs \(stream)")
        if input.streamsText {
            let streamed = WebSocketFuzzing.streamDecoder(input, pieces: input.pieces, streamsText: true)
            FuzzCheck.expect(frames.messages.starts(with: streamed.messages), "streamed text gave other messages")
            if streamed.messages.count < frames.messages.count {
                FuzzCheck.expect(
                    streamed.error?.closeCode == WebSocketCloseCode.invalidPayload,
                    "streamed text stopped without a reason")
            }
            if streamed.error == nil { FuzzCheck.expect(streamed == frames, "streamed text gave other messages") }
        }
    }
}
