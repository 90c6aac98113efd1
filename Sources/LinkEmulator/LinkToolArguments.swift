/// herdr-link's command line, checked before anything is opened.
public struct LinkToolArguments: Equatable, Sendable {
    /// One `--link`: the emulator's name for the link, the namespace to make its TUN interface
    /// in, the interface's name, and the address prefixes its namespace owns.
    public struct Link: Equatable, Sendable {
        public let name: String
        public let namespace: String
        public let interface: String
        public let prefixes: [IPPrefix]
    }

    public var links: [Link] = []
    /// The random generator's seed; nil: a random one.
    public var seed: UInt64?
    public var help = false

    public static let maximumLinks = 64
    public static let maximumPrefixesPerLink = 16

    public static let usage = """
        usage: herdr-link --link name=NAME,netns=NAMESPACE,interface=IFNAME,route=PREFIX[,route=PREFIX...]
                          [--link ...] [--seed N]

        A userspace link emulator for tests and benchmarks. For each --link it opens a TUN device
        IFNAME (IFF_TUN, no packet information) inside the network namespace NAMESPACE (as made by
        `ip netns add`; the caller gives the interface its addresses and routes and brings it up).
        A packet read from one link goes to the link whose route holds its destination (the longest
        prefix wins; no match: dropped), through the first link's uplink impairments and the second's
        downlink impairments. The devices go away when herdr-link exits.

        It prints `ok ready` once every device is open, then reads commands on standard input, one
        a line (at most 4096 bytes), and answers each with one line: `ok …` or `error: …`.

          link NAME [uplink|downlink] KEY=VALUE...   change impairments (both directions by default)
          link NAME up|blackhole|cut                 set the state: blackhole drops every packet silently,
                                                     cut drops the flows (5-tuples) already seen on the
                                                     link while new ones pass; up clears both
          link NAME clear                            every impairment off
          stats NAME                                 state, then per direction: passed, bytes, dropped,
                                                     and drops per reason (blackhole cut loss burst queue
                                                     no-route malformed in-flight undeliverable)
          show NAME                                  state and impairments of both directions
          links                                      the links' names
          ping                                       nothing; answers ok
          quit                                       answers ok and exits

        Keys (not given: unchanged):
          delay=DURATION     one-way delay: 25ms, 1.5s, 250us, 0 (at most 60s)
          jitter=DURATION    each packet's delay is delay ± a uniform sample up to jitter
          reorder=on|off     whether jitter may reorder packets (off: the link stays in order)
          loss=PERCENT       independent loss: 1%, 0.5%
          burst=off|ENTER%,LEAVE%[,BADLOSS%[,GOODLOSS%]]
                             Gilbert-Elliott burst loss: per packet, the chance to enter and to
                             leave the bad state, and the loss in it (100%) and in the good state (0%)
          rate=off|N(bit|kbit|mbit|gbit)
                             bandwidth limit (a token bucket; kbit = 1000 bits), IP bytes counted
          queue=BYTES        the queue before the rate limit, tail drop when full: 256KiB, 1MiB
                             (default: 200 ms of the rate, at least 16KiB)
          bucket=BYTES       the token bucket's depth (default 1500)

        It exits 0 on `quit`, on the end of standard input, on SIGTERM, SIGINT or SIGHUP, and when
        the thread that started it ends (PR_SET_PDEATHSIG). The random generator's seed (--seed,
        else random; printed in `ok ready seed=N`) makes a run repeatable.
        """

    public init(parsing arguments: [String]) throws(LinkCommandError) {
        var index = 0
        func value(_ option: String) throws(LinkCommandError) -> String {
            index += 1
            guard index < arguments.count else { throw LinkCommandError("\(option) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--help", "-h": help = true
            case "--seed":
                let text = try value(argument)
                guard let seed = UInt64(text) else {
                    throw LinkCommandError("--seed must be a whole number, got \(text.prefix(32))")
                }
                self.seed = seed
            case "--link":
                guard links.count < Self.maximumLinks else {
                    throw LinkCommandError("at most \(Self.maximumLinks) links")
                }
                links.append(try Self.link(try value(argument)))
            default:
                throw LinkCommandError("unknown argument \(argument.prefix(64)); see --help")
            }
            index += 1
        }
        guard help || !links.isEmpty else { throw LinkCommandError("no --link given; see --help") }
        for (position, link) in links.enumerated() {
            guard !links[..<position].contains(where: { $0.name == link.name }) else {
                throw LinkCommandError("two links are named \(link.name)")
            }
            guard
                !links[..<position].contains(where: { $0.namespace == link.namespace && $0.interface == link.interface }
                )
            else { throw LinkCommandError("two links are \(link.interface) in \(link.namespace)") }
        }
    }

    /// Whether `text` is a name herdr-link takes: 1 to `maximum` ASCII letters, digits, '-', '_'
    /// or '.', not `.` or `..` (namespace and interface names become paths).
    public static func isName(_ text: String, maximum: Int) -> Bool {
        (1...maximum).contains(text.utf8.count) && text != "." && text != ".."
            && text.utf8.allSatisfy {
                ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5a) || ($0 >= 0x61 && $0 <= 0x7a)
                    || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".")
            }
    }

    static func link(_ text: String) throws(LinkCommandError) -> Link {
        var name: String?
        var namespace: String?
        var interface: String?
        var prefixes: [IPPrefix] = []
        guard text.utf8.count <= 2048 else { throw LinkCommandError("--link is longer than 2048 bytes") }
        for field in text.split(separator: ",") {
            let parts = field.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                throw LinkCommandError("--link: expected KEY=VALUE, got \(field.prefix(64))")
            }
            switch parts[0] {
            case "name":
                guard isName(parts[1], maximum: 32) else {
                    throw LinkCommandError(
                        "--link name=\(parts[1].prefix(64)): 1 to 32 letters, digits, '-', '_' or '.'")
                }
                name = parts[1]
            case "netns":
                guard isName(parts[1], maximum: 64) else {
                    throw LinkCommandError(
                        "--link netns=\(parts[1].prefix(64)): 1 to 64 letters, digits, '-', '_' or '.'")
                }
                namespace = parts[1]
            case "interface":
                // IFNAMSIZ is 16 with the terminating zero.
                guard isName(parts[1], maximum: 15) else {
                    throw LinkCommandError(
                        "--link interface=\(parts[1].prefix(64)): 1 to 15 letters, digits, '-', '_' or '.'")
                }
                interface = parts[1]
            case "route":
                guard let prefix = IPPrefix(parts[1]) else {
                    throw LinkCommandError("--link route=\(parts[1].prefix(64)): expected an address or ADDRESS/LENGTH")
                }
                guard prefixes.count < maximumPrefixesPerLink else {
                    throw LinkCommandError("--link: at most \(maximumPrefixesPerLink) routes per link")
                }
                prefixes.append(prefix)
            default:
                throw LinkCommandError("--link: unknown key \(parts[0].prefix(32)) (name, netns, interface, route)")
            }
        }
        guard let name, let namespace, let interface else {
            throw LinkCommandError("--link needs name=, netns= and interface=, got \(text.prefix(128))")
        }
        return Link(name: name, namespace: namespace, interface: interface, prefixes: prefixes)
    }
}
