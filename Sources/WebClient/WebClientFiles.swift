import HerdrCrypto
import PeerGateListener

/// The web client's static files as `herdr-relay serve --web-client` serves them: read once at
/// start (`WebClientFiles.load(root:)`), held in memory, each with its SHA-256, so a request never
/// touches the disk. Pure: the rules of what may be served, the manifest hash, and the answer to
/// a GET or HEAD.
public struct WebClientFiles: Sendable {
    /// One file: its path below the root (`js/app.js`), bytes, SHA-256 (lowercase hex) and type.
    public struct File: Sendable, Hashable {
        public let path: String
        public let bytes: [UInt8]
        public let sha256: String
        public let contentType: String
    }

    /// At most this many bytes in all: the whole client stays small, and in memory.
    public static let maximumTotalBytes = 8 * 1024 * 1024
    /// At most this many files.
    public static let maximumFileCount = 512
    /// A path below the root is at most this many bytes, and this many directories deep.
    public static let maximumPathLength = 255
    public static let maximumDepth = 8
    /// Directories never served, wherever they are: the client's tests, their support and its
    /// benchmarks live beside it in the repository (Web/), and a package manager's folder.
    public static let excludedDirectories: Set<String> = ["test", "test-support", "bench", "node_modules"]
    /// The extensions served, with their types; any other file is skipped.
    public static let contentTypes: [String: String] = [
        "html": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
        "json": "application/json",
        "webmanifest": "application/manifest+json",
        "png": "image/png",
        "svg": "image/svg+xml",
        "ico": "image/x-icon",
        "txt": "text/plain; charset=utf-8",
    ]
    /// The file `/` names.
    public static let indexPath = "index.html"
    /// The page's scripts, styles, images and connections come from the relay's own origin only;
    /// nothing may frame it, and no form or `<base>` may send it elsewhere.
    public static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
        + "manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// The files by path below the root.
    public let files: [String: File]
    /// SHA-256 (lowercase hex) over every file's line `path NUL sha256hex LF`, the lines in
    /// bytewise order of their paths: what `docs/relay.md` shows how to recompute with sha256sum.
    public let manifestSHA256: String

    /// The files in path order.
    public var sortedFiles: [File] { files.values.sorted(by: Self.pathOrder) }

    /// Bytewise order of paths (`LC_ALL=C sort`'s).
    private static func pathOrder(_ a: File, _ b: File) -> Bool { a.path.utf8.lexicographicallyPrecedes(b.path.utf8) }

    /// Every byte served.
    public var totalBytes: Int { files.values.reduce(0) { $0 + $1.bytes.count } }

    /// Takes files as read (path below the root, bytes); checks every rule the loader follows, so
    /// no set of files breaking them can be served: servable paths, one `index.html`, the bounds.
    public init(_ entries: [(path: String, bytes: [UInt8])]) throws(WebClientFilesError) {
        guard entries.count <= Self.maximumFileCount else {
            throw WebClientFilesError(.tooMany, "more than \(Self.maximumFileCount) files")
        }
        var files: [String: File] = [:]
        var total = 0
        for (path, bytes) in entries {
            guard let type = Self.contentType(servablePath: path) else {
                throw WebClientFilesError(.badPath, "\(path) is not a path the relay serves")
            }
            guard files[path] == nil else { throw WebClientFilesError(.badPath, "\(path) twice") }
            total += bytes.count
            guard total <= Self.maximumTotalBytes else {
                throw WebClientFilesError(.tooLarge, "more than \(Self.maximumTotalBytes) bytes in all")
            }
            files[path] = File(path: path, bytes: bytes, sha256: Hex.encode(SHA256.hash(bytes)), contentType: type)
        }
        guard files[Self.indexPath] != nil else {
            throw WebClientFilesError(.noIndex, "no \(Self.indexPath), the page served at /")
        }
        self.files = files
        var manifest: [UInt8] = []
        for file in files.values.sorted(by: Self.pathOrder) {
            manifest += Array(file.path.utf8) + [0] + Array(file.sha256.utf8) + [0x0a]
        }
        manifestSHA256 = Hex.encode(SHA256.hash(manifest))
    }

    // MARK: - What may be served

    /// The type of a file at `path` (below the root, `/`-separated), or nil when it is never
    /// served: more than `maximumPathLength` bytes or `maximumDepth` directories, an empty
    /// segment, a segment starting with `.` (dotfiles, `.` and `..`) or holding anything but
    /// `A-Z a-z 0-9 . _ - ~ @ +`, a directory in `excludedDirectories`, an extension not in
    /// `contentTypes` (lowercase, as written).
    public static func contentType(servablePath path: String) -> String? {
        guard !path.isEmpty, path.utf8.count <= maximumPathLength else { return nil }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count <= maximumDepth + 1 else { return nil }
        for (index, segment) in segments.enumerated() {
            guard !segment.isEmpty, segment.first != ".", segment.utf8.allSatisfy(isNameByte) else { return nil }
            if index < segments.count - 1 && excludedDirectories.contains(String(segment)) { return nil }
        }
        guard let name = segments.last, let dot = name.lastIndex(of: ".") else { return nil }
        return contentTypes[String(name[name.index(after: dot)...])]
    }

