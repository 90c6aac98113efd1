import CSystem
import Foundation
import Glibc
import LinkEmulator

/// The network namespaces of one run joined by herdr-link, the userspace link emulator: each
/// link is a TUN interface in its namespace, and herdr-link routes between them with each
/// link's delay, loss, rate limit and state, changeable mid-run. Addresses come only from a
/// random unique-local fdXX::/48 (never fd7a:115c:a1e0::/48), 169.254.0.0/16 and, for tailnet
/// links, 100.64.0.0/10. Every namespace gets /etc/netns/NAME/hosts naming the links' host
/// names and a resolv.conf with no reachable server, so other names fail at once.
///
/// Everything is removed by `remove()`, called from deinit too: herdr-link (its interfaces go
/// with it), the processes started with `interactive(in:…)`, the namespaces and their /etc/netns.
public final class EmulatedNetwork: @unchecked Sendable {
    /// What a link stands for, which decides its addresses and routes.
    public enum LinkKind: Sendable {
        /// A path to the internet (Wi-Fi, cellular, a server's uplink): a unique-local IPv6
        /// address and a 169.254.0.0/16 IPv4 one (none in an IPv6-only namespace), and the
        /// namespace's default routes through it.
        case internet
        /// A tailnet interface: a 100.64.0.0/10 address (and a unique-local one) with routes for
        /// the tailnet's ranges only, as tailscale0 has.
        case tailnet
    }

    /// One link as the test asks for it.
    public struct LinkSpec: Sendable {
        /// The emulator's name for the link, unique in the network; also its interface's name (≤ 15 characters).
        public let name: String
        public let kind: LinkKind
        /// Names that resolve to the link's addresses in every namespace (`relay.test`).
        public let hostNames: [String]
        /// The routes' metric; the namespace prefers its links with lower ones. nil: 100, 200… in order.
        public let metric: Int?

        public init(_ name: String, kind: LinkKind = .internet, hostNames: [String] = [], metric: Int? = nil) {
            self.name = name
            self.kind = kind
            self.hostNames = hostNames
            self.metric = metric
        }
    }

    /// One namespace: a role (`device`, `relay`, `computer`), its links, and whether it has no
    /// IPv4 address at all (an IPv6-only network, as several mobile carriers run).
    public struct NamespaceSpec: Sendable {
        public let role: String
        public let links: [LinkSpec]
        public let ipv6Only: Bool

        public init(_ role: String, links: [LinkSpec], ipv6Only: Bool = false) {
            self.role = role
            self.links = links
            self.ipv6Only = ipv6Only
        }
    }

    /// A link as made: where it is and its addresses (written as the kernel prints them).
    public struct Link: Sendable {
        public let name: String
        public let kind: LinkKind
        public let role: String
        /// The network namespace's name (for `ip netns exec`).
        public let namespace: String
        public let interface: String
        public let metric: Int
        public let ipv6: String
        public let ipv4: String?
        public let hostNames: [String]
        /// The policy routing table of the link's source addresses, when its namespace has several links.
        let table: Int?
        let ipv6Prefix: String
        let tailnetIPv6Range: String
    }

    /// A random hex tag in every name of the run.
    public let tag: String
    /// The run's unique-local /48, `fdXX:XXXX:XXXX`.
    public let ipv6Prefix: String
    /// The links by name, in the order given.
    public let links: [Link]
    private let roles: [String: String]
    private let ip: String
    private var emulator: LinkEmulatorProcess?
    /// What `interactive` started, held (and so alive) until `remove()`.
    private var started: [InteractiveProcess] = []
    private var removed = false
    private let lock = NSLock()
    /// Host names left out of every namespace's hosts file (`setName(_:resolves:)`).
    private var unresolvable: Set<String> = []

