import Plumbing
import RelayClient
import Testing

@Suite("Relay URLs are parsed the way the phone parses them")
struct RelayEndpointTests {
    struct Accepted: Sendable, CustomTestStringConvertible {
        let url: String
        let origin: String
        let host: String
        let port: UInt16
        let tls: Bool
        var testDescription: String { url }
    }

    static let accepted: [Accepted] = [
        Accepted(url: "https://relay.test", origin: "https://relay.test", host: "relay.test", port: 443, tls: true),
        // An empty path or a lone slash.
        Accepted(url: "https://relay.test/", origin: "https://relay.test", host: "relay.test", port: 443, tls: true),
        // Host and scheme lowercased.
        Accepted(
            url: "HTTPS://Relay.Example.COM", origin: "https://relay.example.com", host: "relay.example.com", port: 443,
            tls: true),
        // The default port is dropped from the origin; another one stays.
        Accepted(url: "https://relay.test:443", origin: "https://relay.test", host: "relay.test", port: 443, tls: true),
        Accepted(
            url: "https://relay.test:8443/", origin: "https://relay.test:8443", host: "relay.test", port: 8443,
            tls: true),
        Accepted(
            url: "https://203.0.113.7:444", origin: "https://203.0.113.7:444", host: "203.0.113.7", port: 444, tls: true
        ),
        Accepted(
            url: "https://[2001:DB8::1]", origin: "https://[2001:db8::1]", host: "2001:db8::1", port: 443, tls: true),
        Accepted(
            url: "https://[2001:db8::1]:8443", origin: "https://[2001:db8::1]:8443", host: "2001:db8::1", port: 8443,
            tls: true),
        // http only for loopback hosts.
        Accepted(
            url: "http://127.0.0.1:8787", origin: "http://127.0.0.1:8787", host: "127.0.0.1", port: 8787, tls: false),
        Accepted(url: "http://127.1.2.3", origin: "http://127.1.2.3", host: "127.1.2.3", port: 80, tls: false),
        Accepted(url: "http://localhost:80/", origin: "http://localhost", host: "localhost", port: 80, tls: false),
        Accepted(url: "http://[::1]:9000", origin: "http://[::1]:9000", host: "::1", port: 9000, tls: false),
    ]

    @Test("accepted", arguments: accepted)
    func acceptedURL(_ example: Accepted) throws {
        let endpoint = try RelayEndpoint(parsing: example.url)
        #expect(endpoint.origin == example.origin)
        #expect(endpoint.host == example.host)
        #expect(endpoint.port == example.port)
        #expect(endpoint.usesTLS == example.tls)
        #expect(endpoint.connectHost == example.host)
        #expect(endpoint.connectPort == example.port)
        #expect(endpoint.connectUsesTLS == example.tls)
    }

    static let refused: [(String, String)] = [
        ("relay.test", "scheme"),
        ("wss://relay.test", "scheme"),
        ("ftp://relay.test", "scheme"),
        ("https://", "host is missing"),
        ("https://:443", "host is missing"),
        ("https://user@relay.test", "user info"),
        ("https://user:pw@relay.test", "user info"),
        ("https://relay.test/room", "path"),
        ("https://relay.test//", "path"),
        ("https://relay.test?x=1", "query"),
        ("https://relay.test/?", "query"),
        ("https://relay.test#top", "fragment"),
        ("https://relay.test:", "port"),
        ("https://relay.test:0", "port"),
        ("https://relay.test:65536", "port"),
        ("https://relay.test:44x", "port"),
        ("https://relay test", "printable ASCII"),
        ("https://relay_test", "letters, digits"),
        ("https://[2001:db8::1", "unterminated"),
        ("https://[relay.test]", "IPv6"),
        ("http://relay.test", "loopback"),
        ("http://192.168.1.2:8787", "loopback"),
        ("http://[::2]", "loopback"),
    ]

    @Test("refused, saying why", arguments: refused)
    func refusedURL(_ url: String, _ why: String) {
        #expect {
            try RelayEndpoint(parsing: url)
        } throws: { error in
            guard let error = error as? ConnectionError else { return false }
            return error.kind == .invalidEndpoint && error.message.contains(why) && error.message.contains(url)
        }
    }

    @Test("a connect override keeps the origin that is signed")
    func connectOverride() throws {
        let endpoint = try RelayEndpoint(parsing: "https://relay.test").connecting(
            toHost: "127.0.0.1", port: 40000, tls: false)
        #expect(endpoint.origin == "https://relay.test")
        #expect(endpoint.authority == "relay.test")
        #expect(endpoint.connectHost == "127.0.0.1")
        #expect(endpoint.connectPort == 40000)
        #expect(!endpoint.connectUsesTLS)
        #expect(endpoint.usesTLS)
        #expect(endpoint.description == "https://relay.test via tcp://127.0.0.1:40000")
        // Without a TLS choice the URL's scheme decides.
        #expect(try RelayEndpoint(parsing: "https://relay.test:8443").connecting(toHost: "::1", port: 1).connectUsesTLS)
        #expect(try RelayEndpoint(parsing: "https://relay.test:8443").authority == "relay.test:8443")
    }
}
