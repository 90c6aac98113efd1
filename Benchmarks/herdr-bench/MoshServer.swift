import Foundation
import Glibc
import TestSupport

/// One `mosh-server new` in a namespace of the emulated network, for one mosh-client: it forks
/// away from its starter (it says its pid), so it is stopped by that pid.
final class MoshServer {
    let port: UInt16
    /// The session key mosh-client takes in MOSH_KEY.
    let key: String
    let pid: pid_t

    /// Starts mosh-server in `role`'s namespace on `address`:`port`, running `command` with sh.
    init(network: EmulatedNetwork, role: String, address: String, port: UInt16, command: String) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["LANG"] = "C.UTF-8"
        let result = try network.run(
            in: role, "mosh-server",
            ["new", "-i", address, "-p", String(port), "-l", "LANG=C.UTF-8", "--", "/bin/sh", "-c", command],
            environment: environment, timeout: 20)
        let words = result.stdout.split(whereSeparator: \.isWhitespace)
        guard let connect = words.firstIndex(of: "CONNECT"), connect + 2 < words.count,
            let port = UInt16(words[connect + 1]),
            let detached = result.stderr.range(of: "detached, pid = "),
            let pid = pid_t(result.stderr[detached.upperBound...].prefix { $0.isNumber })
        else { throw FixtureError("mosh-server did not start: \(result.stdout) \(result.stderr)") }
        self.port = port
        key = String(words[connect + 2])
        self.pid = pid
    }

    /// Ends the server (its session's shell gets the terminal's hangup).
    func stop() {
        kill(pid, SIGTERM)
        for _ in 0..<50 where kill(pid, 0) == 0 { usleep(20_000) }
        kill(pid, SIGKILL)
    }
}
