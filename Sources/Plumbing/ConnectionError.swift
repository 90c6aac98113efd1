import RelayProtocol

/// Why a connection (a relay room's WebSocket, a home road's TCP stream) or a call to the relay
/// failed. `kind` is stable, for code to branch on; `message` is for people ("relay refused
/// /register: 403 already registered").
public struct ConnectionError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The relay URL is not `https://host[:port]` (or `http://` on loopback).
        case invalidEndpoint
        /// No TCP connection: the name did not resolve, the connection was refused, or it timed
        /// out. Nothing answered.
        case unreachable
        /// An operation on an open connection took longer than its timeout.
        case timeout
        /// TLS failed: handshake, certificate verification, or a TLS error later.
        case tls
        /// The connection broke (reset, or ended without a WebSocket close).
        case connectionLost
        /// The relay answered with something that is not protocol v1 (bad HTTP, bad JSON, a
        /// frame out of place).
        case protocolViolation
        /// The relay answered an HTTP request (or the WebSocket upgrade) with an error status;
        /// `status` and `serverError` say which.
        case httpStatus
        /// Admission was refused: `serverError` is the Result's `error` (`bad signature`, …) and
        /// `close` the close that followed, when it arrived.
        case refused
        /// The relay closed the WebSocket (`close` says how) before admission completed, or a
        /// send found the connection ended.
        case closed
        /// The relay did not answer pings within the pong timeout.
        case keepaliveTimeout
        /// `send` found the outgoing queue full; nothing was queued.
        case backpressure
        /// `send` was given more than a relay frame may carry (256 KiB).
        case frameTooLarge
        /// `close()` was called while connecting.
        case cancelled
    }

    public let kind: Kind
    public let message: String
    /// The HTTP status, for `httpStatus` (and the upgrade's refusal).
    public let status: Int?
    /// The relay's own `error` text: the HTTP body's or the admission Result's.
    public let serverError: String?
    /// The WebSocket close the relay sent, when there was one.
    public let close: RelayClose?

    public init(
        _ kind: Kind, _ message: String, status: Int? = nil, serverError: String? = nil, close: RelayClose? = nil
    ) {
        self.kind = kind
        self.message = message
        self.status = status
        self.serverError = serverError
        self.close = close
    }

    public var description: String { message }

    /// Whether nothing answered at all (the relay is down or unreachable), as opposed to a relay
    /// that answered wrongly.
    public var isUnreachable: Bool { kind == .unreachable }
}