    /// Makes the namespaces, starts herdr-link (`herdrLink`, the one built beside the tests by
    /// default) and gives every interface its addresses and routes.
    public init(_ namespaces: [NamespaceSpec], herdrLink: String = LinkEmulatorProcess.executable) throws {
        // A write to a peer that died must fail with EPIPE, not end the test process.
        signal(SIGPIPE, SIG_IGN)
        tag = String(format: "%06x", UInt32.random(in: 0...0xff_ffff))
        ip = try ProcessRunner.which("ip")
        var prefix: String
        repeat {
            prefix = String(
                format: "fd%02x:%x:%x", Int.random(in: 0...255), Int.random(in: 1...0xffff), Int.random(in: 1...0xffff))
        } while prefix.hasPrefix("fd7a:115c:a1e")
        ipv6Prefix = prefix
        let linkLocalThird = Int.random(in: 1...254)
        let tailnetSecond = Int.random(in: 64...127)
        let tailnetThird = Int.random(in: 0...255)
        var roles: [String: String] = [:]
        var links: [Link] = []
        for namespace in namespaces {
            guard LinkToolArguments.isName(namespace.role, maximum: 20), roles[namespace.role] == nil else {
                throw FixtureError("namespace role \(namespace.role): 1 to 20 letters, digits, '-', '_', unique")
            }
            let name = "herdr-e-\(tag)-\(namespace.role)"
            roles[namespace.role] = name
            for (position, spec) in namespace.links.enumerated() {
                let index = links.count + 1
                guard LinkToolArguments.isName(spec.name, maximum: 15), !links.contains(where: { $0.name == spec.name })
                else { throw FixtureError("link \(spec.name): 1 to 15 letters, digits, '-', '_', unique") }
                guard index < 200 else { throw FixtureError("at most 199 links") }
                let subnet = spec.kind == .tailnet ? 0x8000 + index : index
                let ipv4: String?
                switch spec.kind {
                case .internet: ipv4 = namespace.ipv6Only ? nil : "169.254.\(linkLocalThird).\(index)"
                case .tailnet: ipv4 = namespace.ipv6Only ? nil : "100.\(tailnetSecond).\(tailnetThird).\(index)"
                }
                links.append(
                    Link(
                        name: spec.name, kind: spec.kind, role: namespace.role, namespace: name, interface: spec.name,
                        metric: spec.metric ?? (position + 1) * 100,
                        ipv6: "\(prefix):\(String(subnet, radix: 16))::2", ipv4: ipv4, hostNames: spec.hostNames,
                        table: namespace.links.count > 1 ? 100 + index : nil,
                        ipv6Prefix: "\(prefix):\(String(subnet, radix: 16))::/64",
                        tailnetIPv6Range: "\(prefix):8000::/49"))
            }
        }
        self.roles = roles
        self.links = links
        do {
            try build(namespaces, herdrLink: herdrLink)
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    /// The namespace's name for `role`.
    public func namespace(_ role: String) throws -> String {
        guard let name = roles[role] else { throw FixtureError("no namespace for role \(role)") }
        return name
    }

    public func link(_ name: String) throws -> Link {
        guard let link = links.first(where: { $0.name == name }) else { throw FixtureError("no link named \(name)") }
        return link
    }

    /// Every namespace name of the run.
    public var namespaceNames: [String] { roles.values.sorted() }

    private func build(_ namespaces: [NamespaceSpec], herdrLink: String) throws {
        Self.removeAbandoned(ip: ip)
        let existing = try ProcessRunner.run(ip, ["netns", "list"], timeout: 10, check: true).stdout
        for name in roles.values where existing.contains(name) {
            throw FixtureError("namespace \(name) exists; run again")
        }
        for name in roles.values.sorted() {
            try ip(["netns", "add", name])
            try ip(["-n", name, "link", "set", "lo", "up"])
            try writeEtc(for: name)
        }
        try startEmulator(herdrLink)
        for namespace in namespaces {
            let name = try self.namespace(namespace.role)
            var commands: [[String]] = [[], [], []]
            for link in links where link.namespace == name {
                for (family, lines) in configuration(of: link, withRules: true).enumerated() {
                    commands[family] += lines
                }
            }
            try batch(name, commands)
        }
    }

    /// The `ip -batch` lines that give `link` its addresses and routes (and, once, its policy
    /// rules): those for any family, then IPv6's, then IPv4's (a batch line takes no `-6`).
    private func configuration(of link: Link, withRules: Bool) -> [[String]] {
        var general = [
            "link set \(link.interface) up",
            // nodad: the address works at once, without duplicate address detection's wait.
            "addr replace \(link.ipv6)/64 dev \(link.interface) nodad",
        ]
        if let ipv4 = link.ipv4 { general.append("addr replace \(ipv4)/32 dev \(link.interface)") }
        var ipv6: [String] = []
        var ipv4: [String] = []
        let destination6 = link.kind == .tailnet ? link.tailnetIPv6Range : "default"
        ipv6.append("route replace \(destination6) dev \(link.interface) metric \(link.metric)")
        if link.ipv4 != nil {
            let destination4 = link.kind == .tailnet ? "100.64.0.0/10" : "default"
            ipv4.append("route replace \(destination4) dev \(link.interface) metric \(link.metric)")
        }
        if let table = link.table {
            // What is sent from the link's own address leaves through the link, as on a phone
            // whose Wi-Fi and cellular each have their own routes (a tailnet's: its ranges only).
            ipv6.append("route replace \(destination6) dev \(link.interface) table \(table)")
            if withRules { ipv6.append("rule add from \(link.ipv6) table \(table) priority \(table)") }
            if let address = link.ipv4 {
                let destination4 = link.kind == .tailnet ? "100.64.0.0/10" : "default"
                ipv4.append("route replace \(destination4) dev \(link.interface) table \(table)")
                if withRules { ipv4.append("rule add from \(address) table \(table) priority \(table)") }
            }
        }
        return [general, ipv6, ipv4]
    }

    /// Makes `host` resolve in every namespace again, or stop resolving there (a name whose DNS
    /// is gone with the network). The hosts files are rewritten in place: a program started with
    /// `ip netns exec` sees them through a bind mount of the file itself.
    public func setName(_ host: String, resolves: Bool) throws {
        lock.withLock {
            if resolves { unresolvable.remove(host) } else { unresolvable.insert(host) }
        }
        for name in roles.values { try writeEtc(for: name) }
    }

    private func writeEtc(for name: String) throws {
        let directory = URL(fileURLWithPath: "/etc/netns/\(name)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var hosts = "127.0.0.1 localhost\n::1 localhost\n"
        let hidden = lock.withLock { unresolvable }
        for link in links {
            for host in link.hostNames where !hidden.contains(host) {
                hosts += "\(link.ipv6) \(host)\n"
                if let ipv4 = link.ipv4 { hosts += "\(ipv4) \(host)\n" }
            }
        }
        try writeText(hosts, to: directory.appendingPathComponent("hosts"))
        // No server listens on the namespace's loopback: a name not in hosts fails at once.
        try writeText(
            "# herdr EmulatedNetwork: no name server here\nnameserver 127.0.0.1\noptions timeout:1 attempts:1\n",
            to: directory.appendingPathComponent("resolv.conf"))
    }

    private func startEmulator(_ herdrLink: String) throws {
        var arguments: [String] = []
        for link in links {
            var routes = ["route=\(link.ipv6Prefix)"]
            if let ipv4 = link.ipv4 { routes.append("route=\(ipv4)/32") }
            arguments += [
                "--link",
                (["name=\(link.name)", "netns=\(link.namespace)", "interface=\(link.interface)"] + routes)
                    .joined(separator: ","),
            ]
        }
        let started = try LinkEmulatorProcess(arguments, executable: herdrLink)
        lock.withLock { emulator = started }
    }

    /// Sends one control line to herdr-link and returns its answer (`ok …`); throws on `error: …`.
    @discardableResult
    public func command(_ line: String) throws -> String {
        guard let emulator = lock.withLock({ emulator }) else { throw FixtureError("the emulator is not running") }
        return try emulator.command(line)
    }

    /// Changes a link's impairments (`delay=25ms loss=1%`, herdr-link's keys; see `herdr-link
    /// --help`), both directions unless one is named.
    public func impair(_ link: String, _ settings: String, direction: LinkDirectionSelector = .both) throws {
        let which = direction == .both ? "" : " \(direction.rawValue)"
        try command("link \(link)\(which) \(settings)")
    }

    /// Sets a link's state: up, blackhole (every packet dropped, the interface stays up) or cut
    /// (the flows seen so far dropped, new ones pass).
    public func setState(_ link: String, _ state: LinkState) throws { try command("link \(link) \(state.rawValue)") }

    /// The link's counters from `stats`: `uplink.passed`, `downlink.bytes`, `uplink.loss`… by name.
    public func statistics(_ link: String) throws -> [String: UInt64] {
        let answer = try command("stats \(link)")
        var fields: [String: UInt64] = [:]
        for word in answer.split(separator: " ") {
            let parts = word.split(separator: "=", maxSplits: 1)
            if parts.count == 2, let value = UInt64(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }

    /// Takes a link's interface down in its namespace, its addresses flushed first (as when
    /// Wi-Fi drops its association: the addresses and routes go, and netlink watchers see it),
    /// or brings it back up with its addresses and routes.
    public func setInterface(_ name: String, up: Bool) throws {
        let link = try self.link(name)
        if up {
            try batch(link.namespace, configuration(of: link, withRules: false))
        } else {
            try batch(
                link.namespace, [["addr flush dev \(link.interface)", "link set \(link.interface) down"], [], []])
        }
    }

    /// Takes a link's addresses away, its link and routes left up: the first moment of an
    /// interface going down.
    public func flushAddresses(_ name: String) throws {
        let link = try self.link(name)
        try batch(link.namespace, [["addr flush dev \(link.interface)"], [], []])
    }

    /// Runs a program in a namespace through `ip netns exec` (so /etc/netns applies) and waits for it.
    @discardableResult
    public func run(
        in role: String, _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        input: [UInt8] = [], timeout: Double = 30
    ) throws -> ProcessResult {
        let path = executable.hasPrefix("/") ? executable : try ProcessRunner.which(executable)
        return try ProcessRunner.run(
            ip, ["netns", "exec", try namespace(role), path] + arguments, environment: environment, input: input,
            timeout: timeout)
    }

    /// Starts a program in a namespace through `ip netns exec`, driven through its pipes; kept
    /// running until it ends or `remove()` kills it (the test need not hold it).
    public func interactive(
        in role: String, _ executable: String, _ arguments: [String],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> InteractiveProcess {
        let path = executable.hasPrefix("/") ? executable : try ProcessRunner.which(executable)
        let process = try InteractiveProcess(
            ip, ["netns", "exec", try namespace(role), path] + arguments, environment: environment)
        lock.withLock { started.append(process) }
        return process
    }

    /// The emulator's process (to see that it ends with the network).
    public var emulatorProcess: ChildProcess? { lock.withLock { emulator?.process } }

    /// Stops herdr-link (end of its input, then SIGKILL after 5 s), kills what `interactive`
    /// started and still runs, deletes the namespaces and their /etc/netns. Idempotent.
    public func remove() {
        let (emulator, started): (LinkEmulatorProcess?, [InteractiveProcess]) = lock.withLock {
            guard !removed else { return (nil, []) }
            removed = true
            defer { self.started = [] }
            return (self.emulator, self.started)
        }
        for process in started where process.process.isRunning {
            process.signal(SIGKILL)
            _ = process.wait(timeout: 10)
        }
        emulator?.stop()
        for name in roles.values {
            _ = try? ProcessRunner.run(ip, ["netns", "del", name], timeout: 10)
            try? FileManager.default.removeItem(atPath: "/etc/netns/\(name)")
        }
    }

    /// The run's namespaces still listed by `ip netns list`, and its /etc/netns directories
    /// still there (empty once `remove()` is done).
    public var leftovers: [String] {
        let listed = (try? ProcessRunner.run(ip, ["netns", "list"], timeout: 10).stdout) ?? ""
        let names = Set(listed.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        return roles.values.sorted().flatMap { name in
            (names.contains(name) ? ["namespace \(name)"] : [])
                + (FileManager.default.fileExists(atPath: "/etc/netns/\(name)") ? ["/etc/netns/\(name)"] : [])
        }
    }

    private func ip(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(ip, arguments, timeout: 10)
        guard result.status == 0 else {
            throw FixtureError("ip \(arguments.joined(separator: " ")) failed (tests need root): \(result.stderr)")
        }
    }

    /// Runs `ip -n NAMESPACE -batch -` on the lines for any family, then with -6 and -4 on theirs.
    private func batch(_ namespace: String, _ families: [[String]]) throws {
        for (lines, family) in zip(families, [[], ["-6"], ["-4"]]) where !lines.isEmpty {
            let result = try ProcessRunner.run(
                ip, ["-n", namespace] + family + ["-batch", "-"],
                input: Array(lines.joined(separator: "\n").utf8 + [10]),
                timeout: 10)
            guard result.status == 0 else {
                throw FixtureError(
                    "ip -n \(namespace) \(family.joined()) -batch failed: \(result.stderr)\n\(lines.joined(separator: "\n"))"
                )
            }
        }
    }
}
