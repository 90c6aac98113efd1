import Foundation
import Glibc
import HerdrCrypto
import TestSupport

/// herdr-remote's three roads (and screen sessions, issue 42) across an emulated wide-area
/// network (issue 35), beside `ssh -tt`
/// and mosh on the same link in the same run: keystroke echo at each round trip and loss,
/// Ctrl-C during a flood, `cat` of 64 MiB at 20 Mbit/s, and the next output after a path dies
/// silently or the network changes, with every byte checked. Knobs: HERDR_BENCH_WAN_RTTS (ms,
/// `50,150`), HERDR_BENCH_WAN_LOSSES (%, `0,1,3`), HERDR_BENCH_WAN_ROADS (`ssh-road,relay-road,
/// home-road,relay-screen`; `home-screen` too), HERDR_BENCH_WAN_PHASES (`keys,ctrl-c,cat,death,change,top,cpu`), HERDR_BENCH_WAN_KEYSTROKES
/// (200 at 50 ms, fewer in proportion at longer round trips, at least 100), HERDR_BENCH_WAN_RUNS
/// (Ctrl-C runs per program, 2), HERDR_BENCH_WAN_RECOVERIES (runs of each recovery, 1),
/// HERDR_BENCH_WAN_TOP_SECONDS (how long `top`, then an idle session, runs through each
/// program, 60; bytes are given per hour), HERDR_BENCH_WAN_CPU_MIB (the output whose processing CPU is measured, 16),
/// HERDR_BENCH_WAN_ANCHORS (`0` leaves ssh and mosh out, for repeating our roads alone), and
/// HERDR_BENCH_WAN_CHANGE_GAP_MS (a change's moment between Wi-Fi's addresses going and its link
/// going down, 0: the moment issue 41's outlier fell into).
@MainActor
struct WanBenchmarks {
    let rtts: [Double]
    let losses: [Double]
    let roads: [WanProgram]
    let phases: Set<String>
    let keystrokes: Int
    let runs: Int
    let recoveries: Int
    /// Whether ssh and mosh run beside our roads.
    let withAnchors: Bool
    let changeGap: Double
    let topSeconds: Double
    let cpuMebibytes: Int
    /// How long a recovery is waited for.
    let limit = 30.0

    static let allPhases = ["keys", "ctrl-c", "cat", "death", "change", "top", "cpu"]

    init(environment: [String: String]) throws {
        func numbers(_ key: String, _ fallback: [Double]) throws -> [Double] {
            guard let text = environment[key], !text.isEmpty else { return fallback }
            return try text.split(separator: ",").map {
                guard let value = Double($0), value >= 0 else { throw FixtureError("\(key): \($0) is not a number") }
                return value
            }
        }
        rtts = try numbers("HERDR_BENCH_WAN_RTTS", [50, 150])
        losses = try numbers("HERDR_BENCH_WAN_LOSSES", [0, 1, 3])
        roads = try WanProgram.roads(environment["HERDR_BENCH_WAN_ROADS"])
        let asked = environment["HERDR_BENCH_WAN_PHASES"].map { $0.split(separator: ",").map(String.init) }
        for phase in asked ?? [] where !Self.allPhases.contains(phase) {
            throw FixtureError(
                "HERDR_BENCH_WAN_PHASES: \(phase) is not one of \(Self.allPhases.joined(separator: ", "))")
        }
        phases = Set(asked ?? Self.allPhases)
        keystrokes = max(10, Int(environment["HERDR_BENCH_WAN_KEYSTROKES"] ?? "") ?? 200)
        runs = max(1, Int(environment["HERDR_BENCH_WAN_RUNS"] ?? "") ?? 2)
        recoveries = max(1, Int(environment["HERDR_BENCH_WAN_RECOVERIES"] ?? "") ?? 1)
        withAnchors = environment["HERDR_BENCH_WAN_ANCHORS"] != "0"
        changeGap = try numbers("HERDR_BENCH_WAN_CHANGE_GAP_MS", [0])[0] / 1000
        topSeconds = max(5, try numbers("HERDR_BENCH_WAN_TOP_SECONDS", [60])[0])
        cpuMebibytes = min(64, max(1, Int(try numbers("HERDR_BENCH_WAN_CPU_MIB", [16])[0])))
    }

