import PeerGate
import Testing

/// What a home address may be: home-network kinds only, numeric, with a port; lists bounded.
@Suite struct HomeAddressTests {
    /// A private IPv4 address built from octets (no literal private address in the sources).
    static func privateIPv4(_ last: UInt8) -> String { [10, 0, 0, last].map(String.init).joined(separator: ".") }

    @Test(arguments: ["[fd12:3456:789a::1]:4610", "169.254.3.1:1", "[fc00::5]:65535"])
    func homeNetworkAddressesParseAndPrintBack(_ text: String) throws {
        let address = try HomeAddress(parsing: text)
        #expect(address.description == text)
    }

    @Test func aPrivateIPv4AddressIsHome() throws {
        let text = "\(Self.privateIPv4(7)):4610"
        #expect(try HomeAddress(parsing: text).description == text)
    }

    @Test(arguments: [
        ("127.0.0.1:4610", "loopback"), ("[::1]:4610", "loopback"), ("100.64.0.1:4610", "tailnet"),
        ("[fd7a:115c:a1e0::1]:4610", "tailnet"), ("8.8.8.8:4610", "public"), ("[fe80::1]:4610", "link-local"),
        ("169.254.3.1:0", "port"), ("169.254.3.1:65536", "port"), ("169.254.3.1", "IPv4:port"),
        ("fd00::1:4610", "IPv4:port"), ("[169.254.3.1]:4610", "numeric"), ("[fd00::1]4610", "[IPv6]:port"),
        ("host.local:4610", "numeric"), ("169.254.3.1:+1", "port"), ("", "IPv4:port"),
    ])
    func everythingElseIsRefusedWithAReason(_ text: String, _ reason: String) {
        #expect {
            try HomeAddress(parsing: text)
        } throws: { error in
            (error as? HomeAddress.Invalid)?.description.contains(reason) == true
        }
    }

    @Test func aLongTextIsRefusedBeforeItIsLookedAt() {
        let long = "[" + String(repeating: "f", count: 60) + "]:1"
        #expect(throws: HomeAddress.Invalid.self) { try HomeAddress(parsing: long) }
    }

    @Test func listsAreBoundedAndHaveNoRepeats() throws {
        let eight = (1...8).map { "169.254.3.\($0):4610" }
        #expect(try HomeAddress.parseList(eight.joined(separator: ",")).count == 8)
        #expect(throws: HomeAddress.Invalid.self) {
            try HomeAddress.parseList((eight + ["169.254.3.9:4610"]).joined(separator: ","))
        }
        #expect(throws: HomeAddress.Invalid.self) { try HomeAddress.parseList("169.254.3.1:1,169.254.3.1:1") }
        #expect(throws: HomeAddress.Invalid.self) { try HomeAddress.parseList("169.254.3.1:1,") }
        #expect(try HomeAddress.parseList("") == [])
        let list = try HomeAddress.parseList("[fd00::7]:4610,169.254.3.1:4610")
        #expect(HomeAddress.listText(list) == "[fd00::7]:4610,169.254.3.1:4610")
    }

    @Test func anIPv4MappedAddressIsKeptAsItsIPv4() throws {
        let mapped = try #require(IPAddress(numeric: "::ffff:169.254.3.1"))
        #expect(try HomeAddress(address: mapped, port: 1).description == "169.254.3.1:1")
    }
}
