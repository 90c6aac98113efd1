import WebWire

extension FuzzTargets {
    /// `WebSocketDecoder`'s events, streaming binary (and text, as the first byte chooses), in the
    /// role the first byte chooses: events in order (a frame's start, payload within its announced
    /// length, its end), the same joined messages and the same error whether the wire comes whole,
    /// in chunks, or with the handler stopping after every event and decoding resumed; an error
    /// that sticks, limits respected, streamed text valid UTF-8, and re-encoded messages decoding
    /// to themselves.
    static let webSocketStream = FuzzTarget(
        "websocket-stream", "WebWire: RFC 6455 decoder's cut-through events, both roles, any chunking"
    ) { data in
        guard let input = WebSocketFuzzInput(data) else { return }
        let whole = WebSocketFuzzing.decoderEvents(input, pieces: [input.wire], streamsText: input.streamsText)
        let chunked = WebSocketFuzzing.decoderEvents(input, pieces: input.pieces, streamsText: input.streamsText)
        FuzzCheck.expect(whole == chunked, "chunking changed the decoding")
        let stopped = WebSocketFuzzing.decoderEvents(
            input, pieces: input.pieces, streamsText: input.streamsText, stopping: true)
        FuzzCheck.expect(whole == stopped, "stopping and resuming changed the decoding")
        let encoded = WebSocketFuzzing.encode(whole.messages, role: input.role, key: 0x9ABC_DEF0)
        let again = WebSocketFuzzing.decoderEvents(input, pieces: [encoded], streamsText: input.streamsText)
        FuzzCheck.expect(
            again.error == nil && again.messages == whole.messages, "re-encoded messages decode differently")
    }
}
