import Foundation
import Glibc

/// A real `haproxy` in front of relay nodes, run from the repository's shipped configuration
/// (contrib/haproxy/herdr-relay.cfg) with the node addresses in its environment, plus a stats
/// socket the test reads to see which nodes the health checks hold up.
public final class HAProxyProcess {
    public let port: Int
    public let directory: TemporaryDirectory
    private let process: ChildProcess
    private let output: Int32

    /// The shipped configuration file.
    public static var shippedConfiguration: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("contrib/haproxy/herdr-relay.cfg").path
    }

    private var statsSocket: String { directory.file("stats.sock").path }

    /// Starts HAProxy on `port` (a free loopback port unless given) for `nodes` (loopback ports, as
    /// many as the shipped configuration has `server` lines) and waits until every node is UP.
    public init(nodes: [UInt16], port: Int? = nil) throws {
        directory = try TemporaryDirectory(prefix: "herdr-haproxy-")
        self.port = try port ?? SSHServer.freePort(on: "127.0.0.1")
        let extra = directory.file("test.cfg")
        try Data("global\n    stats socket \(directory.file("stats.sock").path) mode 600 level admin\n".utf8)
            .write(to: extra)
        var environment = ProcessInfo.processInfo.environment
        environment["HERDR_RELAY_FRONTEND"] = "127.0.0.1:\(self.port)"
        for (index, node) in nodes.enumerated() { environment["HERDR_RELAY_NODE\(index + 1)"] = "127.0.0.1:\(node)" }
        let pipe = try PipePair(nonBlockingRead: true)
        process = try ChildProcess(
            "haproxy", ["-db", "-f", Self.shippedConfiguration, "-f", extra.path], environment: environment,
            stdout: pipe.write, stderr: pipe.write)
        close(pipe.write)
        output = pipe.read
        do {
            try waitUntil(timeout: 20) { states in
                states.count == nodes.count && states.values.allSatisfy { $0 == "UP" }
            }
        } catch {
            stop()
            throw error
        }
    }

    deinit {
        stop()
        close(output)
        directory.remove()
    }

    public func stop() {
        guard process.isRunning else { return }
        process.signal(SIGKILL)
        process.wait()
    }

    /// What HAProxy printed (warnings, alerts) so far.
    public func outputText() -> String { RelayProcess.drain(output) }

    /// Each backend server's status as the health checks see it ("UP", "DOWN", "UP 1/2"…).
    public func serverStates() -> [String: String] {
        guard let reply = UnixSocketClient.exchange(statsSocket, Array("show stat\n".utf8)) else { return [:] }
        var states: [String: String] = [:]
        for line in String(decoding: reply, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false)
            guard fields.count > 17, fields[0] == "relay_nodes", fields[1] != "BACKEND" else { continue }
            states[String(fields[1])] = String(fields[17])
        }
        return states
    }

    /// Polls the stats until `condition` holds, at most `timeout` seconds.
    public func waitUntil(timeout: Double, _ condition: ([String: String]) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var states: [String: String] = [:]
        repeat {
            guard process.isRunning else { throw FixtureError("haproxy exited: \(outputText())") }
            states = serverStates()
            if condition(states) { return }
            usleep(50_000)
        } while Date() < deadline
        throw FixtureError(
            "haproxy's servers did not reach the state wanted within \(timeout) s: \(states) \(outputText())")
    }
}
