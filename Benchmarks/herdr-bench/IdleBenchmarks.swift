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
        let ours = try PipedEcho(
            executable: BuiltProgram.path("herdr-remote"), arguments: ["connect", "bench"],
            environment: road.deviceEnvironment(0))
        defer { ours.stop() }
        let theirs = try PipedEcho(
            executable: "ssh",
            arguments: ["-tt", "-o", "ServerAliveInterval=15"] + ssh.sshArguments
                + [SSHBenchmarks.echoCommand], environment: nil)
        defer { theirs.stop() }
        guard let agent = road.agentPID, let listener = ssh.server.pid else {
            throw FixtureError("the agent or sshd is not running")
        }
        // Settled: the connections' first pings and window messages are behind them.
        usleep(3_000_000)
        let ourPath = [ours.pid, road.relay.process.pid, agent] + BenchRelayRoad.descendants(of: agent)
        let sshPath = [theirs.pid] + BenchRelayRoad.descendants(of: listener)
        let before = (cpuNanoseconds(ourPath), cpuNanoseconds(sshPath), ioBytes(ours.pid), ioBytes(theirs.pid))
        usleep(useconds_t(seconds * 1e6))
        let after = (cpuNanoseconds(ourPath), cpuNanoseconds(sshPath), ioBytes(ours.pid), ioBytes(theirs.pid))
        let perHour = 3600 / seconds
        let ourCPU = Double(after.0 &- before.0) / 1e6 * perHour
        let sshCPU = Double(after.1 &- before.1) / 1e6 * perHour
        let ourBytes = Double(after.2 &- before.2) * perHour
        let sshBytes = Double(after.3 &- before.3) * perHour
        report.add(
            "CPU per hour of an idle session, every process on the path", ours: "\(format(ourCPU, 0)) ms",
            anchor: "\(format(sshCPU, 0)) ms (ssh -tt, ServerAliveInterval 15, and sshd)",
            ratio: sshCPU > 0 ? "\(format(ourCPU / sshCPU, 1))×" : "n/a", target: "negligible (under 1 s an hour)")
        report.add(
            "bytes per hour through the device's program, idle", ours: "\(format(ourBytes / 1024, 0)) KiB",
            anchor: "\(format(sshBytes / 1024, 0)) KiB (ssh)",
            ratio: sshBytes > 0 ? "\(format(ourBytes / sshBytes, 1))×" : "n/a", target: "report")
        report.notes.append(
            "A connected session nobody types in, \(format(seconds, 0)) s measured and scaled to an hour: herdr-remote connect through a loopback herdr-relay to herdr-host (a ping each way every 5 to 10 s inside the channel, the WebSocket's own every 15 s) beside ssh -tt with ServerAliveInterval 15. CPU is the scheduler's count for every thread of herdr-remote, herdr-relay and herdr-host (with the session's shell), and of ssh and sshd's session processes; bytes are the device program's reads and writes (/proc/PID/io rchar + wchar: its sockets, nothing else moves when idle)."
        )
        return report
    }

    /// What `pid` has read and written so far, through every descriptor (rchar + wchar).
    private func ioBytes(_ pid: pid_t) -> UInt64 {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/io", encoding: .utf8) else { return 0 }
        var total: UInt64 = 0
        for line in text.split(separator: "\n") where line.hasPrefix("rchar:") || line.hasPrefix("wchar:") {
            total += UInt64(line.split(separator: " ").last ?? "") ?? 0
        }
        return total
    }
}
