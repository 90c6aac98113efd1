import Foundation
import Glibc
import RelayClient
import TestSupport

/// Three herdr-relay processes on one Redis (append-only, fsync always) behind HAProxy run from
/// the shipped configuration, all on loopback: the cluster docs/relay.md describes.
final class RelayCluster {
    static let origin = "https://relay.test"
    let redis: RedisServer
    private(set) var nodes: [RelayProcess?]
    let haproxy: HAProxyProcess

    /// `environment`: extra limits for every node (e.g. `RELAY_DAILY_BYTE_QUOTA`).
    init(nodeCount: Int = 3, environment: [String: String] = [:]) throws {
        redis = try RedisServer(appendOnly: true)
        var started: [RelayProcess] = []
        for _ in 0..<nodeCount {
            started.append(
                try RelayProcess(
                    ["--origin", Self.origin, "--listen", "127.0.0.1:0", "--store", redis.url(), "--trust-proxy"],
                    environment: [
                        "ATTEST_REQUIRED": "false",
                        // Every test client is 127.0.0.1 to the nodes: lift the per-address caps.
                        "RELAY_MAX_SOCKETS_PER_IP": "100000", "RELAY_UPGRADES_PER_MINUTE": "100000",
                    ].merging(environment) { $1 }))
        }
        nodes = started
        haproxy = try HAProxyProcess(nodes: started.map(\.port))
    }

    /// The relay as clients see it: `https://relay.test`, reached at HAProxy's port.
    var endpoint: RelayEndpoint {
        // swift-format-ignore: NeverUseForceTry
        try! RelayEndpoint(parsing: Self.origin).connecting(toHost: "127.0.0.1", port: UInt16(haproxy.port), tls: false)
    }

    var http: RelayHTTPClient { RelayHTTPClient(endpoint: endpoint, timeout: 10) }

    /// SIGKILL: the node vanishes without closing anything or giving a lease back.
    func kill(node index: Int) {
        guard let node = nodes[index] else { return }
        node.process.signal(SIGKILL)
        _ = node.process.wait()
        nodes[index] = nil
    }

    /// `/metrics` of each live node, read directly (not through HAProxy, where it is refused).
    func metrics() -> [Int: [String: Int]] {
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
    func total(_ name: String) -> Int { metrics().values.reduce(0) { $0 + ($1[name] ?? 0) } }

    /// A field of a room's hash in Redis, read with redis-cli.
    func roomField(_ room: String, _ field: String) throws -> String {
        let result = try ProcessRunner.run(
            "redis-cli", ["-s", redis.socketPath, "HGET", "herdr-relay:room:\(room)", field], timeout: 15)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
