import PeerGate

/// The head of an HTTP/1.1 request (RFC 9112): request line and header fields.
public struct HTTPRequestHead: Hashable, Sendable {
    public var method: String
    /// The request target as sent (origin form: starts with "/").
    public var target: String
    /// "HTTP/1.1" or "HTTP/1.0".
    public var version: String
    /// Header fields in order, names as sent.
    public var headers: [(name: String, value: String)]

    public init(method: String, target: String, version: String, headers: [(name: String, value: String)]) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target without its query.
    public var path: Substring { target.prefix { $0 != "?" } }

    /// The values of every field with this name (case-insensitive), in order.
    public func values(named name: String) -> [String] {
        headers.compactMap { $0.name.caseInsensitiveEquals(name) ? $0.value : nil }
    }

    public static func == (lhs: HTTPRequestHead, rhs: HTTPRequestHead) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target && lhs.version == rhs.version
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
        hasher.combine(version)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
    }
}

/// An incremental parser for one request head. Bytes go in with `append(_:)`; `next()` answers
/// once the blank line has arrived or the input can no longer be a valid head.
public struct HTTPRequestHeadParser: Sendable {
    /// Longest head accepted (request line, headers, blank line); beyond it the answer is 431.
    public static let maximumHeadLength = 8 * 1024

    public enum Result: Hashable, Sendable {
        case head(HTTPRequestHead)
        /// Not a valid HTTP/1.x request head: answer 400.
        case malformed
        /// A version other than HTTP/1.0 and HTTP/1.1: answer 505.
        case unsupportedVersion
        /// No blank line within `maximumHeadLength` bytes: answer 431.
        case tooLarge
    }

    private var buffer: [UInt8] = []
    /// How far the search for the blank line has got, so byte-at-a-time input stays linear.
    private var scanned = 0
    private var done = false
    /// Once `next()` returned a head: its length in bytes, blank line included. Bytes the caller
    /// appended beyond it (a body, or a first WebSocket frame) start there.
    public private(set) var headLength: Int?

    public init() {}

    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard !done else { return }
        buffer.append(contentsOf: bytes.prefix(Self.maximumHeadLength + 4 - buffer.count))
    }

    /// The parsed head, or a verdict; nil while more bytes are needed. Answers once.
    public mutating func next() -> Result? {
        guard !done else { return nil }
        let found = Self.blankLine(in: buffer, from: scanned)
        scanned = max(scanned, buffer.count)
        guard let end = found else {
            if buffer.count > Self.maximumHeadLength {
                done = true
                return .tooLarge
            }
            return nil
        }
        done = true
        guard end <= Self.maximumHeadLength else { return .tooLarge }
        let result = Self.parse(buffer[..<end])
        if case .head = result { headLength = end }
        return result
    }

    /// The index just past the first CRLF CRLF that ends at or after `start` (the bytes before
    /// it were searched already).
    private static func blankLine(in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in max(start, 3)..<bytes.count
        where bytes[index] == 0x0a && bytes[index - 1] == 0x0d && bytes[index - 2] == 0x0a && bytes[index - 3] == 0x0d {
            return index + 1
        }
        return nil
    }

    private static func parse(_ head: ArraySlice<UInt8>) -> Result {
        // Every line ends in CRLF; a bare CR or LF inside a line is refused.
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 0x0d {
                guard index + 1 < head.endIndex, head[index + 1] == 0x0a else { return .malformed }
                lines.append(head[start..<index])
                index += 2
                start = index
            } else if head[index] == 0x0a {
                return .malformed
            } else {
                index += 1
            }
        }
        guard lines.count >= 2, lines.last?.isEmpty == true else { return .malformed }
        let requestLine = lines[0].split(separator: 0x20, omittingEmptySubsequences: false)
        guard requestLine.count == 3, !requestLine[0].isEmpty, requestLine[0].allSatisfy(isTokenByte),
            requestLine[1].first == UInt8(ascii: "/"), requestLine[1].allSatisfy({ $0 > 0x20 && $0 < 0x7f })
        else { return .malformed }
        let version = String(decoding: requestLine[2], as: UTF8.self)
        guard version.hasPrefix("HTTP/") else { return .malformed }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else { return .unsupportedVersion }
        var headers: [(name: String, value: String)] = []
        for line in lines[1..<(lines.count - 1)] {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return .malformed }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return .malformed }
            let value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7f) }) else { return .malformed }
            var trimmed = Array(value)
            while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed.removeLast() }
            headers.append((String(decoding: name, as: UTF8.self), String(decoding: trimmed, as: UTF8.self)))
        }
        // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host field gets a 400.
        if version == "HTTP/1.1" && headers.filter({ $0.name.lowercased() == "host" }).count != 1 {
            return .malformed
        }
        return .head(
            HTTPRequestHead(
                method: String(decoding: requestLine[0], as: UTF8.self),
                target: String(decoding: requestLine[1], as: UTF8.self), version: version, headers: headers))
    }

    /// RFC 9110 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

