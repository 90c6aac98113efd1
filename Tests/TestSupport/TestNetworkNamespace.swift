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

    deinit { remove() }

    /// Deletes the namespace (which deletes the veth end inside, and with it the pair) and the
    /// root end, in case the pair outlived it. Idempotent.
    public func remove() {
        guard !removed else { return }
        removed = true
        guard let ip = try? ProcessRunner.which("ip") else { return }
        _ = try? ProcessRunner.run(ip, ["netns", "del", name], timeout: 10)
        _ = try? ProcessRunner.run(ip, ["link", "del", rootInterface], timeout: 10)
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
