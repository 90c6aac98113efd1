/// An RFC 6455 decoder read as events, for relays: bytes are decoded in place and what they hold
/// comes out in order. It does no I/O and never answers pings or closes itself.
///
/// A data message is either streamed or assembled, as `streaming` chooses at its first frame.
/// Streamed payload is unmasked where it lies in the caller's buffer and handed out chunk by chunk
/// as it arrives (`dataFrameStart`, `dataPayload`…, `dataFrameEnd`), so a relay can forward a
/// frame while it is still arriving, with no copy and no per-message allocation; streamed text is
/// checked for UTF-8 as it passes (a chunk holding an invalid byte is not handed out). Assembled
/// messages and control frames come out whole as `.message`, checked exactly as
/// `WebSocketMessageReader` checks them: the same decoder (`WebSocketDecoderCore`) is under both.
///
/// A class, owned by one thread: the handler may change `maximumMessageSize` and `streaming` (a
/// relay raises the one and streams text too when admission succeeds), and must not read
/// `bufferedByteCount` or decode. The limit applies from the next frame header, the streaming
/// from the next message's first frame, even within the same call.
public final class WebSocketDecoder {
    /// Which data messages are streamed rather than assembled.
    public enum Streaming: Hashable, Sendable {
        /// Every data message is assembled into `.message`.
        case none
        /// Binary messages are streamed, text messages assembled.
        case binary
        /// Binary and text messages are streamed.
        case binaryAndText
    }

    /// What the decoder finds in the bytes it is given.
    public enum Event {
        /// A frame of a streamed data message begins: `opcode` is `.binary`, `.text` or
        /// `.continuation`, `length` its payload size. Its payload follows in `dataPayload` events,
        /// then `dataFrameEnd`.
        case dataFrameStart(opcode: WebSocketOpcode, fin: Bool, length: Int)
        /// Unmasked payload bytes of the current streamed frame, never empty; valid only during
        /// the call.
        case dataPayload(UnsafeRawBufferPointer)
        case dataFrameEnd
        /// A complete assembled data message, or a control frame.
        case message(WebSocketMessage)
    }

    /// Which end we are; it decides which masking the peer's frames must have.
    public let role: WebSocketRole
    /// Largest data message (all its fragments together), checked against each frame's header.
    public var maximumMessageSize: Int
    /// Which data messages are streamed rather than assembled.
    public var streaming: Streaming
    private var core = WebSocketDecoderCore()

    public init(role: WebSocketRole, maximumMessageSize: Int, streaming: Streaming) {
        precondition(maximumMessageSize >= 0, "maximumMessageSize must not be negative")
        self.role = role
        self.maximumMessageSize = maximumMessageSize
        self.streaming = streaming
    }

    /// Bytes held for an incomplete header, assembled message or control frame.
    public var bufferedByteCount: Int { core.bufferedByteCount }

    /// Decodes `bytes` in place (streamed payload is unmasked where it lies), calling `handler`
    /// for each event in order, and returns how many bytes it used: all of them, unless `handler`
    /// returned false to stop. To resume after a stop, call again with the bytes not used, even
    /// none: an event owed before them (the end of a frame whose last payload came with the stop)
    /// comes then. After a throw, every later call throws the same error.
    @discardableResult
    public func decode(
        _ bytes: UnsafeMutableRawBufferPointer, _ handler: (Event) -> Bool
    ) throws(WebSocketProtocolError) -> Int {
        try core.decode(bytes, self, handler)
    }
}
