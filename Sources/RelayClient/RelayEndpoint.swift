import Glibc
import Plumbing

/// Where a relay is, parsed the way the iTerm2 phone parses the `relay=` of a pairing QR:
/// `https://host[:port]` and nothing else (no user info, no path beyond `/`, no query or
/// fragment). `http://` is accepted only for a loopback host, for tests and local relays.
///
/// `origin` is what clients bind into every join and delete signature; it must equal the relay's
/// configured origin. Where the TCP connection goes can be overridden (`connecting(toHost:…)`),
/// so a test can sign for `https://relay.test` while talking plain TCP to 127.0.0.1.
public struct RelayEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// `https://host` or `https://host:port` (default port dropped), host lowercased, IPv6 in brackets.
    public let origin: String
    /// The host, lowercased; an IPv6 address without brackets.
    public let host: String
    public let port: UInt16
    /// Whether the URL's scheme is https.
    public let usesTLS: Bool

    /// Where the TCP connection goes; the URL's host and port unless overridden.
    public private(set) var connectHost: String
    public private(set) var connectPort: UInt16
    /// Whether the connection speaks TLS; the URL's scheme unless overridden. The certificate is
    /// always checked against `host`, the origin's host.
    public private(set) var connectUsesTLS: Bool
    /// PEM certificates to trust instead of the system's store (a private CA, tests).
    public var trustedCertificatesFile: String?

    /// Parses `text`; throws `invalidEndpoint` saying what is wrong.
    public init(parsing text: String) throws(ConnectionError) {
        func invalid(_ why: String) -> ConnectionError {
            ConnectionError(.invalidEndpoint, "bad relay URL \(text): \(why)")
        }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw invalid("only printable ASCII without spaces is allowed")
        }
        let lowered = text.lowercased()
        let secure: Bool
        let rest: Substring
        if lowered.hasPrefix("https://") {
            secure = true
            rest = text.dropFirst(8)
        } else if lowered.hasPrefix("http://") {
            secure = false
            rest = text.dropFirst(7)
        } else {
            throw invalid("the scheme must be https")
        }
        guard !rest.contains("?") else { throw invalid("a query is not allowed") }
        guard !rest.contains("#") else { throw invalid("a fragment is not allowed") }
        let authority: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            guard rest[slash...] == "/" else { throw invalid("a path is not allowed") }
        } else {
            authority = rest
        }
        guard !authority.contains("@") else { throw invalid("user info is not allowed") }
        var hostPart: Substring
        var portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unterminated IPv6 address") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw invalid("junk after the IPv6 address") }
                portPart = after.dropFirst()
            }
            guard Self.isIPv6(String(hostPart)) else { throw invalid("bad IPv6 address") }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            } else {
                hostPart = authority
            }
            guard !hostPart.isEmpty else { throw invalid("the host is missing") }
            guard
                hostPart.utf8.allSatisfy({
                    ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z"))
                        || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z"))
                        || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9")) || $0 == UInt8(ascii: "-")
                        || $0 == UInt8(ascii: ".")
                })
            else { throw invalid("the host may hold only letters, digits, '-' and '.'") }
            guard !hostPart.hasPrefix("."), !hostPart.contains("..") else { throw invalid("bad host name") }
        }
        let defaultPort: UInt16 = secure ? 443 : 80
        var port = defaultPort
        if let portPart {
            guard !portPart.isEmpty, portPart.utf8.count <= 5, portPart.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
                let value = UInt16(portPart), value > 0
            else { throw invalid("the port must be a number from 1 to 65535") }
            port = value
        }
        let host = hostPart.lowercased()
        if !secure && !Self.isLoopback(host) {
            throw invalid("http:// is only allowed for a loopback host; use https")
        }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        self.host = host
        self.port = port
        self.usesTLS = secure
        self.origin = (secure ? "https://" : "http://") + bracketed + (port == defaultPort ? "" : ":\(port)")
        self.connectHost = host
        self.connectPort = port
        self.connectUsesTLS = secure
    }

    /// The same origin, reached at `host:port` with or without TLS (a test relay on 127.0.0.1, a
    /// node behind a load balancer).
    public func connecting(toHost host: String, port: UInt16, tls: Bool? = nil) -> RelayEndpoint {
        var copy = self
        copy.connectHost = host
        copy.connectPort = port
        copy.connectUsesTLS = tls ?? usesTLS
        return copy
    }

    /// The same endpoint trusting the PEM certificates in `file`.
    public func trusting(certificatesFile file: String?) -> RelayEndpoint {
        var copy = self
        copy.trustedCertificatesFile = file
        return copy
    }

    /// What goes into the `Host` header: the origin without its scheme.
    public var authority: String {
        let bracketed = host.contains(":") ? "[\(host)]" : host
        let defaultPort: UInt16 = usesTLS ? 443 : 80
        return port == defaultPort ? bracketed : "\(bracketed):\(port)"
    }

    public var description: String {
        let target = connectHost.contains(":") ? "[\(connectHost)]:\(connectPort)" : "\(connectHost):\(connectPort)"
        if connectHost == host && connectPort == port && connectUsesTLS == usesTLS { return origin }
        return "\(origin) via \(connectUsesTLS ? "tls" : "tcp")://\(target)"
    }

    /// "localhost", 127.0.0.0/8 and ::1.
    static func isLoopback(_ host: String) -> Bool {
        if host == "localhost" { return true }
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return UInt32(bigEndian: v4.s_addr) >> 24 == 127 }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 {
            return withUnsafeBytes(of: &v6) { bytes in bytes.prefix(15).allSatisfy { $0 == 0 } && bytes[15] == 1 }
        }
        return false
    }

    static func isIPv6(_ host: String) -> Bool {
        var v6 = in6_addr()
        return inet_pton(AF_INET6, host, &v6) == 1
    }
}
