import LinkEmulator
import Testing

/// The model with an injected clock (nanoseconds given to every call) and a seeded generator.
@Suite struct LinkRouterTests {
    static let millisecond: Int64 = 1_000_000
    static let device = "fd12:1::2"
    static let relay = "fd12:2::2"

    /// Two links: "device" (fd12:1::/64, 169.254.1.1) and "relay" (fd12:2::/64, 169.254.1.2).
    static func router(seed: UInt64 = 1) throws -> LinkRouter<SplitMix64> {
        try LinkRouter(
            links: [
                LinkDescription(name: "device", prefixes: [IPPrefix("fd12:1::/64")!, IPPrefix("169.254.1.1")!]),
                LinkDescription(name: "relay", prefixes: [IPPrefix("fd12:2::/64")!, IPPrefix("169.254.1.2")!]),
            ], random: SplitMix64(seed: seed))
    }

    static func apply(_ line: String, to router: inout LinkRouter<SplitMix64>) {
        let answer = router.execute(try! LinkCommand(parsing: line))
        precondition(answer.hasPrefix("ok"), answer)
    }

    /// Sends `count` packets from the device to the relay, `spacing` apart from `start`; the
    /// delivery time of each (nil when dropped), running the clock forward in 0.1 ms steps.
    static func send(
        _ router: inout LinkRouter<SplitMix64>, count: Int, spacing: Int64 = 0, start: Int64 = 0, size: Int = 100,
        port: UInt16 = 40000, until end: Int64 = 120_000 * millisecond
    ) -> [(sent: Int64, delivered: Int64)] {
        var deliveries: [(sent: Int64, delivered: Int64)] = []
        var sentAt: [Int64] = []
        var next = 0
        var now = start
        while now <= end {
            while next < count, start + Int64(next) * spacing <= now {
                let packet = TestPackets.udp6(from: device, port, to: relay, 9, payload: size - 48)
                sentAt.append(now)
                // The packet's payload carries its index, to match deliveries to sends.
                var tagged = packet
                tagged[tagged.count - 1] = UInt8(next & 0xff)
                tagged[tagged.count - 2] = UInt8(next >> 8)
                router.receive(tagged, fromLink: 0, at: now)
                next += 1
            }
            for delivery in router.deliveries(dueAt: now) {
                let index =
                    Int(delivery.packet[delivery.packet.count - 2]) << 8
                    | Int(delivery.packet[delivery.packet.count - 1])
                deliveries.append((sentAt[index], now))
            }
            if next >= count && router.nextEventTime == nil { break }
            now += millisecond / 10
        }
        return deliveries
    }

    @Test func routesByDestinationAndDropsUnknownOnes() throws {
        var router = try Self.router()
        router.receive(TestPackets.udp4(from: "169.254.1.1", 1, to: "169.254.1.2", 2), fromLink: 0, at: 0)
        router.receive(TestPackets.udp6(from: Self.relay, 1, to: Self.device, 2), fromLink: 1, at: 0)
        router.receive(TestPackets.udp4(from: "169.254.1.1", 1, to: "169.254.9.9", 2), fromLink: 0, at: 0)
        router.receive([0x45, 0, 0], fromLink: 0, at: 0)
        let due = router.deliveries(dueAt: 0)
        #expect(due.map(\.link) == [1, 0])
        let device = router.statistics(link: 0)
        #expect(device.uplink.passedPackets == 1)
        #expect(device.uplink.dropped[.noRoute] == 1)
        #expect(device.uplink.dropped[.malformed] == 1)
        #expect(device.downlink.passedPackets == 1)
        #expect(router.statistics(link: 1).downlink.passedPackets == 1)
    }

    @Test func theLongestPrefixWins() throws {
        let router = try LinkRouter(
            links: [
                LinkDescription(name: "wide", prefixes: [IPPrefix("fd12::/16")!]),
                LinkDescription(name: "narrow", prefixes: [IPPrefix("fd12:5::/64")!]),
            ], random: SplitMix64(seed: 1))
        #expect(router.route(IPAddress("fd12:5::9")!) == 1)
        #expect(router.route(IPAddress("fd12:6::9")!) == 0)
        #expect(router.route(IPAddress("fd13::1")!) == nil)
    }

