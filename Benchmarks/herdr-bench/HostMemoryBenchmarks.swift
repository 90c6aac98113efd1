import Foundation
import Glibc
import TestSupport

/// herdr-host's memory as sessions come and go (issue 36): sessions of 16.9 MB of output one
/// after another through a loopback herdr-relay, each ended by its program; the agent's RSS after
/// 1, 100 and `sessions` ended sessions beside its idle RSS (parked, before any session).
@MainActor
struct HostMemoryBenchmarks {
    /// Sessions in all (300 by default, `HERDR_BENCH_SESSIONS`).
    let sessions: Int
    /// The soak's session: 16.9 MB, as fast as the relay's frame cap lets it through.
    static let sessionBytes = 16_900_000

    func run() throws -> BenchReport {
        var report = BenchReport(
            title:
                "herdr-host memory over ended sessions (issue 36): 16.9 MB sessions one after another through the relay"
        )
        // The quota would stop a room after 30 of these sessions.
        let road = try BenchRelayRoad(devices: 1, relayArguments: ["--daily-byte-quota", String(Int64(1) << 50)])
        defer { road.stop() }
        try road.configure("session-command", "stty raw -echo; head -c \(Self.sessionBytes) /dev/zero")
        guard let agent = road.agentPID else { throw FixtureError("no agent") }
        let idle = residentKiB(agent)
        guard let relay = road.relay?.process.pid else { throw FixtureError("no relay of the road's own") }
        let relayIdle = residentKiB(relay)
        let errors = road.directory.file("connect-stderr").path
        let marks = Set([1, min(100, sessions), sessions])
        var after: [(Int, Int)] = []
        let start = now()
        for number in 1...sessions {
            let log = open(errors, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard log >= 0 else { throw FixtureError("cannot open \(errors)") }
            let (bytes, _) = try SSHBenchmarks.countOutput(
                of: BuiltProgram.path("herdr-remote"), ["connect", "bench"], environment: road.deviceEnvironment(0),
                stderr: log)
            close(log)
            guard bytes == Self.sessionBytes else {
                let said = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
                throw FixtureError("session \(number) gave \(bytes) bytes; herdr-remote said: \(said)")
            }
            guard marks.contains(number) else { continue }
            // The agent sees the stream closed and gives the memory back on its loop's next wake
            // (within 0.5 s).
            usleep(1_000_000)
            after.append((number, residentKiB(agent)))
        }
        let seconds = now() - start
        for (number, kib) in after {
            report.add(
                "herdr-host RSS after \(number) ended session\(number == 1 ? "" : "s")", ours: Self.mib(kib),
                anchor: "\(Self.mib(idle)) (idle: parked, no session yet)",
                ratio: "\(kib >= idle ? "+" : "")\(Self.mib(kib - idle))",
                target: number == 1 ? "report" : "≤ idle + 5 MiB")
        }
        report.notes.append(
            "\(sessions) sessions of `head -c \(Self.sessionBytes) /dev/zero` (raw) through `herdr-remote connect`, one after another on one device, \(format(seconds, 0)) s in all; RSS is VmRSS of herdr-host run, read 1 s after the device ended. herdr-relay's RSS went \(Self.mib(relayIdle)) → \(Self.mib(residentKiB(relay)))."
        )
        return report
    }

    static func mib(_ kib: Int) -> String { "\(format(Double(kib) / 1024, 1)) MiB" }
}
