import HerdrHostAgent
import PeerGate
import PeerGateListener
import Testing

/// `home-listen` and `home-refuse`: what they accept, and what the door tells devices.
@Suite struct HomeDoorConfigurationTests {
    @Test(arguments: ["[::]:4610", "0.0.0.0:4610", "[fd00::7]:1", "169.254.3.1:0", "[::]:65535"])
    func listenValuesThatWork(_ text: String) throws {
        let door = try HomeDoorConfiguration(listen: text)
        #expect(door.listenText == text)
        #expect(door.rules.policy == .homeOnly)
        #expect(door.refusedInterfaces == HomeDoorConfiguration.defaultRefusedInterfaces)
    }

    @Test(arguments: [
        "4610", "[::]", "::4610", "[::]:65536", "[::]:-1", "127.0.0.1:4610", "100.64.0.1:4610", "8.8.8.8:4610",
        "[fe80::1]:4610", "localhost:4610", "[0.0.0.0]:1", "fd00::7:1", "", "[::]:+1", "0.0.0.0:４",
    ])
    func listenValuesThatAreRefused(_ text: String) {
        #expect(throws: HomeDoorConfiguration.Invalid.self) { try HomeDoorConfiguration(listen: text) }
    }

    @Test func refusedInterfacePatternsAreNames() throws {
        #expect(try HomeDoorConfiguration(listen: "[::]:1", refusedInterfaces: []).refusedInterfaces == [])
        for bad in ["", "a,b", String(repeating: "x", count: 17)] {
            #expect(throws: HomeDoorConfiguration.Invalid.self) {
                try HomeDoorConfiguration(listen: "[::]:1", refusedInterfaces: [bad])
            }
        }
    }

    @Test func theDoorTellsOnlyHomeAddressesOnInterfacesItServes() throws {
        func entry(_ name: String, _ text: String) -> InterfaceAddresses.Entry {
            InterfaceAddresses.Entry(name: name, address: IPAddress(numeric: text)!, prefixLength: 24)
        }
        let privateText = [10, 1, 2, 3].map(String.init).joined(separator: ".")
        let interfaces = InterfaceAddresses(entries: [
            entry("lo", "127.0.0.1"), entry("lo", "::1"), entry("eth0", privateText), entry("eth0", "fe80::1"),
            entry("wlan0", "fd00::7"), entry("wlan0", "169.254.3.1"), entry("tailscale0", "100.64.0.9"),
            entry("wwan0", "169.254.9.9"), entry("eth1", "8.8.4.4"),
        ])
        let door = try HomeDoorConfiguration(listen: "[::]:4610")
        #expect(
            door.advertised(port: 4610, interfaces: interfaces).map(\.description)
                == ["[fd00::7]:4610", "169.254.3.1:4610", "\(privateText):4610"],
            "stable kinds first; no loopback, IPv6 link-local, tailnet, public or cellular")
        let v4 = try HomeDoorConfiguration(listen: "0.0.0.0:4610")
        #expect(!v4.advertised(port: 4610, interfaces: interfaces).contains { $0.address.family == .ipv6 })
        let one = try HomeDoorConfiguration(listen: "[fd00::7]:4610")
        #expect(one.advertised(port: 4700, interfaces: interfaces).map(\.description) == ["[fd00::7]:4700"])
        #expect(door.advertised(port: 0, interfaces: interfaces) == [], "no port yet, nothing to tell")
    }
}
