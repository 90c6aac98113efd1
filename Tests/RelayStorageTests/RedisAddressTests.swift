import RelayStorage
import Testing

@Suite struct RedisAddressTests {
    @Test(arguments: [
        ("redis://127.0.0.1", RedisAddress(endpoint: .tcp(host: "127.0.0.1", port: 6379))),
        (
            "redis://redis.internal:6380/3",
            RedisAddress(endpoint: .tcp(host: "redis.internal", port: 6380), database: 3)
        ),
        ("redis://[::1]:7000/", RedisAddress(endpoint: .tcp(host: "::1", port: 7000))),
        ("redis://[fd00::5]", RedisAddress(endpoint: .tcp(host: "fd00::5", port: 6379))),
        (
            "redis://:pa%3Ass@host:1/15",
            RedisAddress(endpoint: .tcp(host: "host", port: 1), database: 15, password: "pa:ss")
        ),
        (
            "redis://relay:pw@host",
            RedisAddress(endpoint: .tcp(host: "host", port: 6379), user: "relay", password: "pw")
        ),
        ("redis://pw@host", RedisAddress(endpoint: .tcp(host: "host", port: 6379), password: "pw")),
        ("redis://host:65535", RedisAddress(endpoint: .tcp(host: "host", port: 65535))),
        ("unix:///run/redis/redis.sock", RedisAddress(endpoint: .unix(path: "/run/redis/redis.sock"))),
        ("unix:///tmp/r.sock?db=2", RedisAddress(endpoint: .unix(path: "/tmp/r.sock"), database: 2)),
    ])
    func parses(url: String, expected: RedisAddress) throws {
        #expect(try RedisAddress(url: url) == expected)
    }

    @Test(arguments: [
        ("", "must start with redis://"),
        ("http://host", "must start with redis://"),
        ("rediss://host", "must start with redis://"),
        ("redis://", "needs a host"),
        ("redis://:6379", "needs a host"),
        ("redis://host:0", "port must be 1–65535"),
        ("redis://host:65536", "port must be 1–65535"),
        ("redis://host:123456", "port must be 1–65535"),
        ("redis://host:-1", "port must be 1–65535"),
        ("redis://host:/0", "port must be 1–65535"),
        ("redis://host/x", "database must be a number"),
        ("redis://host/123456", "database must be a number"),
        ("redis://host name", "space, a control character"),
        ("redis://hôst", "non-ASCII"),
        ("redis://[::1", "without its closing ]"),
        ("redis://[::1]x", "text after its IPv6 address"),
        ("redis://[zz]", "malformed IPv6"),
        ("redis://h_st", "needs a host"),
        ("redis://:%zz@host", "malformed %-escape"),
        ("redis://:%ff@host", "not UTF-8"),
        ("unix://", "absolute socket path"),
        ("unix://relative.sock", "absolute socket path"),
        ("unix:///tmp/r.sock?database=1", "takes only ?db=N"),
        ("unix:///tmp/r.sock?db=", "database must be a number"),
    ])
    func refuses(url: String, reason: String) {
        let error = #expect(throws: RelayStoreError.self) { try RedisAddress(url: url) }
        #expect(error?.message.contains(reason) == true, "\(url): \(String(describing: error))")
    }

    @Test func lengthIsBounded() throws {
        let longest = "redis://" + String(repeating: "a", count: 253) + "/0"
        _ = try RedisAddress(url: longest)
        let tooLong = "redis://:" + String(repeating: "p", count: RedisAddress.maximumLength) + "@host"
        let error = #expect(throws: RelayStoreError.self) { try RedisAddress(url: tooLong) }
        #expect(error?.message.contains("longer than 1024") == true)
        let hostTooLong = "redis://" + String(repeating: "a", count: 254)
        #expect(throws: RelayStoreError.self) { try RedisAddress(url: hostTooLong) }
    }

    /// The description is for logs: the password never appears, and an error never repeats it.
    @Test func passwordIsNeverShown() throws {
        let address = try RedisAddress(url: "redis://relay:hunter2@[fd00::7]:6380/1")
        #expect(address.description == "redis://relay:***@[fd00::7]:6380/1")
        let error = #expect(throws: RelayStoreError.self) { try RedisAddress(url: "redis://:hunter2@host:99999") }
        #expect(error?.message.contains("hunter2") == false)
        #expect(try RedisAddress(url: "unix:///tmp/r.sock").description == "unix:///tmp/r.sock?db=0")
    }
}

/// Inputs the fuzzer found (Fuzz/regressions/redis-url), kept as ordinary tests.
@Suite struct RedisAddressFuzzFindings {
    /// Credentials end where the authority does: an `@` after the first slash is the path's.
    @Test func anAtSignInThePathIsNoUserinfo() {
        let error = #expect(throws: RelayStoreError.self) {
            try RedisAddress(url: "redis://u/TTTTTTTTTTTTTT%00'rediTTTTTTTTTT0x:@1")
        }
        #expect(error?.message.contains("database must be a number") == true, "\(String(describing: error))")
    }

    @Test func aUserWithAControlCharacterIsRefused() {
        let error = #expect(throws: RelayStoreError.self) { try RedisAddress(url: "redis://a%00b:pw@host") }
        #expect(error?.message.contains("control character") == true)
    }

    /// A user with characters a URL reserves is shown escaped, so the description reads back.
    @Test func aUserIsShownEscaped() throws {
        let address = try RedisAddress(url: "redis://us%40er%3A1:pw@host:7/2")
        #expect(address.user == "us@er:1")
        #expect(address.description == "redis://us%40er%3A1:***@host:7/2")
        #expect(try RedisAddress(url: address.description).user == "us@er:1")
    }
}
