import Foundation
import Glibc

/// Three herdr-relay processes on one Redis (append-only, fsync always) behind HAProxy run from
/// the shipped configuration, all on loopback: the cluster docs/relay.md describes.
public final class RelayCluster {
    /// The origin the nodes are told they serve.
    public let origin: String
    public let redis: RedisServer
    public private(set) var nodes: [RelayProcess?]
    public let haproxy: HAProxyProcess
    private let nodeArguments: [String]
    private let nodeEnvironment: [String: String]
    private let nodePorts: [UInt16]

    /// `environment`: extra limits for every node (e.g. `RELAY_DAILY_BYTE_QUOTA`).
    /// `loopbackOrigin`: the origin is HAProxy's own `http://127.0.0.1:PORT`, so our programs
    /// (which allow plain http to a loopback relay only) reach it as they would a real relay;
    /// otherwise it is `https://relay.test` and clients connect to HAProxy's port by hand.
    public init(nodeCount: Int = 3, environment: [String: String] = [:], loopbackOrigin: Bool = false) throws {
        redis = try RedisServer(appendOnly: true)
        let frontPort = try SSHServer.freePort(on: "127.0.0.1")
        origin = loopbackOrigin ? "http://127.0.0.1:\(frontPort)" : "https://relay.test"
        nodeArguments = ["--origin", origin, "--store", redis.url(), "--trust-proxy"]
        nodeEnvironment = [
            "ATTEST_REQUIRED": "false",
            // Every test client is 127.0.0.1 to the nodes: lift the per-address caps.
            "RELAY_MAX_SOCKETS_PER_IP": "100000", "RELAY_UPGRADES_PER_MINUTE": "100000",
        ].merging(environment) { $1 }
        var started: [RelayProcess] = []
        for _ in 0..<nodeCount {
            started.append(try RelayProcess(["--listen", "127.0.0.1:0"] + nodeArguments, environment: nodeEnvironment))
        }
        nodes = started
        nodePorts = started.map(\.port)
        haproxy = try HAProxyProcess(nodes: nodePorts, port: frontPort)
    }

    /// SIGKILL: the node vanishes without closing anything or giving a lease back.
    public func kill(node index: Int) {
        guard let node = nodes[index] else { return }
        node.process.signal(SIGKILL)
        _ = node.process.wait()
        nodes[index] = nil
    }

    /// Starts a node killed before on its old port (where HAProxy still looks for it).
    public func restart(node index: Int) throws {
        guard nodes[index] == nil else { return }
        nodes[index] = try RelayProcess(
            ["--listen", "127.0.0.1:\(nodePorts[index])"] + nodeArguments, environment: nodeEnvironment)
    }

    /// `/metrics` of each live node, read directly (not through HAProxy, where it is refused).
    public func metrics() -> [Int: [String: Int]] {
        var all: [Int: [String: Int]] = [:]
        for (index, node) in nodes.enumerated() {
            guard let node, let page = LoopbackHTTP.get(port: node.port, path: "/metrics"), page.status == 200 else {
                continue
            }
            all[index] = LoopbackHTTP.samples(page.body)
        }
        return all
    }

    /// A metric summed over the live nodes.
    public func total(_ name: String) -> Int { metrics().values.reduce(0) { $0 + ($1[name] ?? 0) } }

    /// The live nodes holding at least one room's lease.
    public func nodesHoldingRooms() -> [Int] {
        metrics().filter { ($0.value["relay_rooms_leased"] ?? 0) > 0 }.map(\.key).sorted()
    }

    /// A field of a room's hash in Redis, read with redis-cli.
    public func roomField(_ room: String, _ field: String) throws -> String {
        let result = try ProcessRunner.run(
            "redis-cli", ["-s", redis.socketPath, "HGET", "herdr-relay:room:\(room)", field], timeout: 15)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