extension String {
    /// ASCII case-insensitive equality, for header names and tokens.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count
            && zip(utf8, other.utf8).allSatisfy { a, b in
                a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
            }
    }
}

/// A complete HTTP/1.1 response; it closes the connection unless `keepsAlive`.
public struct HTTPResponse: Hashable, Sendable {
    public var status: Int
    public var reason: String
    public var contentType: String?
    public var extraHeaders: [String] = []
    public var body: [UInt8]
    /// A HEAD response: headers (with the body's Content-Length) but no body.
    public var omitsBody = false
    /// The `Cache-Control` field: nothing is stored unless a response says otherwise.
    public var cacheControl = "no-store"
    /// The connection stays open for the client's next request (`Connection: keep-alive`): for
    /// the web client's files, which a page fetches by the dozen.
    public var keepsAlive = false

    public init(status: Int, reason: String, contentType: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.reason = reason
        self.contentType = contentType
        self.body = body
    }

    /// A plain-text error response.
    public static func error(_ status: Int, _ reason: String) -> HTTPResponse {
        HTTPResponse(
            status: status, reason: reason, contentType: "text/plain; charset=utf-8", body: Array("\(reason)\n".utf8))
    }

    /// The bytes on the wire: status line, Content-Length (of the body), Connection.
    public var bytes: [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        head += "Content-Length: \(body.count)\r\n"
        head += "Cache-Control: \(cacheControl)\r\n"
        for header in extraHeaders { head += "\(header)\r\n" }
        head += keepsAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n"
        return Array(head.utf8) + (omitsBody ? [] : body)
    }
}

/// `GET /status`: the one route every HTTP-speaking listener of the project mounts.
public enum StatusEndpoint {
    public static let path = "/status"

    /// The answer for a request to `/status` (GET or HEAD: the document; another method: 405),
    /// or nil when the request is for another path, which the caller routes.
    public static func response(to head: HTTPRequestHead, status: PeerGateStatus) -> HTTPResponse? {
        guard head.path == path else { return nil }
        switch head.method {
        case "GET", "HEAD":
            var response = HTTPResponse(status: 200, reason: "OK", contentType: "application/json", body: status.json())
            response.omitsBody = head.method == "HEAD"
            return response
        default:
            var response = HTTPResponse.error(405, "Method Not Allowed")
            response.extraHeaders = ["Allow: GET, HEAD"]
            return response
        }
    }

    /// The answer for a parser verdict on a listener that serves only `/status` (other paths: 404).
    public static func response(to result: HTTPRequestHeadParser.Result, status: PeerGateStatus) -> HTTPResponse {
        switch result {
        case .head(let head):
            var response = response(to: head, status: status) ?? .error(404, "Not Found")
            response.omitsBody = head.method == "HEAD"
            return response
        case .malformed: return .error(400, "Bad Request")
        case .unsupportedVersion: return .error(505, "HTTP Version Not Supported")
        case .tooLarge: return .error(431, "Request Header Fields Too Large")
        }
    }
}
