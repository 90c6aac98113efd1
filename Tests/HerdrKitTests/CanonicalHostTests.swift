import TestSupport
import Testing

@testable import HerdrKit

@Suite struct CanonicalHostTests {
    @Test(arguments: [
        ("host.ts.net", "host.ts.net"),
        ("Host.TS.net.", "host.ts.net"),
        ("  MacBook.tail1234.ts.net.\n", "macbook.tail1234.ts.net"),
        ("\tmacbook ", "macbook"),
        ("100.64.0.1", "100.64.0.1"),
        ("FD7A:115C:A1E0::1", "fd7a:115c:a1e0::1"),
        ("host..", "host."),
        (".", ""),
        ("", ""),
        ("   ", ""),
    ])
    func hostname(raw: String, canonical: String) {
        #expect(CanonicalHost.hostname(raw) == canonical)
    }

    @Test func spellingsOfOneHostShareAKeyButDistinctNamesDoNot() {
        #expect(CanonicalHost.pinKey(hostname: "Host.TS.net.", port: 22) == "host.ts.net:22")
        #expect(
            CanonicalHost.pinKey(hostname: "host.ts.net", port: 22)
                == CanonicalHost.pinKey(hostname: " HOST.ts.net. ", port: 22))
        let distinct = Set(
            ["100.64.0.7", "host", "host.tail1234.ts.net"].map { CanonicalHost.pinKey(hostname: $0, port: 22) })
        #expect(distinct.count == 3)
        #expect(CanonicalHost.pinKey(hostname: "host", port: 22) != CanonicalHost.pinKey(hostname: "host", port: 2222))
    }

    @Test func ipv6KeysSplitAtTheLastColon() {
        #expect(CanonicalHost.pinKey(hostname: "FD7A::1", port: 2222) == "fd7a::1:2222")
    }
}
