import Foundation
import Glibc
import TestSupport

/// Pairing through the relay, timed as a person feels it: from starting `herdr-remote pair` with
/// the code to the room established (the device's registration done), the computer's question
/// answered the moment the device shows its code. The anchor: `herdr-relay probe` against the same
/// relay in the same run (a park, a join and one frame each way, over fresh connections). Then the
/// agent's signed re-park after a relay restart, beside a bare signed join's admission.
struct CompanionBenchmarks {
    let runs: Int

    func run() throws -> BenchReport {
        var report = BenchReport(title: "Relay road pairing (issue 11): `herdr-remote pair` to the room established")
        let directory = try TemporaryDirectory(prefix: "herdr-bench-companion-")
        let database = directory.appending("relay.sqlite").path
        var relay = try RelayProcess(
            ["--listen", "127.0.0.1:0", "--origin", "http://127.0.0.1:1", "--db", database],
            environment: ["ATTEST_REQUIRED": "false"])
        let port = relay.port
        _ = relay.terminate()
        let origin = "http://127.0.0.1:\(port)"
        func startRelay() throws -> RelayProcess {
            try RelayProcess(
                ["--listen", "127.0.0.1:\(port)", "--origin", origin, "--db", database],
                environment: ["ATTEST_REQUIRED": "false"])
        }
        relay = try startRelay()
        var pairings: [Double] = []
        var probes: [Double] = []
        var hostHome = directory.appending("host-0")
        for index in 0..<runs {
            hostHome = directory.appending("host-\(index)")
            var hostEnvironment = ProcessInfo.processInfo.environment
            hostEnvironment["XDG_CONFIG_HOME"] = hostHome.path
            let host = try InteractiveProcess(
                BuiltProgram.path("herdr-host"), ["pair", "--relay", origin, "--name", "bench"],
                environment: hostEnvironment)
            guard let code = host.waitForMatch(#"(herdr://companion\?\S+)"#), host.waitFor("waiting for a device")
            else { throw FixtureError("herdr-host pair did not start: \(host.stdout)") }
            var deviceEnvironment = ProcessInfo.processInfo.environment
            deviceEnvironment["XDG_CONFIG_HOME"] = directory.appending("device-\(index)").path
            let start = now()
            let device = try InteractiveProcess(
                BuiltProgram.path("herdr-remote"), ["pair", code, "--yes", "--no-connect", "--name", "phone"],
                environment: deviceEnvironment)
            guard let shown = device.waitForMatch(#"Type this code on [^:]+: (\d{3} \d{3})"#) else {
                throw FixtureError("no code shown: \(device.stderr)")
            }
            // Typed once the computer asks (what was typed before the question is thrown away).
            guard host.waitFor("Type the code it shows") else { throw FixtureError("not asked: \(host.stdout)") }
            host.writeLine(shown)
            guard device.wait(timeout: 30) == 0 else { throw FixtureError("pairing failed: \(device.stderr)") }
            pairings.append(now() - start)
            _ = host.wait(timeout: 30)

            let probeStart = now()
            let probe = try ProcessRunner.run(BuiltProgram.path("herdr-relay"), ["probe", origin], timeout: 30)
            guard probe.status == 0 else { throw FixtureError("probe failed: \(probe.stdout)") }
            probes.append(now() - probeStart)
        }
        report.add(
            "pair to the room established, loopback relay (median of \(runs))",
            ours: "\(format(median(pairings) * 1000, 0)) ms",
            anchor: "\(format(median(probes) * 1000, 0)) ms (herdr-relay probe)",
            ratio: "\(format(median(pairings) / median(probes)))×", target: "< 1000 ms")

        // The agent of the last pairing parks; the relay restarts; how long until it parks again.
        var hostEnvironment = ProcessInfo.processInfo.environment
        hostEnvironment["XDG_CONFIG_HOME"] = hostHome.path
        let agent = try InteractiveProcess(BuiltProgram.path("herdr-host"), ["run"], environment: hostEnvironment)
        defer {
            agent.signal(SIGTERM)
            _ = agent.wait(timeout: 15)
        }
        let statusFile = hostHome.appendingPathComponent("herdr-host/agent.json").path
        func parked(after time: Double) -> Double? {
            let deadline = now() + 60
            while now() < deadline {
                if let text = try? String(contentsOfFile: statusFile, encoding: .utf8), text.contains("\"parked\""),
                    let info = try? FileManager.default.attributesOfItem(atPath: statusFile),
                    let modified = info[.modificationDate] as? Date, modified.timeIntervalSince1970 >= time
                {
                    return modified.timeIntervalSince1970
                }
                usleep(2_000)
            }
            return nil
        }
        guard parked(after: 0) != nil else { throw FixtureError("the agent did not park") }
        var reparks: [Double] = []
        for _ in 0..<runs {
            _ = relay.terminate()
            relay = try startRelay()
            let restarted = Date().timeIntervalSince1970
            guard let back = parked(after: restarted) else { throw FixtureError("no re-park") }
            reparks.append(back - restarted)
        }
        let probeStart = now()
        _ = try ProcessRunner.run(BuiltProgram.path("herdr-relay"), ["probe", origin], timeout: 30)
        let probe = now() - probeStart
        report.add(
            "signed re-park after a relay restart (median of \(runs))",
            ours: "\(format(median(reparks) * 1000, 0)) ms",
            anchor: "\(format(probe * 1000, 0)) ms (herdr-relay probe)",
            ratio: "\(format(median(reparks) / probe))×", target: "report")
        _ = relay.terminate()
        report.notes.append(
            "Pairing includes both programs' start, the device's admission, the XK handshake, the code shown and typed at once, the accept, the room secret kept on both sides (fsync), the ack, `/register` and the device's own exit. The re-park is dominated by the agent's reconnect backoff (first retry after up to 0.5 s, doubling), timed from the restarted relay listening to the agent's status file saying `parked`."
        )
        return report
    }
}
