import Foundation
import PeerGate
import PeerGateListener
import Testing

@Suite("Policies and decisions")
struct PolicyTests {
    /// One address of every kind, and what each built-in policy makes of it.
    static let samples: [(text: String, kind: PeerKind, home: PeerLink?, tailnet: PeerLink?)] = [
        ("127.0.0.1", .loopback, .local, nil),
        ("127.0.0.2", .loopback, .local, nil),
        ("::1", .loopback, .local, nil),
        ("::ffff:127.0.0.1", .loopback, .local, nil),
        ("192.168.1.20", .private, .homeNetwork, nil),
        ("::ffff:10.0.0.7", .private, .homeNetwork, nil),
        ("169.254.10.1", .linkLocal, .homeNetwork, nil),
        ("fe80::1%en0", .linkLocal, .homeNetwork, nil),
        ("fd12:3456::1", .uniqueLocal, .homeNetwork, nil),
        ("100.64.77.2", .tailnet, nil, .tailnet),
        ("::ffff:100.100.1.1", .tailnet, nil, .tailnet),
        ("fd7a:115c:a1e0::5", .tailnet, nil, .tailnet),
        ("203.0.113.9", .public, nil, nil),
        ("2001:db8::1", .public, nil, nil),
        ("fcgarbage", .malformed, nil, nil),
        ("", .malformed, nil, nil),
    ]

    @Test("homeOnly is the HomeLink table; tailnetOnly admits the tailnet alone")
    func builtInPolicies() {
        for sample in Self.samples {
            let home = PeerPolicy.homeOnly.decide(sample.text)
            #expect(home.classification.kind == sample.kind, "\(sample.text)")
            #expect(home.link == sample.home, "homeOnly \(sample.text): \(home)")
            #expect(home.isAdmitted == (sample.home != nil))
            let tailnet = PeerPolicy.tailnetOnly.decide(sample.text)
            #expect(tailnet.link == sample.tailnet, "tailnetOnly \(sample.text): \(tailnet)")
            #expect((tailnet.refusal == nil) == tailnet.isAdmitted)
            if sample.kind == .malformed {
                #expect(home.refusal?.kind == .malformed)
                #expect(tailnet.refusal?.kind == .malformed)
            } else {
                #expect(home.refusal == nil || home.refusal?.kind == .outsidePolicy)
            }
        }
    }

