import HerdrCrypto
import PeerGateListener

/// Why an opening handshake was refused.
///
/// On the server side `status` is what to answer (400, or 426 for an unsupported version) and
/// `response` is the answer itself. On the client side `status` is what the server answered.
public struct WebSocketHandshakeError: Error, Hashable, Sendable, CustomStringConvertible {
    public var status: Int
    /// A short diagnostic.
    public var reason: String
    /// Header lines ("Name: value") the refusal must carry, such as `Sec-WebSocket-Version: 13`.
    public var extraHeaders: [String]

    public init(status: Int, reason: String, extraHeaders: [String] = []) {
        self.status = status
        self.reason = reason
        self.extraHeaders = extraHeaders
    }

    public var description: String { "WebSocket handshake refused (\(status)): \(reason)" }

    /// The server's refusal: the status with its standard phrase, the diagnostic as the body.
    public var response: HTTPResponse {
        let phrase = status == 426 ? "Upgrade Required" : "Bad Request"
        var response = HTTPResponse(
            status: status, reason: phrase, contentType: "text/plain; charset=utf-8", body: Array("\(reason)\n".utf8))
        response.extraHeaders = extraHeaders
        return response
    }
}

/// The opening handshake of RFC 6455 §4: an HTTP/1.1 GET with `Upgrade: websocket`, answered by
/// `101 Switching Protocols`. No subprotocols or extensions are ever negotiated.
public enum WebSocketHandshake {
    /// The GUID both sides append to the key (RFC 6455 §1.3).
    public static let keyGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
    /// The only protocol version there is (RFC 6455 §4.1).
    public static let version = "13"

    /// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`: base64(SHA-1(key + GUID)).
    public static func acceptValue(forKey key: String) -> String {
        Base64.encode(SHA1.hash(Array((key + keyGUID).utf8)))
    }

    // MARK: Server

    /// Checks an upgrade request (RFC 6455 §4.2.1) and returns the `Sec-WebSocket-Accept` value
    /// to answer with, or the refusal to send.
    public static func validateUpgrade(_ head: HTTPRequestHead) -> Result<String, WebSocketHandshakeError> {
        func refuse(_ reason: String) -> Result<String, WebSocketHandshakeError> {
            .failure(WebSocketHandshakeError(status: 400, reason: reason))
        }
        guard head.method == "GET" else { return refuse("a WebSocket upgrade must be a GET") }
        guard head.version == "HTTP/1.1" else { return refuse("a WebSocket upgrade needs HTTP/1.1") }
        guard HTTPHeadLines.tokens("Upgrade", in: head.headers).contains("websocket") else {
            return refuse("Upgrade: websocket is missing")
        }
        guard HTTPHeadLines.tokens("Connection", in: head.headers).contains("upgrade") else {
            return refuse("Connection: Upgrade is missing")
        }
        // §4.2.2: a version we do not speak gets 426 and the version we do.
        guard HTTPHeadLines.values("Sec-WebSocket-Version", in: head.headers) == [version] else {
            return .failure(
                WebSocketHandshakeError(
                    status: 426, reason: "Sec-WebSocket-Version must be 13",
                    extraHeaders: ["Sec-WebSocket-Version: \(version)"]))
        }
        let keys = HTTPHeadLines.values("Sec-WebSocket-Key", in: head.headers)
        guard keys.count == 1 else {
            return refuse(keys.isEmpty ? "Sec-WebSocket-Key is missing" : "Sec-WebSocket-Key is repeated")
        }
        guard let nonce = Base64.decode(keys[0]), nonce.count == 16 else {
            return refuse("Sec-WebSocket-Key is not 16 bytes of base64")
        }
        return .success(acceptValue(forKey: keys[0]))
    }

    /// The 101 answer completing the handshake; frames may follow it directly.
    public static func serverResponse(accept: String) -> [UInt8] {
        Array(
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(accept)\r\n\r\n").utf8)
    }

    // MARK: Client

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes in base64 (RFC 6455 §4.1).
    public static func makeKey() -> String {
        Base64.encode(SecureRandom.bytes(16))
    }

    /// The upgrade request for `path` on `host` ("name" or "name:port"), with `extraHeaders` after
    /// the required fields. No argument may contain CR or LF.
    public static func clientRequest(
        host: String, path: String = "/", key: String, extraHeaders: [(String, String)] = []
    ) -> [UInt8] {
        let fields = [host, path, key] + extraHeaders.flatMap { [$0.0, $0.1] }
        precondition(
            fields.allSatisfy { !$0.utf8.contains(0x0D) && !$0.utf8.contains(0x0A) },
            "handshake fields must not contain CR or LF")
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        request += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: \(version)\r\n"
        for (name, value) in extraHeaders { request += "\(name): \(value)\r\n" }
        request += "\r\n"
        return Array(request.utf8)
    }

    /// Checks the server's answer to a request sent with `key` (RFC 6455 §4.1, client steps 1-5).
    public static func validateResponse(_ head: HTTPResponseHead, key: String) -> Result<Void, WebSocketHandshakeError>
    {
        func refuse(_ reason: String) -> Result<Void, WebSocketHandshakeError> {
            .failure(WebSocketHandshakeError(status: head.status, reason: reason))
        }
        guard head.status == 101 else { return refuse("expected 101, got \(head.status) \(head.reason)") }
        guard HTTPHeadLines.tokens("Upgrade", in: head.headers).contains("websocket") else {
            return refuse("Upgrade: websocket is missing")
        }
        guard HTTPHeadLines.tokens("Connection", in: head.headers).contains("upgrade") else {
            return refuse("Connection: Upgrade is missing")
        }
        guard HTTPHeadLines.values("Sec-WebSocket-Accept", in: head.headers) == [acceptValue(forKey: key)] else {
            return refuse("Sec-WebSocket-Accept does not match the key")
        }
        // We offer no extension, and the decoder refuses the reserved bits one would use.
        guard HTTPHeadLines.values("Sec-WebSocket-Extensions", in: head.headers).allSatisfy(\.isEmpty) else {
            return refuse("the server chose an extension that was not offered")
        }
        return .success(())
    }
}
