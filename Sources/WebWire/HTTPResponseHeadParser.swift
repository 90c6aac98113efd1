/// The head of an HTTP/1.1 response (RFC 9112 §4): status line and header fields.
public struct HTTPResponseHead: Hashable, Sendable {
    /// "HTTP/1.1" or "HTTP/1.0".
    public var version: String
    public var status: Int
    /// The reason phrase as sent; may be empty.
    public var reason: String
    /// Header fields in order, names as sent.
    public var headers: [(name: String, value: String)]

    public init(version: String, status: Int, reason: String, headers: [(name: String, value: String)]) {
        self.version = version
        self.status = status
        self.reason = reason
        self.headers = headers
    }

    public static func == (lhs: HTTPResponseHead, rhs: HTTPResponseHead) -> Bool {
        lhs.version == rhs.version && lhs.status == rhs.status && lhs.reason == rhs.reason
            && lhs.headers.elementsEqual(rhs.headers) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(version)
        hasher.combine(status)
        hasher.combine(reason)
        for header in headers {
            hasher.combine(header.name)
            hasher.combine(header.value)
        }
    }
}

/// Why a response head could not be parsed.
public struct HTTPResponseHeadError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// Not a valid HTTP/1.x response head.
        case malformed
        /// No blank line within `HTTPResponseHeadParser.maximumHeadLength` bytes.
        case tooLarge
    }

    public var kind: Kind
    /// What was wrong, for logs.
    public var reason: String

    public init(kind: Kind, reason: String) {
        self.kind = kind
        self.reason = reason
    }

    public var description: String { "bad HTTP response head: \(reason)" }
}

/// An incremental parser for one response head, the client half of an HTTP upgrade. Bytes go in
/// with `append(_:)`; `next()` answers once the blank line has arrived, with the bytes that
/// followed it, since a server may send its first WebSocket frame right behind the 101.
public struct HTTPResponseHeadParser: Sendable {
    /// Longest head accepted (status line, headers, blank line).
    public static let maximumHeadLength = 8 * 1024

    private var buffer: [UInt8] = []
    /// How far the search for the blank line has got, so byte-at-a-time input stays linear.
    private var scanned = 0
    private var done = false

    public init() {}

    /// Adds received bytes; ignored once `next()` has answered.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard !done else { return }
        buffer.append(contentsOf: bytes)
    }

    /// The head and every byte appended after it, or nil while more bytes are needed. Answers
    /// (or throws) once; later calls return nil.
    public mutating func next() throws(HTTPResponseHeadError) -> (head: HTTPResponseHead, leftover: [UInt8])? {
        guard !done else { return nil }
        var end: Int?
        var index = max(scanned, 3)
        while index < buffer.count {
            if buffer[index] == 0x0A && buffer[index - 1] == 0x0D && buffer[index - 2] == 0x0A
                && buffer[index - 3] == 0x0D
            {
                end = index + 1
                break
            }
            index += 1
        }
        scanned = index
        guard let end else {
            guard buffer.count < Self.maximumHeadLength else {
                done = true
                throw HTTPResponseHeadError(
                    kind: .tooLarge, reason: "no end of head within \(Self.maximumHeadLength) bytes")
            }
            return nil
        }
        done = true
        defer { buffer = [] }
        guard end <= Self.maximumHeadLength else {
            throw HTTPResponseHeadError(kind: .tooLarge, reason: "head longer than \(Self.maximumHeadLength) bytes")
        }
        let head = try Self.parse(buffer[..<end])
        return (head, Array(buffer[end...]))
    }

    private static func parse(_ head: ArraySlice<UInt8>) throws(HTTPResponseHeadError) -> HTTPResponseHead {
        let lines = try HTTPHeadLines.split(head)
        // status-line = HTTP-version SP status-code SP [ reason-phrase ] (RFC 9112 §4); a missing
        // final SP is tolerated.
        let statusLine = lines[0]
        guard statusLine.count >= 12, statusLine.starts(with: "HTTP/1.".utf8) else {
            throw malformed("status line does not start with HTTP/1.x")
        }
        let base = statusLine.startIndex
        let versionDigit = statusLine[base + 7]
        guard versionDigit == UInt8(ascii: "0") || versionDigit == UInt8(ascii: "1"), statusLine[base + 8] == 0x20
        else {
            throw malformed("unsupported HTTP version")
        }
        var status = 0
        for byte in statusLine[(base + 9)..<(base + 12)] {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { throw malformed("bad status code") }
            status = status * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard status >= 100 else { throw malformed("bad status code") }
        var reason: ArraySlice<UInt8> = []
        if statusLine.count > 12 {
            guard statusLine[base + 12] == 0x20 else { throw malformed("bad status code") }
            reason = statusLine[(base + 13)...]
            guard reason.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else {
                throw malformed("control character in reason phrase")
            }
        }
        guard let headers = HTTPHeadLines.fields(lines[1...]) else { throw malformed("bad header field") }
        return HTTPResponseHead(
            version: String(decoding: statusLine[base..<(base + 8)], as: UTF8.self), status: status,
            reason: String(decoding: reason, as: UTF8.self), headers: headers)
    }

    private static func malformed(_ reason: String) -> HTTPResponseHeadError {
        HTTPResponseHeadError(kind: .malformed, reason: reason)
    }
}

