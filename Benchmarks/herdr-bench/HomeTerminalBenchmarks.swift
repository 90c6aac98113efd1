import Foundation
import Glibc
import TestSupport

/// The terminal on the home road (issue 13): herdr-remote straight to herdr-host's home door,
/// beside `ssh -tt` to the SSH suite's sshd in the same run, and the time from the home link
/// dying to output resumed over the relay.
///
/// The door listens on a unique-local address of a veth this run makes (the home network); the
/// device dials it from this namespace, so its packets take the loopback path, as ssh's do to the
/// loopback sshd: the comparison is of the two programs, not of two paths.
@MainActor
struct HomeTerminalBenchmarks {
    let ssh: SSHBenchmarks
    let runs: Int
    let keystrokes: Int

    func run() throws -> BenchReport {
        var report = BenchReport(
            title: "Home road terminal (issue 13): herdr-remote to herdr-host's home door vs `ssh -tt`, same run")
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        let link = try namespace.addHomeLink()
        let port = try LoopbackSocket.closedPort()
        let road = try BenchRelayRoad(devices: 1, homeListen: "[\(link.rootIPv6)]:\(port)")
        defer { road.stop() }

        let count = min(keystrokes, 500)
        let echo = try road.keystrokeEcho(ssh: ssh, extra: ["--road", "home"], count: count)
        echo.add(to: &report, path: "herdr-remote on the home road", targets: ("≤ 1.1×", "≤ 1.1×"))

        // The home link dies mid-session (its veth goes down, its address with it): from then to
        // the first byte of output resumed over the relay. One per session: the device stays on
        // the relay afterwards.
        try road.configure("session-command", "stty raw -echo; while :; do printf .; sleep 0.005; done")
        let ip = try ProcessRunner.which("ip")
        var switches: [Double] = []
        for _ in 0..<runs {
            switches += try road.resumeTimes(
                drops: 1,
                cut: { _ in _ = try ProcessRunner.run(ip, ["link", "set", link.rootInterface, "down"], check: true) },
                restore: {
                    _ = try ProcessRunner.run(ip, ["link", "set", link.rootInterface, "up"], check: true)
                    _ = try ProcessRunner.run(
                        ip, ["addr", "replace", "\(link.rootIPv6)/64", "dev", link.rootInterface, "nodad"], check: true)
                })
        }
        report.add(
            "home link down mid-session → output resumed over the relay (median of \(runs))",
            ours: "\(format(median(switches), 2)) s",
            anchor: "5 s (the home socket's dead-link bound: keepalive 2 s + 3 × 1 s, TCP_USER_TIMEOUT 5 s)",
            ratio: "\(format(median(switches) - 5, 2)) s beyond it", target: "report")
        report.notes.append(
            "herdr-host's home door on [\(link.rootIPv6.split(separator: ":").prefix(1).joined())…::1] (a veth this run made); keystrokes: \(count) one-byte round trips each, 50 ms apart, the two programs taking turns; `--road home` so the relay never answers first."
        )
        return report
    }
}