    /// Whether a directory (its path below the root) may hold served files.
    public static func isServableDirectory(_ path: String) -> Bool {
        guard path.utf8.count <= maximumPathLength else { return false }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count <= maximumDepth else { return false }
        return segments.allSatisfy {
            !$0.isEmpty && $0.first != "." && $0.utf8.allSatisfy(isNameByte)
                && !excludedDirectories.contains(String($0))
        }
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: "._-~@+".utf8.contains(byte)
        }
    }

    /// The file a request path names (`/` is `index.html`), or nil. Each segment is
    /// percent-decoded on its own; an escape that is not two hex digits, or that decodes to `/`,
    /// `\` or NUL, or bytes that are not UTF-8, name nothing, and the decoded path must be one
    /// `contentType(servablePath:)` accepts.
    public func file(at requestPath: Substring) -> File? {
        guard requestPath.first == "/", requestPath.utf8.count <= 4 * Self.maximumPathLength else { return nil }
        if requestPath == "/" { return files[Self.indexPath] }
        var segments: [String] = []
        for raw in requestPath.dropFirst().split(separator: "/", omittingEmptySubsequences: false) {
            guard let segment = Self.percentDecoded(raw) else { return nil }
            segments.append(segment)
        }
        let path = segments.joined(separator: "/")
        guard Self.contentType(servablePath: path) != nil else { return nil }
        return files[path]
    }

    private static func percentDecoded(_ raw: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = raw.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            let decoded = high << 4 | low
            guard decoded != UInt8(ascii: "/"), decoded != UInt8(ascii: "\\"), decoded != 0 else { return nil }
            bytes.append(decoded)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    // MARK: - Answers

    /// The answer to a GET or HEAD for a static file: 200 with the file (HEAD: its headers), 304
    /// when `If-None-Match` names its ETag (the file's SHA-256), 404 `not found` for a path that
    /// names no served file.
    public func response(to head: HTTPRequestHead) -> HTTPResponse {
        var response = fileResponse(to: head)
        // A page loads its modules one request after another on a few connections: each new
        // connection would cost a TCP and a TLS handshake, round trips a phone's link makes long.
        response.keepsAlive = Self.keepsAlive(head)
        return response
    }

    /// Whether the client lets the connection stay open: HTTP/1.1's default, unless it says
    /// `Connection: close` (a token of any `Connection` field, in any case); HTTP/1.0 closes.
    static func keepsAlive(_ head: HTTPRequestHead) -> Bool {
        head.version == "HTTP/1.1"
            && !head.values(named: "connection").contains { value in
                value.split(separator: ",").contains { $0.trimmingSpaces.lowercased() == "close" }
            }
    }

    private func fileResponse(to head: HTTPRequestHead) -> HTTPResponse {
        guard let file = file(at: head.path) else {
            var missing = HTTPResponse(
                status: 404, reason: "Not Found", contentType: "text/plain", body: Array("not found".utf8))
            missing.extraHeaders = ["X-Content-Type-Options: nosniff"]
            missing.omitsBody = head.method == "HEAD"
            return missing
        }
        let tag = "\"\(file.sha256)\""
        let unchanged = head.values(named: "if-none-match").contains { Self.matches(tag, list: $0) }
        var response =
            unchanged
            ? HTTPResponse(status: 304, reason: "Not Modified", contentType: nil, body: file.bytes)
            : HTTPResponse(status: 200, reason: "OK", contentType: file.contentType, body: file.bytes)
        // A 304 and a HEAD say the representation's length (RFC 9110 8.6) and send none of it.
        response.omitsBody = unchanged || head.method == "HEAD"
        response.cacheControl = "no-cache"
        response.extraHeaders = [
            "ETag: \(tag)", "Content-Security-Policy: \(Self.contentSecurityPolicy)",
            "X-Content-Type-Options: nosniff", "Referrer-Policy: no-referrer",
        ]
        return response
    }

    /// Whether an `If-None-Match` value (`*`, or a list of entity tags, weak ones compared weakly)
    /// names `tag`.
    static func matches(_ tag: String, list: String) -> Bool {
        list.split(separator: ",").contains { entry in
            var candidate = entry.trimmingSpaces
            if candidate == "*" { return true }
            if candidate.hasPrefix("W/") { candidate = candidate.dropFirst(2) }
            return candidate == tag
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}

/// Why the web client's files cannot be served: a stable `kind` and a message naming the problem.
public struct WebClientFilesError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The root is missing or not a directory.
        case noRoot
        /// The root has no `index.html`.
        case noIndex
        /// More than `WebClientFiles.maximumTotalBytes`.
        case tooLarge
        /// More than `WebClientFiles.maximumFileCount` files.
        case tooMany
        /// A path that cannot be served was given.
        case badPath
        /// Reading failed.
        case unreadable
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
