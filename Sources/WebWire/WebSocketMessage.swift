/// Which end of a WebSocket connection we are (RFC 6455 §5.1). It decides masking: a client masks
/// every frame it sends, a server masks none, and each side refuses frames masked the wrong way.
public enum WebSocketRole: Hashable, Sendable {
    /// We accepted the connection; the peer is a client, so its frames must be masked.
    case server
    /// We opened the connection; the peer is a server, so its frames must not be masked.
    case client
}

/// Frame opcodes (RFC 6455 §5.2). The reserved values 3-7 and 11-15 have no case.
public enum WebSocketOpcode: UInt8, Hashable, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 payload bytes, never fragmented (RFC 6455 §5.5).
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One complete message: a data message with its fragments joined, or a control frame.
public enum WebSocketMessage: Hashable, Sendable {
    /// A text message, already validated as UTF-8.
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame: `code` is nil when the payload was empty (then `reason` is empty too).
    case close(code: UInt16?, reason: String)
}
