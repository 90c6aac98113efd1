/// A violation of RFC 6455 by the peer. The connection is done: send a close frame with
/// `closeCode` (and `reason` if wanted), then close the transport.
public struct WebSocketProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The close code to answer with (1002, 1007 or 1009 from the decoder).
    public var closeCode: UInt16
    /// A short diagnostic, safe to send as the close reason.
    public var reason: String

    public init(closeCode: UInt16, reason: String) {
        self.closeCode = closeCode
        self.reason = reason
    }

    public var description: String { "WebSocket protocol error \(closeCode): \(reason)" }

    static func protocolError(_ reason: String) -> WebSocketProtocolError {
        WebSocketProtocolError(closeCode: WebSocketCloseCode.protocolError, reason: reason)
    }
}

/// Close status codes (RFC 6455 §7.4).
public enum WebSocketCloseCode {
    public static let normalClosure: UInt16 = 1000
    public static let goingAway: UInt16 = 1001
    public static let protocolError: UInt16 = 1002
    public static let unsupportedData: UInt16 = 1003
    public static let invalidPayload: UInt16 = 1007
    public static let policyViolation: UInt16 = 1008
    public static let messageTooBig: UInt16 = 1009
    public static let internalError: UInt16 = 1011

    /// Whether `code` may appear in a close frame on the wire. 1004-1006 and 1015 are reserved
    /// for local use, 1012-2999 are unassigned or reserved for the protocol, 3000-4999 belong to
    /// registered names and applications (RFC 6455 §7.4.1-§7.4.2).
    public static func isValidOnWire(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}
