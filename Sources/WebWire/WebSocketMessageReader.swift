/// An RFC 6455 decoder read a message at a time: bytes go in with `append(_:)`, whole messages
/// come out of `next()`, fragments joined and control frames (which may arrive between fragments)
/// returned on their own. It does no I/O and never answers pings or closes itself.
///
/// A thin layer over the decoder under `WebSocketDecoder`'s events (`WebSocketDecoderCore`), with
/// nothing streamed: it holds the bytes not yet decoded and decodes only up to the next message,
/// so each frame header is checked when `next()` reaches it, against the limit in force then. A
/// frame whose header announces more than `maximumMessageSize` fails before any of its payload is
/// kept.
public struct WebSocketMessageReader: Sendable {
    /// Which end we are; it decides which masking the peer's frames must have.
    public let role: WebSocketRole
    /// Largest data message (all its fragments together) accepted, checked against each frame's
    /// header. It may change at any time and applies from the next frame header on.
    public var maximumMessageSize: Int

    /// Once the buffer is drained, a capacity beyond this is given back rather than kept for reuse.
    private static let retainedBufferCapacity = 64 * 1024

    private var core = WebSocketDecoderCore()
    /// Bytes appended and not yet decoded: the frames the caller has not asked for yet.
    private var buffer: [UInt8] = []
    private var readIndex = 0

    private struct Settings: WebSocketDecoderSettings {
        let role: WebSocketRole
        let maximumMessageSize: Int
        var streaming: WebSocketDecoder.Streaming { .none }
    }

    public init(role: WebSocketRole, maximumMessageSize: Int) {
        precondition(maximumMessageSize >= 0, "maximumMessageSize must not be negative")
        self.role = role
        self.maximumMessageSize = maximumMessageSize
    }

    /// Bytes held awaiting a complete message: undecoded input plus the partial header, message
    /// and control frame.
    public var bufferedByteCount: Int { buffer.count - readIndex + core.bufferedByteCount }

    /// Adds bytes received from the peer. Nothing is checked until `next()`.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard core.failure == nil, !bytes.isEmpty else { return }
        if readIndex == buffer.count {
            resetBuffer()
        } else if readIndex >= buffer.count - readIndex {
            // At least half the buffer is consumed: moving the rest down is paid for by the bytes consumed.
            buffer.removeSubrange(..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes received from the peer.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next complete message, or nil when more bytes are needed. After a throw the connection
    /// is unusable and every later call throws the same error.
    public mutating func next() throws(WebSocketProtocolError) -> WebSocketMessage? {
        guard readIndex < buffer.count else {
            if let failure = core.failure { throw failure }
            return nil
        }
        let settings = Settings(role: role, maximumMessageSize: maximumMessageSize)
        let start = readIndex
        var message: WebSocketMessage?
        // Moved out while the core decodes it: a closure changing `core` may not overlap an access to `buffer`.
        var unread: [UInt8] = []
        swap(&unread, &buffer)
        let decoded = unread.withUnsafeMutableBytes { all in
            Result { () throws(WebSocketProtocolError) -> Int in
                try core.decode(UnsafeMutableRawBufferPointer(rebasing: all[start...]), settings) { event in
                    // Nothing is streamed, so every event is a message; the bytes after it wait.
                    guard case .message(let complete) = event else { return true }
                    message = complete
                    return false
                }
            }
        }
        swap(&unread, &buffer)
        switch decoded {
        case .success(let used):
            readIndex += used
            if readIndex == buffer.count { resetBuffer() }
            return message
        case .failure(let error):
            buffer = []
            readIndex = 0
            throw error
        }
    }

    private mutating func resetBuffer() {
        readIndex = 0
        guard !buffer.isEmpty else { return }
        buffer.removeAll(keepingCapacity: buffer.capacity <= Self.retainedBufferCapacity)
    }
}
