/// Where a Redis server is, from the URL an operator gives (`--store`, `RELAY_REDIS_URL`):
///
/// - `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`: TCP, port 6379 and database 0 by default;
///   HOST is a name, an IPv4 address or a bracketed IPv6 address. A password (and a user, for
///   Redis 6 ACLs) is sent with `AUTH`; `%XX` escapes in them are decoded.
/// - `unix:///PATH[?db=DB]`: a Unix socket.
///
/// `description` never shows the password.
public struct RedisAddress: Sendable, Hashable, CustomStringConvertible {
    public enum Endpoint: Sendable, Hashable {
        case tcp(host: String, port: Int)
        case unix(path: String)
    }

    public var endpoint: Endpoint
    public var database: Int
    public var user: String?
    public var password: String?

    /// The longest URL accepted.
    public static let maximumLength = 1024
    /// The default port of Redis.
    public static let defaultPort = 6379

    public init(endpoint: Endpoint, database: Int = 0, user: String? = nil, password: String? = nil) {
        self.endpoint = endpoint
        self.database = database
        self.user = user
        self.password = password
    }

    /// Parses a URL; the error says what is wrong with it (without repeating a password).
    public init(url text: String) throws(RelayStoreError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw RelayStoreError("Redis URL is longer than \(Self.maximumLength) bytes")
        }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw RelayStoreError("Redis URL has a space, a control character or a non-ASCII byte")
        }
        if text.hasPrefix("unix://") {
            try self.init(unixURL: String(text.dropFirst("unix://".count)))
        } else if text.hasPrefix("redis://") {
            try self.init(tcpURL: String(text.dropFirst("redis://".count)))
        } else {
            throw RelayStoreError("Redis URL must start with redis:// or unix:// (redis://HOST:PORT/DB)")
        }
    }

    private init(unixURL rest: String) throws(RelayStoreError) {
        var path = Substring(rest)
        var database = 0
        if let question = path.firstIndex(of: "?") {
            let query = path[path.index(after: question)...]
            path = path[..<question]
            guard query.hasPrefix("db=") else { throw RelayStoreError("Redis unix URL takes only ?db=N") }
            database = try Self.database(query.dropFirst(3))
        }
        guard path.hasPrefix("/"), path.count > 1 else {
            throw RelayStoreError("Redis unix URL needs an absolute socket path: unix:///run/redis/redis.sock")
        }
        self.init(endpoint: .unix(path: String(path)), database: database)
    }

    private init(tcpURL rest: String) throws(RelayStoreError) {
        // The authority ends at the first slash; only there can credentials be.
        var remainder = Substring(rest)
        var path: Substring = ""
        if let slash = remainder.firstIndex(of: "/") {
            path = remainder[remainder.index(after: slash)...]
            remainder = remainder[..<slash]
        }
        var user: String?
        var password: String?
        if let at = remainder.lastIndex(of: "@") {
            let userinfo = remainder[..<at]
            remainder = remainder[remainder.index(after: at)...]
            if let colon = userinfo.firstIndex(of: ":") {
                let name = try Self.decode(userinfo[..<colon], "user")
                user = name.isEmpty ? nil : name
                password = try Self.decode(userinfo[userinfo.index(after: colon)...], "password")
            } else {
                // redis://PASSWORD@HOST, as redis-cli's -u reads it.
                password = try Self.decode(userinfo, "password")
            }
        }
        var database = 0
        if !path.isEmpty { database = try Self.database(path) }
        let host: Substring
        var portText: Substring?
        if remainder.hasPrefix("[") {
            guard let close = remainder.firstIndex(of: "]") else {
                throw RelayStoreError("Redis URL has an IPv6 address without its closing ]")
            }
            host = remainder[remainder.index(after: remainder.startIndex)..<close]
            let after = remainder[remainder.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RelayStoreError("Redis URL has text after its IPv6 address") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else {
                throw RelayStoreError("Redis URL has a malformed IPv6 address")
            }
        } else {
            if let colon = remainder.firstIndex(of: ":") {
                host = remainder[..<colon]
                portText = remainder[remainder.index(after: colon)...]
            } else {
                host = remainder
            }
            guard !host.isEmpty, host.count <= 253,
                host.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
            else { throw RelayStoreError("Redis URL needs a host name or address: redis://HOST:PORT/DB") }
        }
        var port = Self.defaultPort
        if let portText {
            guard let value = Self.number(portText, digits: 5), (1...65535).contains(value) else {
                throw RelayStoreError("Redis URL port must be 1–65535")
            }
            port = value
        }
        self.init(endpoint: .tcp(host: String(host), port: port), database: database, user: user, password: password)
    }

    private static func database(_ text: Substring) throws(RelayStoreError) -> Int {
        // Redis numbers its databases from 0; servers have 16 unless configured otherwise.
        guard let value = number(text, digits: 5) else {
            throw RelayStoreError("Redis URL database must be a number (redis://HOST:PORT/0)")
        }
        return value
    }

    private static func number(_ text: Substring, digits: Int) -> Int? {
        guard !text.isEmpty, text.count <= digits, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int(text)
    }

    /// Decodes `%XX` escapes (userinfo may hold any byte that way).
    private static func decode(_ text: Substring, _ what: String) throws(RelayStoreError) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(Self.hexValue), let low = iterator.next().flatMap(Self.hexValue)
            else { throw RelayStoreError("Redis URL \(what) has a malformed %-escape") }
            bytes.append(high << 4 | low)
        }
        guard let decoded = String(validating: bytes, as: UTF8.self) else {
            throw RelayStoreError("Redis URL \(what) is not UTF-8 once decoded")
        }
        guard bytes.allSatisfy({ $0 >= 0x20 && $0 != 0x7F }) else {
            throw RelayStoreError("Redis URL \(what) has a control character once decoded")
        }
        return decoded
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    /// `%XX` for every byte of a user name that is not unreserved in a URL, so the description
    /// reads back as the same user.
    private static func escape(_ text: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        let digits = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The URL again, the password shown as `***`.
    public var description: String {
        switch endpoint {
        case .tcp(let host, let port):
            let shownHost = host.contains(":") ? "[\(host)]" : host
            let credentials = password == nil ? "" : "\(Self.escape(user ?? "")):***@"
            return "redis://\(credentials)\(shownHost):\(port)/\(database)"
        case .unix(let path):
            return "unix://\(path)?db=\(database)"
        }
    }
}