    func run() throws -> BenchReport {
        let started = now()
        var results = WanResults()
        results.date = ISO8601DateFormatter().string(from: Date())
        results.roads = roads.map(\.rawValue)
        results.limit = limit
        let fixture = try WanRoads()
        defer { fixture.stop() }
        let phases = WanPhases(roads: fixture)
        let recovery = WanRecovery(roads: fixture, limit: limit, changeGap: changeGap)
        let anchors: [WanProgram] = withAnchors ? [.ssh, .mosh] : []

        for rtt in rtts {
            for loss in losses {
                try fixture.setPath(rtt: rtt, loss: loss)
                if self.phases.contains("keys") {
                    let count = max(min(keystrokes, 100), Int(Double(keystrokes) * 50 / max(rtt, 50)))
                    print("  keystrokes, RTT \(format(rtt, 0)) ms, loss \(format(loss, 0)) %: \(count) each")
                    let samples = try phases.keystrokes(
                        roads + anchors + (withAnchors ? [.moshPredicted] : []), count: count)
                    for (program, seconds) in samples {
                        results.keystrokes.append(
                            .init(rtt: rtt, loss: loss, program: program.rawValue, seconds: seconds))
                    }
                }
                // ssh cannot come back from either event (its flow is gone); once per round trip.
                let withSSH = loss == losses.first && withAnchors
                for kind in WanRecovery.Kind.allCases {
                    guard self.phases.contains(kind == .change ? "change" : "death") else { continue }
                    let programs = roads + (withAnchors ? [.mosh] : []) + (withSSH ? [.ssh] : [])
                    for program in programs.flatMap({ Array(repeating: $0, count: recoveries) }) {
                        let measured = try recovery.measure(program, kind, rtt: rtt, loss: loss)
                        print(
                            "  \(kind.rawValue), RTT \(format(rtt, 0)) ms, loss \(format(loss, 0)) %, \(program.label): "
                                + (measured.seconds.map { "\(format($0, 2)) s" } ?? "none within \(format(limit, 0)) s")
                                + (measured.keystrokesEchoed.map { ", keystroke echoed \($0)×" } ?? "")
                                + (measured.exact.map { $0 ? ", byte-exact" : ", NOT byte-exact" } ?? ""))
                        results.recoveries.append(measured)
                    }
                }
            }
        }
        if self.phases.contains("ctrl-c") {
            try fixture.setPath(rtt: 100, loss: 0, rate: "20mbit")
            for _ in 0..<runs {
                for program in roads + anchors {
                    let seconds = try phases.interrupt(program)
                    print(
                        "  Ctrl-C during yes, \(program.label): \(seconds.map { "\(format($0, 2)) s" } ?? "no prompt")")
                    results.interrupts.append(.init(program: program.rawValue, seconds: seconds, exact: nil))
                }
            }
        }
        if self.phases.contains("cat") {
            try fixture.setPath(rtt: 50, loss: 0, rate: "20mbit")
            let digest = SHA256.hash(Array(try Data(contentsOf: fixture.bigFile)))
            // A screen session's bytes are screens: a byte-exact copy is not what it is for.
            for program in roads.filter({ !$0.drawsScreen }) + [.ssh] {
                let (seconds, exact) = try phases.bulk(program, expected: digest)
                print(
                    "  cat 64 MiB, \(program.label): \(format(seconds, 1)) s, \(exact ? "byte-exact" : "NOT byte-exact")"
                )
                results.bulk.append(.init(program: program.rawValue, seconds: seconds, exact: exact))
            }
        }
        let cost = WanCost(roads: fixture)
        if self.phases.contains("top") {
            try fixture.setPath(rtt: 50, loss: 0)
            for activity in WanCost.Activity.allCases {
                for program in roads.filter({ $0 != .sshRoad }) + anchors {
                    let measured = try cost.wireBytes(program, activity, seconds: topSeconds)
                    print(
                        "  \(activity.rawValue) for \(format(topSeconds, 0)) s, \(program.label): \(measured.bytes) bytes, "
                            + "\(format(measured.bytesPerHour / 1_000_000, 2)) MB an hour")
                    results.wire?.append(measured)
                }
            }
        }
        if self.phases.contains("cpu") {
            try fixture.setPath(rtt: 50, loss: 0)
            // The SSH road's computer process is sshd, as ssh's: herdr-host and mosh-server only.
            for program in roads.filter({ $0 != .sshRoad }) + (withAnchors ? [.mosh] : []) {
                let measured = try cost.processing(program, mebibytes: cpuMebibytes)
                print(
                    "  \(cpuMebibytes) MiB of output, \(program.label): the computer's CPU "
                        + "\(format(measured.cpuSeconds, 2)) s, \(format(measured.seconds, 1)) s to the device")
                results.processing?.append(measured)
            }
        }
        results.minutes = (now() - started) / 60
        let resultsFile = URL(fileURLWithPath: ".build/bench/wan.json")
        try results.write(to: resultsFile)
        return WanReport(results: results).report(file: resultsFile.path)
    }
}
