import Foundation
import Glibc

/// A network namespace made for one test, joined to the root namespace by a veth pair that
/// carries addresses in 100.64.0.0/10 only (a random /24 in it, so concurrent runs do not clash).
/// Everything is removed by `remove()`, called from deinit too; the test calls it in a `defer`.
public final class TestNetworkNamespace {
    public let name: String
    /// The veth end in the root namespace, and the one inside.
    public let rootInterface: String
    public let innerInterface: String
    public let rootAddress: String
    public let innerAddress: String
    private var removed = false
    private var homeRootInterface: String?

    public init() throws {
        let tag = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        name = "herdr-t-\(tag)"
        rootInterface = "ht\(tag)r"  // at most 12 characters: within IFNAMSIZ
        innerInterface = "ht\(tag)i"
        // 100.64.0.0/10 spans second octets 64…127.
        let second = Int.random(in: 64...127)
        let third = Int.random(in: 0...255)
        rootAddress = "100.\(second).\(third).1"
        innerAddress = "100.\(second).\(third).2"
        let ip = try ProcessRunner.which("ip")
        let inUse = try ProcessRunner.run(ip, ["-o", "addr", "show", "to", "100.\(second).\(third).0/24"], check: true)
        guard inUse.stdout.isEmpty else { throw FixtureError("100.\(second).\(third).0/24 is in use here; run again") }
        do {
            for arguments in [
                ["netns", "add", name],
                ["link", "add", rootInterface, "type", "veth", "peer", "name", innerInterface],
                ["link", "set", innerInterface, "netns", name],
                ["addr", "add", "\(rootAddress)/24", "dev", rootInterface],
                ["link", "set", rootInterface, "up"],
                ["netns", "exec", name, "ip", "addr", "add", "\(innerAddress)/24", "dev", innerInterface],
                ["netns", "exec", name, "ip", "link", "set", innerInterface, "up"],
                ["netns", "exec", name, "ip", "link", "set", "lo", "up"],
            ] {
                let result = try ProcessRunner.run(ip, arguments, timeout: 10)
                guard result.status == 0 else {
                    throw FixtureError(
                        "ip \(arguments.joined(separator: " ")) failed (tests need root): \(result.stderr)")
                }
            }
        } catch {
            remove()
            throw error
        }
    }

    /// A second veth pair for a "home network": an IPv6 unique-local /64 (a random fdXX:… prefix,
    /// never Tailscale's fd7a:115c:a1e0::/48) and an IPv4 link-local /24 in 169.254.0.0/16. The
    /// addresses are written as the kernel prints them (no zero group, no leading zeros).
    public struct HomeLink: Sendable {
        public let rootInterface: String
        public let innerInterface: String
        public let rootIPv6: String
        public let innerIPv6: String
        public let rootIPv4: String
        public let innerIPv4: String
    }

    /// Adds the home link (removed with the namespace).
    public func addHomeLink() throws -> HomeLink {
        let tag = name.dropFirst("herdr-t-".count)
        var prefix: String
        repeat {
            prefix =
                "fd"
                + String(
                    format: "%02x:%x:%x", Int.random(in: 0...255), Int.random(in: 1...0xffff),
                    Int.random(in: 1...0xffff))
        } while prefix.hasPrefix("fd7a:115c")
        let third = Int.random(in: 1...254)
        let link = HomeLink(
            rootInterface: "hh\(tag)r", innerInterface: "hh\(tag)i", rootIPv6: "\(prefix)::1",
            innerIPv6: "\(prefix)::2",
            rootIPv4: "169.254.\(third).1", innerIPv4: "169.254.\(third).2")
        let ip = try ProcessRunner.which("ip")
        let inUse = try ProcessRunner.run(ip, ["-o", "addr", "show", "to", "169.254.\(third).0/24"], check: true)
        guard inUse.stdout.isEmpty else { throw FixtureError("169.254.\(third).0/24 is in use here; run again") }
        homeRootInterface = link.rootInterface
        for arguments in [
            ["link", "add", link.rootInterface, "type", "veth", "peer", "name", link.innerInterface],
            ["link", "set", link.innerInterface, "netns", name],
            // nodad: the addresses work at once, without duplicate address detection's wait.
            ["addr", "add", "\(link.rootIPv6)/64", "dev", link.rootInterface, "nodad"],
            ["addr", "add", "\(link.rootIPv4)/24", "dev", link.rootInterface],
            ["link", "set", link.rootInterface, "up"],
            ["netns", "exec", name, "ip", "addr", "add", "\(link.innerIPv6)/64", "dev", link.innerInterface, "nodad"],
            ["netns", "exec", name, "ip", "addr", "add", "\(link.innerIPv4)/24", "dev", link.innerInterface],
            ["netns", "exec", name, "ip", "link", "set", link.innerInterface, "up"],
        ] {
            let result = try ProcessRunner.run(ip, arguments, timeout: 10)
            guard result.status == 0 else {
                throw FixtureError("ip \(arguments.joined(separator: " ")) failed: \(result.stderr)")
            }
        }
        return link
    }

    /// Takes the home link's inner end down (the device's Wi-Fi going away: its addresses and
    /// routes go with it), or brings it back with its addresses.
    public func setHomeLink(_ link: HomeLink, up: Bool) throws {
        var commands = [["ip", "link", "set", link.innerInterface, up ? "up" : "down"]]
        if up {
            // IPv6 addresses are flushed when a link goes down: put them back.
            commands.append(["ip", "addr", "replace", "\(link.innerIPv6)/64", "dev", link.innerInterface, "nodad"])
            commands.append(["ip", "addr", "replace", "\(link.innerIPv4)/24", "dev", link.innerInterface])
        }
        for command in commands {
            let result = try run(try ProcessRunner.which(command[0]), Array(command.dropFirst()), timeout: 10)
            guard result.status == 0 else {
                throw FixtureError("\(command.joined(separator: " ")) failed: \(result.stderr)")
            }
        }
    }

    deinit { remove() }

    /// Deletes the namespace (which deletes the veth end inside, and with it the pair) and the
    /// root end, in case the pair outlived it. Idempotent.
    public func remove() {
        guard !removed else { return }
        removed = true
        guard let ip = try? ProcessRunner.which("ip") else { return }
        _ = try? ProcessRunner.run(ip, ["netns", "del", name], timeout: 10)
        _ = try? ProcessRunner.run(ip, ["link", "del", rootInterface], timeout: 10)
        if let homeRootInterface { _ = try? ProcessRunner.run(ip, ["link", "del", homeRootInterface], timeout: 10) }
    }

    /// True while the namespace or the root veth end exists.
    public var exists: Bool {
        guard let ip = try? ProcessRunner.which("ip"),
            let namespaces = try? ProcessRunner.run(ip, ["netns", "list"], timeout: 10),
            let links = try? ProcessRunner.run(ip, ["-o", "link", "show"], timeout: 10)
        else { return true }
        return namespaces.stdout.split(separator: "\n").contains {
            $0.split(separator: " ").first.map(String.init) == name
        }
            || links.stdout.contains(" \(rootInterface)@") || links.stdout.contains(" \(rootInterface):")
    }

    /// Runs a program inside the namespace.
    public func run(_ executable: String, _ arguments: [String], timeout: Double = 20) throws -> ProcessResult {
        try ProcessRunner.run(
            try ProcessRunner.which("ip"), ["netns", "exec", name, executable] + arguments, timeout: timeout)
    }
}