    @Test("decisions read as sentences")
    func wording() {
        #expect(PeerPolicy.homeOnly.decide("127.0.0.1").description == "admitted 127.0.0.1 as local (loopback)")
        #expect(
            PeerPolicy.homeOnly.decide("100.64.77.2").description
                == "refused 100.64.77.2: 100.64.77.2 is a tailnet address (100.64.0.0/10); only this machine and the home network may connect here"
        )
        #expect(
            PeerPolicy.tailnetOnly.decide("::1").description
                == "refused ::1: ::1 is a loopback address (::1/128); only tailnet peers (100.64.0.0/10, fd7a:115c:a1e0::/48) may connect here"
        )
        #expect(
            PeerPolicy.homeOnly.decide("10.0.1").description
                == "refused 10.0.1: the peer address is not a numeric IPv4 or IPv6 address")
        #expect(
            PeerPolicy.homeOnly.decide("8.8.8.8").refusal?.message
                == "8.8.8.8 is a public address; only this machine and the home network may connect here")
    }

    @Test("hostile peer text is shown safely")
    func displayText() {
        let decision = PeerPolicy.homeOnly.decide("evil\u{1b}[2J\nname")
        #expect(decision.peer == "evil?[2J?name")
        let long = PeerPolicy.homeOnly.decide(String(repeating: "x", count: 500))
        #expect(long.peer == String(repeating: "x", count: PeerDecision.maximumDisplayLength) + "…")
        #expect(PeerDecision.displayText("fe80::1%é") == "fe80::1%??")
    }

    @Test("an allow list admits exactly its blocks, whatever their kind")
    func allowList() throws {
        let policy = try PeerPolicy.allowList(parsing: ["203.0.113.0/24", "fd00::/8", "127.0.0.1"])
        #expect(policy.decide("203.0.113.200").link == .allowList)
        #expect(policy.decide("::ffff:203.0.113.1").link == .allowList)
        #expect(policy.decide("203.0.114.0").refusal?.kind == .notAllowListed)
        #expect(policy.decide("fd7a:115c:a1e0::1").link == .allowList)
        #expect(policy.decide("127.0.0.1").link == .allowList)
        #expect(policy.decide("127.0.0.2").refusal?.message == "127.0.0.2 is not in any of the 3 allowed blocks")
        #expect(policy.decide("junk").refusal?.kind == .malformed)
        #expect(PeerPolicy.allowList([]).decide("127.0.0.1").isAdmitted == false)
        #expect(policy.name == "allow-list")
        #expect(policy.description == "allow-list [203.0.113.0/24, fd00::/8, 127.0.0.1/32]")
        #expect(try PeerPolicy.allowList(parsing: ["::/0"]).decide("::ffff:1.2.3.4").isAdmitted == false)
        #expect(try PeerPolicy.allowList(parsing: ["0.0.0.0/0"]).decide("::ffff:1.2.3.4").isAdmitted)
    }

    @Test("allow-list entries are parsed strictly")
    func cidrParsing() throws {
        let good: [(String, String)] = [
            ("10.0.0.0/8", "10.0.0.0/8"), ("0.0.0.0/0", "0.0.0.0/0"), ("1.2.3.4", "1.2.3.4/32"),
            ("1.2.3.4/32", "1.2.3.4/32"),
            ("::/0", "::/0"), ("::1", "::1/128"), ("2001:DB8::/32", "2001:db8::/32"), ("fe80::/10", "fe80::/10"),
        ]
        for (text, canonical) in good {
            #expect(try CIDRBlock(parsing: text).description == canonical)
        }
        let bad: [(String, CIDRError.Kind)] = [
            ("", .empty), (String(repeating: "1", count: 50), .tooLong), (" 10.0.0.0/8", .invalidCharacter),
            ("10.0.0.0/8 ", .invalidCharacter), ("fe80::%eth0/64", .scope), ("10.0.0/8", .address), ("ten/8", .address),
            ("10.0.0.0/", .prefixLength), ("10.0.0.0/33", .prefixLength), ("::/129", .prefixLength),
            ("10.0.0.0/08", .prefixLength),
            ("10.0.0.0/+8", .prefixLength), ("10.0.0.0/8/8", .prefixLength), ("10.0.0.0/0x8", .prefixLength),
            ("10.0.0.0/0008", .prefixLength), ("10.0.0.1/8", .hostBitsSet), ("fe80::1/10", .hostBitsSet),
            ("::ffff:10.0.0.0/104", .ipv4Mapped),
        ]
        for (text, kind) in bad {
            #expect(throws: CIDRError.self, "\(text.debugDescription)") { try CIDRBlock(parsing: text) }
            do {
                _ = try CIDRBlock(parsing: text)
            } catch {
                #expect(error.kind == kind, "\(text.debugDescription): \(error)")
            }
        }
        do {
            _ = try CIDRBlock(parsing: "10.0.0.1/8")
        } catch {
            #expect(error.message == "10.0.0.1/8: host bits are set; the block is 10.0.0.0/8")
        }
        #expect(CIDRBlock(network: IPAddress(numeric: "10.0.0.1")!, prefixLength: 8) == nil)
        #expect(CIDRBlock(holding: IPAddress(numeric: "10.9.8.7")!, prefixLength: 12)?.description == "10.0.0.0/12")
    }

    @Test("interfaces: refused by exact name or prefix, unknown ones refused when any is restricted")
    func interfaceRules() {
        let rules = PeerGateRules(policy: .homeOnly, refusedInterfaces: ["wwan*", "rmnet0"])
        #expect(rules.needsInterface)
        #expect(rules.refuses(interface: "wwan0"))
        #expect(rules.refuses(interface: "rmnet0"))
        #expect(!rules.refuses(interface: "rmnet1"))
        #expect(!rules.refuses(interface: "wlan0"))
        let cellular = rules.decide(peer: "192.168.1.4", localInterface: "wwan0")
        #expect(cellular.refusal?.kind == .refusedInterface)
        #expect(cellular.refusal?.message == "the connection arrived on wwan0, which this listener refuses")
        #expect(cellular.classification.kind == .private)
        #expect(rules.decide(peer: "192.168.1.4", localInterface: "wlan0").link == .homeNetwork)
        #expect(rules.decide(peer: "100.64.0.1", localInterface: "wlan0").refusal?.kind == .outsidePolicy)
        let unknown = rules.decide(peer: "192.168.1.4", localInterface: nil, localAddress: "192.168.1.2")
        #expect(unknown.refusal?.kind == .unknownInterface)
        let open = PeerGateRules(policy: .homeOnly)
        #expect(!open.needsInterface)
        #expect(open.decide(peer: "192.168.1.4", localInterface: nil).isAdmitted)
    }

    @Test("the interface holding a local address")
    func interfaceLookup() {
        func ip(_ text: String) -> IPAddress { IPAddress(numeric: text)! }
        let table = InterfaceAddresses(entries: [
            .init(name: "lo", address: ip("127.0.0.1"), prefixLength: 8),
            .init(name: "lo", address: ip("::1"), prefixLength: 128),
            .init(name: "wlan0", address: ip("192.168.1.5"), prefixLength: 24),
            .init(name: "eth0", address: ip("192.168.1.9"), prefixLength: 24),
            .init(name: "wlan0", address: ip("fe80::1"), prefixLength: 64, scopeID: 3),
            .init(name: "eth0", address: ip("fe80::1"), prefixLength: 64, scopeID: 2),
            .init(name: "tun0", address: ip("10.8.0.1"), prefixLength: 32),
        ])
        #expect(table.interface(holding: ip("127.0.0.1")) == "lo")
        #expect(table.interface(holding: ip("127.0.0.2")) == "lo")
        #expect(table.interface(holding: ip("::ffff:127.0.0.1")) == "lo")
        #expect(table.interface(holding: ip("192.168.1.9")) == "eth0")
        #expect(table.interface(holding: ip("::ffff:192.168.1.5")) == "wlan0")
        #expect(table.interface(holding: ip("fe80::1"), scopeID: 2) == "eth0")
        #expect(table.interface(holding: ip("fe80::1"), scopeID: 3) == "wlan0")
        #expect(table.interface(holding: ip("10.8.0.1")) == "tun0")
        #expect(table.interface(holding: ip("10.8.0.2")) == nil)
        #expect(table.interface(holding: ip("8.8.8.8")) == nil)
        let live = InterfaceAddresses.current()
        #expect(live?.interface(holding: ip("127.0.0.1")) != nil)
    }
}

