import WebWire

extension FuzzTargets {
    /// `WebSocketMessageReader` (the decoder read a message at a time) in the role the first byte
    /// chooses: the same messages and the same error whether the wire comes whole or in chunks; an
    /// error sticks; data messages within `maximumMessageSize`, control payloads within 125 bytes;
    /// the reader never holds more than it was given; and the messages re-encoded with
    /// `WebSocketFrameEncoder` decode to themselves.
    static let webSocketFrame = FuzzTarget(
        "websocket-frame", "WebWire: RFC 6455 decoder read a message at a time, both roles, any chunking"
    ) { data in
        guard let input = WebSocketFuzzInput(data) else { return }
        let whole = WebSocketFuzzing.messageReader(input, pieces: [input.wire])
        let chunked = WebSocketFuzzing.messageReader(input, pieces: input.pieces)
        FuzzCheck.expect(whole == chunked, "chunking changed the decoding")
        let encoded = WebSocketFuzzing.encode(whole.messages, role: input.role, key: 0x1234_5678)
        let again = WebSocketFuzzing.messageReader(input, pieces: [encoded])
        FuzzCheck.expect(
            again.error == nil && again.messages == whole.messages, "re-encoded messages decode differently")
    }
}
