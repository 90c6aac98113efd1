import WebWire

extension FuzzTargets {
    /// `WebSocketStreamDecoder` in the role (and with the text streaming) the first byte chooses:
    /// events in order (a frame's start, payload within its announced length, its end), the same
    /// joined messages and the same error whether the wire comes whole or in chunks, an error that
    /// sticks, limits respected, streamed text valid UTF-8, and re-encoded messages decoding to
    /// themselves.
    static let webSocketStream = FuzzTarget(
        "websocket-stream", "WebWire: cut-through stream decoder, both roles, any chunking"
    ) { data in
        guard let input = WebSocketFuzzInput(data) else { return }
        let whole = WebSocketFuzzing.streamDecoder(input, pieces: [input.wire], streamsText: input.streamsText)
        let chunked = WebSocketFuzzing.streamDecoder(input, pieces: input.pieces, streamsText: input.streamsText)
        FuzzCheck.expect(whole == chunked, "chunking changed the decoding")
        let encoded = WebSocketFuzzing.encode(whole.messages, role: input.role, key: 0x9ABC_DEF0)
        let again = WebSocketFuzzing.streamDecoder(input, pieces: [encoded], streamsText: input.streamsText)
        FuzzCheck.expect(
            again.error == nil && again.messages == whole.messages, "re-encoded messages decode differently")
    }
}