@Suite("Status document")
struct StatusDocumentTests {
    @Test("a refusal is counted and remembered but never replaces the current link")
    func recording() throws {
        let rules = PeerGateRules(policy: .homeOnly, refusedInterfaces: ["wwan*"])
        var status = PeerGateStatus(rules: rules)
        #expect(status.currentLink == nil && status.refusedCount == 0 && status.admittedCount == 0)
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        status.record(rules.policy.decide("192.168.1.4"), interface: "wlan0", at: t0)
        status.record(rules.policy.decide("100.64.77.2"), interface: "wlan0", at: t0 + 1)
        status.record(rules.policy.decide("8.8.8.8"), interface: nil, at: t0 + 2)
        #expect(status.admittedCount == 1)
        #expect(status.refusedCount == 2)
        #expect(
            status.currentLink
                == .init(peer: "192.168.1.4", link: .homeNetwork, kind: .private, interface: "wlan0", at: t0))
        #expect(status.lastRefusedPeer?.peer == "8.8.8.8")
        #expect(status.lastRefusedPeer?.reason == .outsidePolicy)
        #expect(status.lastRefusedPeer?.at == t0 + 2)

        let json = String(decoding: status.json(), as: UTF8.self)
        #expect(
            json
                == #"{"admittedCount":1,"currentLink":{"at":"2027-01-15T08:00:00Z","interface":"wlan0","kind":"private","link":"home-network","peer":"192.168.1.4"},"lastRefusedPeer":{"at":"2027-01-15T08:00:02Z","interface":null,"kind":"public","message":"8.8.8.8 is a public address; only this machine and the home network may connect here","peer":"8.8.8.8","reason":"outside-policy"},"policy":"home-only","refusedCount":2,"refusedInterfaces":["wwan*"]}"#
        )
        #expect(try PeerGateStatus.decode(status.json()) == status)
    }

    @Test("a fresh document has every key, null where nothing happened yet")
    func fresh() throws {
        let json = PeerGateStatus(rules: PeerGateRules(policy: .tailnetOnly)).json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json)) as? [String: Any])
        #expect(
            Set(object.keys) == [
                "admittedCount", "currentLink", "lastRefusedPeer", "policy", "refusedCount", "refusedInterfaces",
            ])
        #expect(object["currentLink"] is NSNull)
        #expect(object["lastRefusedPeer"] is NSNull)
        #expect(object["policy"] as? String == "tailnet-only")
    }
}
