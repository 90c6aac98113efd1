import PeerGate
import Testing

/// One row: peer text and what it must be.
struct AddressCase: Sendable, CustomTestStringConvertible {
    let text: String
    let kind: PeerKind
    let note: String

    init(_ text: String, _ kind: PeerKind, _ note: String = "") {
        self.text = text
        self.kind = kind
        self.note = note
    }

    var testDescription: String {
        let shown = text.count > 64 ? "\(text.prefix(24))… (\(text.utf8.count) bytes)" : text
        return "\(shown.debugDescription) → \(kind.rawValue)\(note.isEmpty ? "" : " (\(note))")"
    }
}

/// Fixtures are written from octets where an edge is the point, so the neighbour is visibly one step away.
private func v4(_ a: Int, _ b: Int, _ c: Int, _ d: Int) -> String { "\(a).\(b).\(c).\(d)" }

let addressTable: [AddressCase] = [
    // Loopback: all of 127/8 and ::1; the mapped form only as a parsed mapped address.
    AddressCase(v4(127, 0, 0, 1), .loopback),
    AddressCase(v4(127, 0, 0, 2), .loopback, "all of 127/8 is this machine (the seed refused it)"),
    AddressCase(v4(127, 255, 255, 255), .loopback),
    AddressCase(v4(126, 255, 255, 255), .public, "below 127/8"),
    AddressCase(v4(128, 0, 0, 0), .public, "above 127/8"),
    AddressCase("::1", .loopback),
    AddressCase("0:0:0:0:0:0:0:1", .loopback, "long spelling"),
    AddressCase("::0001", .loopback, "leading zeros in a group"),
    AddressCase("::2", .public),
    AddressCase("::ffff:127.0.0.1", .loopback, "mapped"),
    AddressCase("::ffff:127.9.8.7", .loopback, "mapped, rest of 127/8"),
    AddressCase("::FFFF:7f00:1", .loopback, "mapped, hex spelling"),
    AddressCase("::ffff:126.255.255.255", .public, "mapped, below 127/8"),
    AddressCase("::127.0.0.1", .public, "IPv4-compatible (deprecated), not mapped"),
    AddressCase("::ffff:0:127.0.0.1", .public, "SIIT translated, not mapped"),
    // RFC 1918.
    AddressCase(v4(9, 255, 255, 255), .public),
    AddressCase(v4(10, 0, 0, 0), .private),
    AddressCase(v4(10, 255, 255, 255), .private),
    AddressCase(v4(11, 0, 0, 0), .public),
    AddressCase(v4(172, 15, 255, 255), .public),
    AddressCase(v4(172, 16, 0, 0), .private),
    AddressCase(v4(172, 31, 255, 255), .private),
    AddressCase(v4(172, 32, 0, 0), .public),
    AddressCase(v4(192, 167, 255, 255), .public),
    AddressCase(v4(192, 168, 0, 0), .private),
    AddressCase(v4(192, 168, 255, 255), .private),
    AddressCase(v4(192, 169, 0, 0), .public),
    AddressCase("::ffff:" + v4(10, 1, 2, 3), .private, "mapped"),
    AddressCase("::ffff:" + v4(172, 32, 0, 1), .public, "mapped, outside 172.16/12"),
    // Link-local.
    AddressCase(v4(169, 253, 255, 255), .public),
    AddressCase(v4(169, 254, 0, 0), .linkLocal),
    AddressCase(v4(169, 254, 255, 255), .linkLocal),
    AddressCase(v4(169, 255, 0, 0), .public),
    AddressCase("fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .public, "just below fe80::/10"),
    AddressCase("fe80::", .linkLocal),
    AddressCase("fe80::1%eth0", .linkLocal, "scope cut"),
    AddressCase("FE80::1%en0", .linkLocal, "upper case"),
    AddressCase("fe80::1%2", .linkLocal, "numeric scope"),
    AddressCase("febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .linkLocal, "top of fe80::/10"),
    AddressCase("fec0::", .public, "just above fe80::/10 (old site-local)"),
    // Unique-local and the tailnet inside it.
    AddressCase("fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .public, "just below fc00::/7"),
    AddressCase("fc00::", .uniqueLocal),
    AddressCase("fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", .uniqueLocal, "top of fc00::/7"),
    AddressCase("fe00::", .public, "just above fc00::/7"),
    AddressCase("fd7a:115c:a1df:ffff:ffff:ffff:ffff:ffff", .uniqueLocal, "just below the tailnet /48"),
    AddressCase("fd7a:115c:a1e0::", .tailnet, "tailnet wins over unique-local"),
    AddressCase("fd7a:115c:a1e0:ab12:4843:cd96:6258:b240", .tailnet),
    AddressCase("fd7a:115c:a1e0:ffff:ffff:ffff:ffff:ffff", .tailnet),
    AddressCase("fd7a:115c:a1e1::", .uniqueLocal, "just above the tailnet /48"),
    AddressCase("FD7A:115C:A1E0::1%tailscale0", .tailnet, "upper case, scope"),
    // Tailnet IPv4: 100.64.0.0/10.
    AddressCase(v4(100, 63, 255, 255), .public),
    AddressCase(v4(100, 64, 0, 0), .tailnet),
    AddressCase(v4(100, 103, 220, 58), .tailnet),
    AddressCase(v4(100, 127, 255, 255), .tailnet),
    AddressCase(v4(100, 128, 0, 0), .public),
    AddressCase("::ffff:" + v4(100, 64, 0, 1), .tailnet, "mapped"),
    AddressCase("::ffff:" + v4(100, 128, 0, 1), .public, "mapped, above"),
    // Public and special-purpose, all `.public`.
    AddressCase(v4(8, 8, 8, 8), .public),
    AddressCase(v4(0, 0, 0, 0), .public, "unspecified"),
    AddressCase(v4(255, 255, 255, 255), .public, "broadcast"),
    AddressCase(v4(224, 0, 0, 1), .public, "multicast"),
    AddressCase("::", .public, "unspecified"),
    AddressCase("2001:db8::1", .public, "documentation"),
    AddressCase("2606:4700:4700::1111", .public),
    AddressCase("ff02::1%eth0", .public, "multicast with scope"),
    AddressCase("64:ff9b::a00:1", .public, "NAT64 of 10.0.0.1 is not mapped"),
    // Malformed: never a prefix match.
    AddressCase("", .malformed, "empty"),
    AddressCase("10.0.1", .malformed, "three-part dotted"),
    AddressCase("127.1", .malformed, "two-part dotted"),
    AddressCase("2130706433", .malformed, "integer form"),
    AddressCase("0x7f.0.0.1", .malformed, "hex octet"),
    AddressCase("010.0.0.1", .malformed, "leading zero octet"),
    AddressCase("10.0.0.1.5", .malformed, "five parts"),
    AddressCase("10.0.0.256", .malformed, "octet over 255"),
    AddressCase(" 10.0.0.1", .malformed, "leading space"),
    AddressCase("10.0.0.1 ", .malformed, "trailing space"),
    AddressCase("10.0.0.1\n", .malformed, "trailing newline"),
    AddressCase("127.0.0.1\u{0}", .malformed, "trailing NUL"),
    AddressCase("127.0.0.1\u{0}evil", .malformed, "embedded NUL"),
    AddressCase("127.0.0.1/8", .malformed, "a block is not an address"),
    AddressCase("[::1]", .malformed, "brackets"),
    AddressCase("[::1]:22", .malformed, "with port"),
    AddressCase("127.0.0.1:22", .malformed, "with port"),
    AddressCase("localhost", .malformed, "a name"),
    AddressCase("fc", .malformed, "looks like unique-local"),
    AddressCase("fd", .malformed, "looks like unique-local"),
    AddressCase("fcgarbage", .malformed, "starts like unique-local"),
    AddressCase("fdxx::1", .malformed, "starts like unique-local"),
    AddressCase("fe8", .malformed, "looks like link-local"),
    AddressCase("feb", .malformed, "looks like link-local"),
    AddressCase("fe80", .malformed, "a group is not an address"),
    AddressCase("fe80:::1", .malformed, "triple colon"),
    AddressCase("fe80::1::2", .malformed, "two ::"),
    AddressCase("1:2:3:4:5:6:7:8:9", .malformed, "nine groups"),
    AddressCase("12345::1", .malformed, "five-digit group"),
    AddressCase("::ffff:127.x", .malformed, "the seed passed this on a prefix"),
    AddressCase("::ffff:127.", .malformed),
    AddressCase("::ffff:", .malformed),
    AddressCase("fe80::1%", .malformed, "empty scope"),
    AddressCase("fe80::1%%en0", .malformed, "doubled %"),
    AddressCase("fe80::1%en0%en1", .malformed, "two scopes"),
    AddressCase("%en0", .malformed, "only a scope"),
    AddressCase("10.0.0.1%eth0", .malformed, "scope after IPv4"),
    AddressCase("fe80::1%" + String(repeating: "e", count: 16), .malformed, "scope over 15"),
    AddressCase("fe80::1%" + String(repeating: "e", count: 15), .linkLocal, "scope of exactly 15"),
    AddressCase("fe80::1%en 0", .malformed, "space in scope"),
    AddressCase("１２７.0.0.1", .malformed, "full-width digits"),
    AddressCase("fe80::1%énO", .malformed, "non-ASCII scope"),
    AddressCase(String(repeating: "1", count: PeerAddress.maximumTextLength + 1), .malformed, "over the text limit"),
    AddressCase(String(repeating: "0:", count: 40) + "1", .malformed, "long IPv6-looking text"),
    AddressCase(String(repeating: "a", count: 100_000), .malformed, "huge"),
    AddressCase("0000:0000:0000:0000:0000:ffff:255.255.255.255", .public, "mapped broadcast, 45 characters"),
    AddressCase("0000:0000:0000:0000:0000:ffff:010.255.255.255", .malformed, "mapped with a leading-zero octet"),
]

@Suite("Address classification table")
struct AddressTableTests {
    @Test("at least 60 rows")
    func tableSize() {
        #expect(addressTable.count >= 60)
    }

    @Test(arguments: addressTable)
    func classify(_ row: AddressCase) {
        let classification = PeerClassification(row.text)
        #expect(classification.kind == row.kind, "\(classification)")
        #expect(PeerKind(peer: row.text) == row.kind)
        #expect((classification.address == nil) == (row.kind == .malformed))
        #expect((classification.malformation == nil) == (row.kind != .malformed))
        #expect((classification.range == nil) == (row.kind == .malformed || row.kind == .public))
    }

    @Test("the longest valid text is exactly at the limit")
    func lengthLimits() {
        let longest = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"
        #expect(longest.utf8.count == PeerAddress.maximumAddressLength)
        #expect(PeerKind(peer: longest) == .public)
        #expect(PeerKind(peer: "0" + longest) == .malformed)
        let scoped = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255%" + String(repeating: "s", count: 15)
        #expect(scoped.utf8.count == PeerAddress.maximumTextLength)
        #expect(PeerKind(peer: scoped) == .public)
        #expect(PeerKind(peer: scoped + "s") == .malformed)
        if case .failure(let malformation) = PeerAddress.parse(scoped + "s") {
            #expect(malformation.kind == .tooLong)
        } else {
            Issue.record("one over the limit parsed")
        }
    }

    @Test("malformed reasons are specific")
    func malformedKinds() {
        let expectations: [(String, MalformedAddress.Kind)] = [
            ("", .empty),
            (String(repeating: "1", count: 62), .tooLong),
            ("1.2.3.4 ", .invalidCharacter),
            ("1.2.3.4\u{0}", .invalidCharacter),
            ("fe80::1%", .badScope),
            ("1.2.3.4%eth0", .badScope),
            ("10.0.1", .notAnAddress),
            ("fcgarbage", .notAnAddress),
        ]
        for (text, kind) in expectations {
            guard case .failure(let malformation) = PeerAddress.parse(text) else {
                Issue.record("\(text.debugDescription) parsed")
                continue
            }
            #expect(malformation.kind == kind, "\(text.debugDescription): \(malformation)")
            // The reason never repeats the text.
            #expect(text.isEmpty || !malformation.description.contains(text))
        }
    }

    @Test("mapped, scoped and canonical forms")
    func parsedForms() throws {
        let mapped = try PeerAddress.parse("::FFFF:100.64.1.2").get()
        #expect(mapped.wasIPv4Mapped)
        #expect(mapped.address.family == .ipv4)
        #expect(mapped.address.description == v4(100, 64, 1, 2))
        #expect(mapped.scope == nil)

        let scoped = try PeerAddress.parse("FE80:0:0::0001%wlan0").get()
        #expect(!scoped.wasIPv4Mapped)
        #expect(scoped.scope == "wlan0")
        #expect(scoped.description == "fe80::1%wlan0")

        #expect(IPAddress(numeric: "0:0:0:0:0:0:0:1") == IPAddress(numeric: "::1"))
        #expect(IPAddress(numeric: "::ffff:127.0.0.1")?.family == .ipv6)
        #expect(IPAddress(numeric: "::ffff:127.0.0.1")?.unwrappingIPv4Mapped == IPAddress(numeric: "127.0.0.1"))
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
        #expect(IPAddress(bytes: [1, 2, 3, 4])?.description == "1.2.3.4")
    }

    @Test("every kind has a row, and the table is ordered so the tailnet wins")
    func rangeTable() {
        let kinds = Set(addressTable.map(\.kind))
        #expect(kinds == Set(PeerKind.allCases))
        let tailnet6 = PeerRange.table.firstIndex { $0.kind == .tailnet && $0.block.network.family == .ipv6 }
        let ula = PeerRange.table.firstIndex { $0.kind == .uniqueLocal }
        #expect(tailnet6! < ula!)
        #expect(PeerRange.table.map(\.block.description).contains("100.64.0.0/10"))
    }
}