/// Line and field splitting shared by the response parser (RFC 9112 §2.2, §5).
enum HTTPHeadLines {
    /// The lines of a head ending in CRLF CRLF, without the final empty line; every line must end
    /// in CRLF and contain no bare CR or LF.
    static func split(_ head: ArraySlice<UInt8>) throws(HTTPResponseHeadError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var index = head.startIndex
        while index < head.endIndex {
            if head[index] == 0x0D {
                guard index + 1 < head.endIndex, head[index + 1] == 0x0A else {
                    throw HTTPResponseHeadError(kind: .malformed, reason: "bare CR")
                }
                lines.append(head[start..<index])
                index += 2
                start = index
            } else if head[index] == 0x0A {
                throw HTTPResponseHeadError(kind: .malformed, reason: "bare LF")
            } else {
                index += 1
            }
        }
        guard lines.count >= 2, lines.last?.isEmpty == true else {
            throw HTTPResponseHeadError(kind: .malformed, reason: "empty head")
        }
        lines.removeLast()
        return lines
    }

    /// `name: value` lines with token names and trimmed values; nil if any line is not one
    /// (including obsolete line folding, which starts with whitespace).
    static func fields(_ lines: ArraySlice<ArraySlice<UInt8>>) -> [(name: String, value: String)]? {
        var fields: [(name: String, value: String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { return nil }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else { return nil }
            var value = line[(colon + 1)...].drop { $0 == 0x20 || $0 == 0x09 }
            guard value.allSatisfy({ $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }) else { return nil }
            while let last = value.last, last == 0x20 || last == 0x09 { value.removeLast() }
            fields.append((String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self)))
        }
        return fields
    }

    /// RFC 9110 tchar.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Every value of the fields named `name` (case-insensitive), in order.
    static func values(_ name: String, in headers: [(name: String, value: String)]) -> [String] {
        let wanted = name.lowercased()
        return headers.filter { $0.name.lowercased() == wanted }.map(\.value)
    }

    /// The comma-separated tokens of every field named `name`, trimmed and lowercased.
    static func tokens(_ name: String, in headers: [(name: String, value: String)]) -> [String] {
        values(name, in: headers).flatMap { value in
            value.split(separator: ",").map { token in
                var token = token
                while token.first == " " || token.first == "\t" { token.removeFirst() }
                while token.last == " " || token.last == "\t" { token.removeLast() }
                return token.lowercased()
            }
        }
    }
}
