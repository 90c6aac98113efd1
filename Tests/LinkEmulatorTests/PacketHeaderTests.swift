import LinkEmulator
import Testing

@Suite struct PacketHeaderTests {
    @Test func readsAnIPv4TCPPacket() throws {
        let header = try #require(
            PacketHeader(parsing: TestPackets.tcp4(from: "100.64.1.2", 40000, to: "169.254.3.4", 443, payload: 10)))
        #expect(header.source == IPAddress("100.64.1.2"))
        #expect(header.destination == IPAddress("169.254.3.4"))
        #expect(header.transport == 6)
        #expect(header.sourcePort == 40000)
        #expect(header.destinationPort == 443)
    }

    @Test func readsAnIPv6UDPPacketBehindHopByHopHeaders() throws {
        let packet = TestPackets.ipv6(
            from: "fd12::2", to: "fd12:1::2", next: 17, hopByHop: 2, ports: (5353, 53), payload: 4)
        let header = try #require(PacketHeader(parsing: packet))
        #expect(header.transport == 17)
        #expect(header.sourcePort == 5353)
        #expect(header.destinationPort == 53)
        #expect(header.destination == IPAddress("fd12:1::2"))
    }

    @Test func tooManyExtensionHeadersGiveNoPorts() throws {
        let packet = TestPackets.ipv6(from: "fd12::2", to: "fd12:1::2", next: 6, hopByHop: 9, ports: (1, 2), payload: 0)
        let header = try #require(PacketHeader(parsing: packet))
        #expect(header.sourcePort == 0 && header.destinationPort == 0)
    }

    @Test func refusesWhatIsNotAWellFormedPacket() {
        let good = TestPackets.udp4(from: "169.254.1.1", 1, to: "169.254.1.2", 2, payload: 8)
        #expect(PacketHeader(parsing: [UInt8]()) == nil)
        #expect(PacketHeader(parsing: Array(good.prefix(19))) == nil, "shorter than an IPv4 header")
        #expect(PacketHeader(parsing: Array(good.dropLast())) == nil, "shorter than its total length")
        #expect(PacketHeader(parsing: [0x50] + good.dropFirst()) == nil, "version 5")
        #expect(PacketHeader(parsing: [0x44] + good.dropFirst()) == nil, "header length below 20")
        let six = TestPackets.udp6(from: "fd12::1", 1, to: "fd12::2", 2, payload: 8)
        #expect(PacketHeader(parsing: Array(six.prefix(39))) == nil, "shorter than an IPv6 header")
        #expect(PacketHeader(parsing: Array(six.dropLast())) == nil, "shorter than its payload length")
    }

    @Test func aReplyHasTheSameFlow() throws {
        let out = try #require(PacketHeader(parsing: TestPackets.tcp6(from: "fd12::2", 40000, to: "fd12:1::2", 443)))
        let back = try #require(PacketHeader(parsing: TestPackets.tcp6(from: "fd12:1::2", 443, to: "fd12::2", 40000)))
        let other = try #require(PacketHeader(parsing: TestPackets.tcp6(from: "fd12::2", 40001, to: "fd12:1::2", 443)))
        let udp = try #require(PacketHeader(parsing: TestPackets.udp6(from: "fd12::2", 40000, to: "fd12:1::2", 443)))
        #expect(out.flow == back.flow)
        #expect(out.flow != other.flow)
        #expect(out.flow != udp.flow)
    }

    @Test func addressesAndPrefixes() throws {
        #expect(IPAddress("fd12:0:0:1::2")?.description == "fd12:0:0:1::2")
        #expect(IPAddress("fd12:0000:0:0:0:0:0:2")?.description == "fd12::2")
        #expect(IPAddress("1:2:3:4:5:6:7:8")?.description == "1:2:3:4:5:6:7:8")
        for bad in [
            "", "1.2.3", "1.2.3.256", "1.2.3.4.5", "01234.1.1.1", "fd12:::1", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9",
            "g::1",
        ] {
            #expect(IPAddress(bad) == nil, "\(bad)")
        }
        let prefix = try #require(IPPrefix("fd12:3456:789a:1::/64"))
        #expect(prefix.contains(IPAddress("fd12:3456:789a:1::2")!))
        #expect(!prefix.contains(IPAddress("fd12:3456:789a:2::2")!))
        #expect(!prefix.contains(IPAddress("169.254.1.2")!), "never across families")
        let v4 = try #require(IPPrefix("100.64.0.0/10"))
        #expect(v4.contains(IPAddress("100.127.255.255")!))
        #expect(!v4.contains(IPAddress("100.128.0.0")!))
        #expect(IPPrefix("169.254.7.9/24")?.description == "169.254.7.0/24", "bits past the length cleared")
        #expect(IPPrefix("169.254.7.9")?.length == 32)
        #expect(IPPrefix("169.254.7.9/33") == nil)
        #expect(IPPrefix("fd12::/129") == nil)
        #expect(IPPrefix("fd12::/") == nil)
    }
}