    @Test func refusesDuplicateNamesAndPrefixes() {
        #expect(throws: LinkRouterError.self) {
            try LinkRouter(
                links: [LinkDescription(name: "a", prefixes: []), LinkDescription(name: "a", prefixes: [])],
                random: SplitMix64(seed: 1))
        }
        #expect(throws: LinkRouterError.self) {
            try LinkRouter(
                links: [
                    LinkDescription(name: "a", prefixes: [IPPrefix("fd12::/64")!]),
                    LinkDescription(name: "b", prefixes: [IPPrefix("fd12::/64")!]),
                ],
                random: SplitMix64(seed: 1))
        }
        #expect(throws: LinkRouterError.self) { try LinkRouter(links: [], random: SplitMix64(seed: 1)) }
    }

    @Test func delaysAddUpAcrossBothLinks() throws {
        var router = try Self.router()
        Self.apply("link device uplink delay=30ms", to: &router)
        Self.apply("link relay downlink delay=20ms", to: &router)
        Self.apply("link relay uplink delay=500ms", to: &router)  // the other way: not on this path
        let deliveries = Self.send(&router, count: 20, spacing: Self.millisecond)
        #expect(deliveries.count == 20)
        for delivery in deliveries { #expect(delivery.delivered - delivery.sent == 50 * Self.millisecond) }
    }

    @Test func jitterNeverReordersUnlessAsked() throws {
        var router = try Self.router()
        Self.apply("link device delay=20ms jitter=15ms", to: &router)
        let inOrder = Self.send(&router, count: 500, spacing: Self.millisecond / 2)
        #expect(inOrder.count == 500)
        #expect(inOrder.map(\.sent) == inOrder.map(\.sent).sorted(), "delivered in the order sent")
        let delays = inOrder.map { $0.delivered - $0.sent }
        #expect(delays.allSatisfy { $0 >= 5 * Self.millisecond })
        #expect(Set(delays).count > 10, "the delay varies")

        var reordering = try Self.router()
        Self.apply("link device delay=20ms jitter=15ms reorder=on", to: &reordering)
        let shuffled = Self.send(&reordering, count: 500, spacing: Self.millisecond / 2)
        #expect(shuffled.count == 500)
        #expect(shuffled.map(\.sent) != shuffled.map(\.sent).sorted())
        #expect(shuffled.allSatisfy { $0.delivered - $0.sent <= 35 * Self.millisecond + Self.millisecond / 10 })
    }

    @Test func lossDropsAboutItsShare() throws {
        var router = try Self.router(seed: 7)
        Self.apply("link device uplink loss=10%", to: &router)
        let delivered = Self.send(&router, count: 10000, spacing: 0)
        // 10% of 10000 has a standard deviation of 30: the seed is fixed, so this is exact per run.
        #expect((8800...9200).contains(delivered.count))
        #expect(router.statistics(link: 0).uplink.dropped[.loss] == UInt64(10000 - delivered.count))

        var total = try Self.router()
        Self.apply("link device loss=100%", to: &total)
        #expect(Self.send(&total, count: 100).isEmpty)
        var none = try Self.router()
        Self.apply("link device loss=0%", to: &none)
        #expect(Self.send(&none, count: 100).count == 100)
    }

    @Test func burstLossComesInRuns() throws {
        var router = try Self.router(seed: 3)
        // Enter the bad state 1% of packets, leave it 10%: bursts of 10 packets on average.
        Self.apply("link device uplink burst=1%,10%", to: &router)
        var lost: [Bool] = []
        for index in 0..<20000 {
            router.receive(TestPackets.udp6(from: Self.device, 1, to: Self.relay, 2), fromLink: 0, at: Int64(index))
            lost.append(router.deliveries(dueAt: Int64(index)).isEmpty)
        }
        let losses = lost.filter { $0 }.count
        var runs = 0
        for index in lost.indices where lost[index] && (index == 0 || !lost[index - 1]) { runs += 1 }
        // Stationary bad share 1/(1+10) ≈ 9%; mean run 10 packets. Independent 9% loss would give runs of ~1.1.
        #expect((1000...3000).contains(losses))
        #expect(Double(losses) / Double(runs) > 5)
        #expect(router.statistics(link: 0).uplink.dropped[.burst] == UInt64(losses))
    }

    @Test func theRateLimitSpacesPacketsAndTailDropsAFlood() throws {
        var router = try Self.router()
        // 8 Mbit/s is 1000 bytes per millisecond; a 10,000-byte queue holds 10 packets of 1000 bytes.
        Self.apply("link device uplink rate=8mbit queue=10000 bucket=1000", to: &router)
        let deliveries = Self.send(&router, count: 100, spacing: 0, size: 1000)
        // The first passes at once on the bucket's tokens, 10 wait in the queue; the rest are dropped.
        #expect(deliveries.count == 11)
        #expect(router.statistics(link: 0).uplink.dropped[.queue] == 89)
        for (index, delivery) in deliveries.enumerated() {
            #expect(delivery.delivered == Int64(index) * Self.millisecond, "one packet per millisecond")
        }
    }

    @Test func theRateLimitCarriesItsRateAndNoMore() throws {
        var router = try Self.router()
        Self.apply("link device uplink rate=16mbit queue=64KiB", to: &router)
        // 1500-byte packets every 0.5 ms offered: 24 Mbit/s into a 16 Mbit/s link for a second.
        let deliveries = Self.send(&router, count: 2000, spacing: Self.millisecond / 2, size: 1500)
        let last = try #require(deliveries.last?.delivered)
        let bytes = Double(deliveries.count * 1500)
        let bitsPerSecond = bytes * 8 / (Double(last) / 1e9)
        #expect(bitsPerSecond <= 16e6 * 1.01)
        #expect(bitsPerSecond >= 16e6 * 0.95)
        #expect((router.statistics(link: 0).uplink.dropped[.queue] ?? 0) > 0)
    }

    @Test func blackholeDropsEverythingUntilUp() throws {
        var router = try Self.router()
        Self.apply("link relay blackhole", to: &router)
        #expect(Self.send(&router, count: 10).isEmpty)
        #expect(router.statistics(link: 1).downlink.dropped[.blackhole] == 10)
        Self.apply("link relay up", to: &router)
        #expect(Self.send(&router, count: 10).count == 10)
    }

    @Test func cutDropsOldFlowsBothWaysWhileNewOnesPass() throws {
        var router = try Self.router()
        func roundTrip(_ port: UInt16, at now: Int64) -> (out: Bool, back: Bool) {
            router.receive(TestPackets.tcp6(from: Self.device, port, to: Self.relay, 443), fromLink: 0, at: now)
            let out = !router.deliveries(dueAt: now).isEmpty
            router.receive(TestPackets.tcp6(from: Self.relay, 443, to: Self.device, port), fromLink: 1, at: now)
            let back = !router.deliveries(dueAt: now).isEmpty
            return (out, back)
        }
        #expect(roundTrip(40000, at: 0) == (true, true))
        Self.apply("link device cut", to: &router)
        #expect(roundTrip(40000, at: 1) == (false, false), "the old flow is dead both ways")
        #expect(roundTrip(40001, at: 2) == (true, true), "a new flow passes")
        #expect(roundTrip(40001, at: 3) == (true, true), "and goes on passing")
        // The same ports over UDP are another flow.
        router.receive(TestPackets.udp6(from: Self.device, 40000, to: Self.relay, 443), fromLink: 0, at: 4)
        #expect(router.deliveries(dueAt: 4).count == 1)
        #expect(router.statistics(link: 0).uplink.dropped[.cut] == 1)
        #expect(router.statistics(link: 0).downlink.dropped[.cut] == 1)
        Self.apply("link device up", to: &router)
        #expect(roundTrip(40000, at: 5) == (true, true), "up clears the cut")
        Self.apply("link device cut", to: &router)
        #expect(roundTrip(40001, at: 6) == (false, false), "a second cut takes the flows begun after the first")
    }

    @Test func cutWorksForIPv4Too() throws {
        var router = try Self.router()
        router.receive(TestPackets.udp4(from: "169.254.1.1", 5000, to: "169.254.1.2", 53), fromLink: 0, at: 0)
        #expect(router.deliveries(dueAt: 0).count == 1)
        Self.apply("link relay cut", to: &router)
        router.receive(TestPackets.udp4(from: "169.254.1.1", 5000, to: "169.254.1.2", 53), fromLink: 0, at: 1)
        router.receive(TestPackets.udp4(from: "169.254.1.1", 5001, to: "169.254.1.2", 53), fromLink: 0, at: 1)
        #expect(router.deliveries(dueAt: 1).count == 1, "only the new flow")
        #expect(router.statistics(link: 1).downlink.dropped[.cut] == 1)
    }

    @Test func inFlightPacketsAreBounded() throws {
        var router = try LinkRouter(
            links: [
                LinkDescription(name: "a", prefixes: [IPPrefix("fd12:1::/64")!]),
                LinkDescription(name: "b", prefixes: [IPPrefix("fd12:2::/64")!]),
            ], random: SplitMix64(seed: 1), inFlightPacketLimit: 5)
        Self.apply("link a delay=1s", to: &router)
        for index in 0..<8 {
            router.receive(TestPackets.udp6(from: "fd12:1::2", 1, to: "fd12:2::2", 2), fromLink: 0, at: Int64(index))
        }
        #expect(router.inFlightPackets == 5)
        #expect(router.statistics(link: 0).uplink.dropped[.inFlight] == 3)
        #expect(router.deliveries(dueAt: 2_000_000_000).count == 5)
        #expect(router.inFlightPackets == 0)
        #expect(router.nextEventTime == nil)
    }

    @Test func anUndeliverablePacketCountsAsDropped() throws {
        var router = try Self.router()
        router.receive(TestPackets.udp6(from: Self.device, 1, to: Self.relay, 2, payload: 52), fromLink: 0, at: 0)
        let due = router.deliveries(dueAt: 0)
        router.recordUndeliverable(link: due[0].link, size: due[0].packet.count)
        let stats = router.statistics(link: 1).downlink
        #expect(stats.passedPackets == 0 && stats.passedBytes == 0)
        #expect(stats.dropped[.undeliverable] == 1)
    }

    @Test func theSameSeedRepeatsARun() throws {
        func run() throws -> [Int64] {
            var router = try Self.router(seed: 42)
            Self.apply("link device delay=10ms jitter=5ms loss=20%", to: &router)
            return Self.send(&router, count: 200, spacing: Self.millisecond).map(\.delivered)
        }
        #expect(try run() == run())
    }
}
