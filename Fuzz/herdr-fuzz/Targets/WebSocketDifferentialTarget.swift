import WebWire

extension FuzzTargets {
    /// The decoder's two read-outs on the same wire (same role, same limit): the messages
    /// `WebSocketMessageReader` assembles, and the events with binary streamed and joined back
    /// (text assembled), each fed in its own chunking: the same messages, the same error or none.
    /// With text streamed too, the events' messages are a prefix of the reader's (a bad character
    /// is refused before the message ends) and they are refused whenever they differ.
    static let webSocketDifferential = FuzzTarget(
        "websocket-differential", "WebWire: the decoder read a message at a time vs its streamed events"
    ) { data in
        guard let input = WebSocketFuzzInput(data) else { return }
        let messages = WebSocketFuzzing.messageReader(input, pieces: [input.wire])
        let events = WebSocketFuzzing.decoderEvents(input, pieces: input.pieces, streamsText: false)
        FuzzCheck.expect(messages == events, "the read-outs disagree: \(messages) vs \(events)")
        if input.streamsText {
            let streamed = WebSocketFuzzing.decoderEvents(input, pieces: input.pieces, streamsText: true)
            FuzzCheck.expect(messages.messages.starts(with: streamed.messages), "streamed text gave other messages")
            if streamed.messages.count < messages.messages.count {
                FuzzCheck.expect(
                    streamed.error?.closeCode == WebSocketCloseCode.invalidPayload,
                    "streamed text stopped without a reason")
            }
            if streamed.error == nil { FuzzCheck.expect(streamed == messages, "streamed text gave other messages") }
        }
    }
}
