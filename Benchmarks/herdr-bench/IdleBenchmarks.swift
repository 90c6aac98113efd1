import Foundation
import Glibc
import TestSupport

/// What an idle connection costs (issue 35): a connected session that nobody types in, on the
/// relay road (herdr-remote, herdr-relay and herdr-host: liveness pings inside the channel, the
/// WebSocket's own pings) beside `ssh -tt` with `ServerAliveInterval 15` (OpenSSH's usual
/// keepalive) to the SSH suite's sshd, over the same `seconds`; per hour: CPU of every process on
/// each path, and the bytes the device's program moved (its sockets' reads and writes).
@MainActor
struct IdleBenchmarks {
    let ssh: SSHBenchmarks
    /// Seconds of idling measured (`HERDR_BENCH_IDLE_SECONDS`, 60 by default).
    let seconds: Double

    func run() throws -> BenchReport {
        var report = BenchReport(
            title: "Idle connection (issue 35): liveness pings beside ssh's keepalives, per hour, same run")
        let road = try BenchRelayRoad(devices: 1)
        defer { road.stop() }
        try road.configure("session-command", SSHBenchmarks.echoCommand)
        // The computer and the relay with no device at all, over the same time: their own
        // housekeeping, apart from what a connection adds.
        guard let parkedAgent = road.agentPID, let parkedRelay = road.relay?.process.pid else {
            throw FixtureError("the agent or the relay is not running")
        }
        let parkedPaths = [[parkedAgent], [parkedRelay]]
        let parkedBefore = parkedPaths.map(cpuNanoseconds)
        usleep(useconds_t(seconds * 1e6))
        let parked = zip(parkedPaths.map(cpuNanoseconds), parkedBefore).map {
            Double($0 &- $1) / 1e6 * 3600 / seconds
        }
        let ours = try PipedEcho(
            executable: BuiltProgram.path("herdr-remote"), arguments: ["connect", "bench"],
            environment: road.deviceEnvironment(0))
        defer { ours.stop() }
        let theirs = try PipedEcho(
            executable: "ssh",
            arguments: ["-tt", "-o", "ServerAliveInterval=15"] + ssh.sshArguments
                + [SSHBenchmarks.echoCommand], environment: nil)
        defer { theirs.stop() }
        guard let agent = road.agentPID, let listener = ssh.server.pid, let relay = road.relay?.process.pid else {
            throw FixtureError("the agent or sshd is not running")
        }
        // Settled: the connections' first pings and window messages are behind them.
        usleep(3_000_000)
        // Each program on its own, then the paths: where an idle hour goes.
        let programs: [(String, [pid_t])] = [
            ("herdr-remote", [ours.pid]), ("herdr-relay", [relay]),
            ("herdr-host", [agent] + BenchRelayRoad.descendants(of: agent)), ("ssh", [theirs.pid]),
            ("sshd", BenchRelayRoad.descendants(of: listener)),
        ]
        let before = programs.map { cpuNanoseconds($0.1) }
        let bytesBefore = (socketBytes(ours.pid), socketBytes(theirs.pid))
        usleep(useconds_t(seconds * 1e6))
        let after = programs.map { cpuNanoseconds($0.1) }
        let bytesAfter = (socketBytes(ours.pid), socketBytes(theirs.pid))
        let perHour = 3600 / seconds
        let used = zip(after, before).map { Double($0 &- $1) / 1e6 * perHour }
        // What the connection adds: the path's CPU beyond the computer's and the relay's parked
        // housekeeping (ssh has none: its processes exist for the session alone).
        let ourCPU = max(0, used[0...2].reduce(0, +) - parked.reduce(0, +))
        let sshCPU = used[3...4].reduce(0, +)
        let ourBytes = Double(bytesAfter.0 &- bytesBefore.0) * perHour
        let sshBytes = Double(bytesAfter.1 &- bytesBefore.1) * perHour
        report.add(
            "CPU per hour an idle session adds, every process on the path", ours: "\(format(ourCPU, 0)) ms",
            anchor: "\(format(sshCPU, 0)) ms (ssh -tt, ServerAliveInterval 15, and sshd)",
            ratio: sshCPU > 0 ? "\(format(ourCPU / sshCPU, 1))×" : "n/a", target: "≤ 1 s an hour")
        report.add(
            "CPU per hour of herdr-host and herdr-relay parked, no device",
            ours: "\(format(parked.reduce(0, +), 0)) ms",
            anchor: "none (sshd's listener sleeps in accept)", ratio: "n/a", target: "report")
        report.add(
            "bytes per hour on the device's sockets, idle, both ways", ours: "\(format(ourBytes / 1024, 0)) KiB",
            anchor: "\(format(sshBytes / 1024, 0)) KiB (ssh)",
            ratio: sshBytes > 0 ? "\(format(ourBytes / sshBytes, 1))×" : "n/a", target: "report")
        report.notes.append(
            "A connected session nobody types in, \(format(seconds, 0)) s measured and scaled to an hour: herdr-remote connect through a loopback herdr-relay to herdr-host (a ping each way every 5 to 10 s inside the channel, the WebSocket's own every 15 s) beside ssh -tt with ServerAliveInterval 15. CPU is the scheduler's count for every thread of herdr-remote, herdr-relay and herdr-host (with the session's shell), and of ssh and sshd's session processes; bytes are what the device program's TCP sockets sent and received (`ss -ti`: bytes_sent + bytes_received, TCP payload, TLS and WebSocket framing included)."
        )
        report.notes.append(
            "With no device connected (parked only), over the same time, ms of CPU an hour: herdr-host \(format(parked[0], 0)), herdr-relay \(format(parked[1], 0))."
        )
        report.notes.append(
            "Per program, ms of CPU an hour: "
                + zip(programs, used).map { "\($0.0) \(format($1, 0))" }.joined(separator: ", ") + ".")
        return report
    }

    /// What `pid`'s TCP sockets have sent and received so far (`ss -tinp`: bytes_sent and
    /// bytes_received of each socket the process holds).
    private func socketBytes(_ pid: pid_t) -> UInt64 {
        guard let listing = try? ProcessRunner.run("ss", ["-tinpH"], timeout: 10) else { return 0 }
        var total: UInt64 = 0
        var mine = false
        for line in listing.stdout.split(separator: "\n") {
            // A socket's line names its processes; the tcp_info line after it holds the counts.
            if line.contains("users:(") {
                mine = line.contains("pid=\(pid),")
                continue
            }
            guard mine else { continue }
            for field in line.split(separator: " ") {
                for key in ["bytes_sent:", "bytes_received:"] where field.hasPrefix(key) {
                    total += UInt64(field.dropFirst(key.count)) ?? 0
                }
            }
            mine = false
        }
        return total
    }
}
