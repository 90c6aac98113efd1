import Foundation
import Glibc
import RelayProtocol
import RelayServer
import RelayStorage
import TestSupport

/// A real relay on 127.0.0.1 (plain WebSocket, open mode, origin `https://relay.test`) for the
/// interop tests: a memory store unless a database path is given.
final class RelayFixture: Sendable {
    let server: RelayServer
    var port: UInt16 { server.port }

    init(databasePath: String? = nil, configure: (inout RelayConfiguration) -> Void = { _ in }) throws {
        var configuration = RelayConfiguration(origin: testOrigin, attestationRequired: false)
        configure(&configuration)
        let settled = configuration
        server = try RelayServer(options: .init(bindAddress: "127.0.0.1")) {
            let store: any RelayStore
            if let databasePath {
                store = try SQLiteRelayStore(path: databasePath)
            } else {
                store = MemoryRelayStore()
            }
            return RelayCore(configuration: settled, store: store, clock: SystemRelayClock())
        }
    }

    deinit { server.shutdown() }
}

/// What a Python peer observed: `key → value` lines it printed, its exit status and stderr.
struct PeerReport: CustomStringConvertible {
    var observations: [String: String] = [:]
    var status: Int32 = -1
    var stderr = ""

    subscript(key: String) -> String? { observations[key] }

    var description: String {
        "exit \(status); observations \(observations.sorted { $0.key < $1.key }); stderr: \(stderr)"
    }
}

/// Runs `relay_peer.py` (the independent WebSocket client, PyPI `websockets`) for one scenario.
/// The script prints JSON lines: `{"obs": key, "value": text}` to report, `{"ask": {...}}` to
/// ask the test something (a join signature when the `cryptography` package is missing, or to shut
/// the server down); each ask gets one JSON line back on its stdin.
enum PythonPeer {
    static let python = "python3"

    static func run(
        _ scenario: String, port: UInt16, room: String, roomSecret: [UInt8]? = nil,
        environment extra: [String: String] = [:], timeout: Double = 90,
        onAsk: ([String: Any]) throws -> [String: Any] = { _ in [:] }
    ) throws -> PeerReport {
        var arguments: [String: Any] = ["scenario": scenario, "port": Int(port), "room": room, "origin": testOrigin]
        if let roomSecret { arguments["roomSecret"] = base64(roomSecret) }
        let argumentText = String(decoding: try JSONSerialization.data(withJSONObject: arguments), as: UTF8.self)
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        for (name, value) in extra { environment[name] = value }

        let directory = try TemporaryDirectory(prefix: "relay-peer-")
        defer { directory.remove() }
        let scriptPath = directory.file("relay_peer.py").path
        try relayPeerScript.write(toFile: scriptPath, atomically: true, encoding: .utf8)

        let input = try PipePair()
        let output = try PipePair()
        let errors = try PipePair(nonBlockingRead: true)
        let child: ChildProcess
        do {
            child = try ChildProcess(
                python, ["-u", scriptPath, argumentText], environment: environment, stdin: input.read,
                stdout: output.write, stderr: errors.write)
        } catch {
            for fd in [input.read, input.write, output.read, output.write, errors.read, errors.write] { close(fd) }
            throw error
        }
        close(input.read)
        close(output.write)
        close(errors.write)
        defer {
            close(input.write)
            close(output.read)
            close(errors.read)
        }

        var report = PeerReport()
        var stdoutBuffer: [UInt8] = []
        var stderrBuffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let deadline = Date().addingTimeInterval(timeout)
        var open = [output.read, errors.read]
        while open.contains(where: { $0 >= 0 }) {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 {
                child.signal(SIGKILL)
                child.wait()
                report.stderr = String(decoding: stderrBuffer, as: UTF8.self)
                throw FixtureError("relay peer \(scenario) did not finish within \(timeout) s: \(report)")
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            for index in 0..<2 where open[index] >= 0 && fds[index].revents != 0 {
                let count = read(open[index], &chunk, chunk.count)
                if count > 0 {
                    if index == 0 { stdoutBuffer += chunk[0..<count] } else { stderrBuffer += chunk[0..<count] }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    open[index] = -1
                }
            }
            while let newline = stdoutBuffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(stdoutBuffer[..<newline])
                stdoutBuffer.removeSubrange(...newline)
                guard let message = RelayJSON.object(line) else {
                    report.stderr += "unexpected stdout line: \(String(decoding: line, as: UTF8.self))\n"
                    continue
                }
                if let key = message["obs"] as? String {
                    report.observations[key] = message["value"] as? String ?? "?"
                } else if let ask = message["ask"] as? [String: Any] {
                    let answer = try onAsk(ask)
                    var bytes = Array(try JSONSerialization.data(withJSONObject: answer))
                    bytes.append(UInt8(ascii: "\n"))
                    _ = bytes.withUnsafeBytes { write(input.write, $0.baseAddress, $0.count) }
                }
            }
        }
        report.status = child.wait(timeout: max(deadline.timeIntervalSinceNow, 5)) ?? -1
        if report.status == -1 {
            child.signal(SIGKILL)
            child.wait()
        }
        report.stderr += String(decoding: stderrBuffer, as: UTF8.self)
        return report
    }

    /// Answers a peer's signing asks with the Swift join key (used when Python lacks `cryptography`).
    static func signer(_ ask: [String: Any]) throws -> [String: Any] {
        if let secret = RelayJSON.bytes(ask["verifier"]) {
            return ["verifier": base64(try RelayJoinKey(roomSecret: secret).verifier.raw)]
        }
        if let secret = RelayJSON.bytes(ask["signJoin"]), let roleText = ask["role"] as? String,
            let role = RelayRole(rawValue: roleText), let nonce = RelayJSON.bytes(ask["nonce"]),
            let room = ask["room"] as? String, let origin = ask["origin"] as? String
        {
            let signature = try RelayJoinKey(roomSecret: secret).signJoin(
                role: role, nonce: nonce, room: room, origin: origin)
            return ["signature": base64(signature)]
        }
        throw FixtureError("unexpected ask from the relay peer: \(ask)")
    }

    /// True when Python has the `cryptography` package (then the peer signs on its own).
    static let hasCryptography: Bool = {
        (try? ProcessRunner.run(python, ["-c", "import cryptography"], timeout: 30).status) == 0
    }()
}
