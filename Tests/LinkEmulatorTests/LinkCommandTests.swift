import LinkEmulator
import Testing

@Suite struct LinkCommandTests {
    @Test func parsesEveryCommand() throws {
        #expect(try LinkCommand(parsing: "link wifi blackhole") == .setState(link: "wifi", .blackhole))
        #expect(try LinkCommand(parsing: "link wifi cut") == .setState(link: "wifi", .cut))
        #expect(try LinkCommand(parsing: "link wifi up") == .setState(link: "wifi", .up))
        #expect(try LinkCommand(parsing: "link wifi clear") == .clear(link: "wifi"))
        #expect(try LinkCommand(parsing: "stats wifi") == .stats(link: "wifi"))
        #expect(try LinkCommand(parsing: "show wifi") == .show(link: "wifi"))
        #expect(try LinkCommand(parsing: "links") == .links)
        #expect(try LinkCommand(parsing: "ping") == .ping)
        #expect(try LinkCommand(parsing: "quit") == .quit)
        #expect(
            try LinkCommand(parsing: "link wifi delay=25ms jitter=2ms loss=1% burst=1%,30% rate=20mbit queue=256KiB")
                == .configure(
                    link: "wifi", direction: .both,
                    changes: [
                        .delay(.milliseconds(25)), .jitter(.milliseconds(2)), .loss(0.01),
                        .burst(GilbertElliott(enterBad: 0.01, leaveBad: 0.3)), .rate(20_000_000), .queue(262_144),
                    ]))
        #expect(
            try LinkCommand(parsing: "link cell uplink  delay=1.5s\tbucket=0 reorder=on")
                == .configure(
                    link: "cell", direction: .uplink,
                    changes: [.delay(.milliseconds(1500)), .bucket(0), .reorder(true)]))
        #expect(
            try LinkCommand(parsing: "link cell downlink burst=2%,20%,50%,0.5% rate=off")
                == .configure(
                    link: "cell", direction: .downlink,
                    changes: [
                        .burst(GilbertElliott(enterBad: 0.02, leaveBad: 0.2, lossInBad: 0.5, lossInGood: 0.005)),
                        .rate(nil),
                    ]))
    }

    @Test func valuesAtTheirBounds() throws {
        func setting(_ text: String) throws -> LinkSetting { try LinkSetting(parsing: text) }
        #expect(try setting("delay=0") == .delay(.zero))
        #expect(try setting("delay=60s") == .delay(.seconds(60)))
        #expect(try setting("delay=250us") == .delay(.microseconds(250)))
        #expect(try setting("delay=100ns") == .delay(.nanoseconds(100)))
        #expect(try setting("loss=0%") == .loss(0))
        #expect(try setting("loss=100%") == .loss(1))
        #expect(try setting("rate=1kbit") == .rate(1000))
        #expect(try setting("rate=100gbit") == .rate(100_000_000_000))
        #expect(try setting("rate=1.5mbit") == .rate(1_500_000))
        #expect(try setting("queue=1500") == .queue(1500))
        #expect(try setting("queue=64MiB") == .queue(64 << 20))
        #expect(try setting("bucket=16MiB") == .bucket(16 << 20))
        #expect(try setting("queue=2000B") == .queue(2000))
    }

    @Test(arguments: [
        "delay=60.001s", "delay=-1ms", "delay=1", "delay=ms", "delay=1e3ms", "delay=.5ms", "delay=5.ms", "jitter=1h",
        "loss=100.1%", "loss=1", "loss=-1%", "loss=%", "loss=0.01", "burst=1%", "burst=1%,2%,3%,4%,5%", "burst=1,2",
        "rate=999bit", "rate=100.1gbit", "rate=20", "rate=20mbps", "queue=1499", "queue=64.1MiB", "queue=64kb",
        "bucket=16.5MiB", "reorder=yes", "speed=1", "delay", "=1", "delay=1234567890123ms",
    ])
    func refusesBadValues(_ text: String) {
        #expect(throws: LinkCommandError.self) { try LinkSetting(parsing: text) }
    }

    @Test(arguments: [
        "", "   ", "link", "link wifi", "link wifi uplink", "link wifi bogus", "stats", "stats a b", "links x",
        "quit now",
        "frobnicate", "link wifi up delay=1ms",
    ])
    func refusesBadCommands(_ line: String) {
        #expect(throws: LinkCommandError.self) { try LinkCommand(parsing: line) }
    }

    @Test func limitsLinesAndSettings() throws {
        let settings = Array(repeating: "delay=1ms", count: LinkCommand.maximumSettings)
        _ = try LinkCommand(parsing: "link w " + settings.joined(separator: " "))
        #expect(throws: LinkCommandError.self) {
            try LinkCommand(parsing: "link w " + (settings + ["loss=1%"]).joined(separator: " "))
        }
        let longest = "ping" + String(repeating: " ", count: LinkCommand.maximumLineBytes - 4)
        #expect(try LinkCommand(parsing: longest) == .ping)
        #expect(throws: LinkCommandError.self) { try LinkCommand(parsing: longest + " ") }
    }

    @Test func theLineBufferSplitsAndBoundsLines() {
        var buffer = ControlLineBuffer()
        #expect(buffer.append(Array("pi".utf8)) == [])
        #expect(buffer.append(Array("ng\nlinks\r\nst".utf8)) == [.text("ping"), .text("links")])
        let long = [UInt8](repeating: UInt8(ascii: "x"), count: LinkCommand.maximumLineBytes + 2)
        #expect(buffer.append(long) == [.tooLong], "reported once, when the line passes the limit")
        #expect(
            buffer.append(Array("more of the long line\nquit\n".utf8)) == [.text("quit")],
            "the rest of a long line is skipped")
        var exact = ControlLineBuffer()
        let fits = String(repeating: "y", count: LinkCommand.maximumLineBytes)
        #expect(exact.append(Array((fits + "\n").utf8)) == [.text(fits)])
        #expect(exact.append(Array((fits + "\r\n").utf8)) == [.text(fits)])
    }

    @Test func theRouterAnswersCommands() throws {
        var router = try LinkRouterTests.router()
        #expect(router.execute(.links) == "ok device relay")
        #expect(router.execute(try LinkCommand(parsing: "link device uplink delay=25ms rate=20mbit")) == "ok")
        #expect(router.execute(try LinkCommand(parsing: "link device delay=5ms")) == "ok")
        let shown = router.execute(.show(link: "device"))
        #expect(
            shown.hasPrefix(
                "ok device state=up uplink delay=5ms jitter=0ms reorder=off loss=0% burst=off rate=20000000bit queue=500000 "
            ))
        #expect(shown.contains(" downlink delay=5ms jitter=0ms reorder=off loss=0% burst=off rate=off "))
        #expect(router.execute(try LinkCommand(parsing: "link device clear")) == "ok")
        #expect(router.impairments(link: 0, .uplink) == LinkImpairments())
        #expect(router.execute(.stats(link: "nowhere")).hasPrefix("error: no link named nowhere"))
        #expect(router.execute(.setState(link: "relay", .cut)) == "ok")
        let stats = router.execute(.stats(link: "relay"))
        #expect(
            stats.hasPrefix("ok relay state=cut uplink.passed=0 uplink.bytes=0 uplink.dropped=0 uplink.blackhole=0 "))
        #expect(stats.hasSuffix(" downlink.in-flight=0 downlink.undeliverable=0"))
    }

    @Test func theToolsArguments() throws {
        let arguments = try LinkToolArguments(parsing: [
            "--link", "name=wifi,netns=herdr-e-1-device,interface=wifi,route=fd12:1::/64,route=169.254.1.1/32",
            "--link", "name=relay,netns=herdr-e-1-relay,interface=relay", "--seed", "42",
        ])
        #expect(arguments.links.map(\.name) == ["wifi", "relay"])
        #expect(arguments.links[0].prefixes == [IPPrefix("fd12:1::/64")!, IPPrefix("169.254.1.1/32")!])
        #expect(arguments.seed == 42)
        #expect(try LinkToolArguments(parsing: ["--help"]).help)
        for bad in [
            [], ["--link"], ["--seed", "x", "--link", "name=a,netns=n,interface=i"], ["--bogus"],
            ["--link", "name=a,netns=n"], ["--link", "name=a,netns=n,interface=sixteen-chars-xx"],
            ["--link", "name=a,netns=../etc,interface=i"], ["--link", "name=a,netns=n/x,interface=i"],
            ["--link", "name=a,netns=n,interface=i,route=fd12::/200"],
            ["--link", "name=a,netns=n,interface=i,colour=red"],
            ["--link", "name=a,netns=n,interface=i", "--link", "name=a,netns=m,interface=j"],
            ["--link", "name=a,netns=n,interface=i", "--link", "name=b,netns=n,interface=i"],
            [
                "--link",
                "name=a,netns=n,interface=i," + Array(repeating: "route=fd12::/64", count: 17).joined(separator: ","),
            ],
        ] {
            #expect(throws: LinkCommandError.self, "\(bad)") { try LinkToolArguments(parsing: bad) }
        }
    }
}
