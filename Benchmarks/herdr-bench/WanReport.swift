import Foundation

/// The rows and detail tables of `herdr-bench wan` from its results: headline rows per road
/// beside ssh and mosh, and every recovery per round trip and loss.
struct WanReport {
    let results: WanResults
    let roads: [WanProgram]
    let limit: Double

    init(results: WanResults) {
        self.results = results
        roads =
            results.roads?.compactMap(WanProgram.init(rawValue:))
            ?? WanProgram.allCases.filter(\.isOurs).filter { road in
                results.keystrokes.contains { $0.program == road.rawValue }
                    || results.recoveries.contains { $0.program == road.rawValue }
            }
        limit = results.limit ?? 30
    }

    /// The suite's table, notes and detail tables; `file`: where the results were read or written.
    func report(file: String) -> BenchReport {
        var report = BenchReport(
            title:
                "Wide-area roads (issue 35): herdr-remote's three roads beside `ssh -tt` and mosh, through the link emulator, same run"
        )
        add(to: &report)
        let rtts = Set(cells.map(\.rtt)).sorted().map { format($0, 0) }.joined(separator: ", ")
        let losses = Set(cells.map(\.loss)).sorted().map { format($0, 0) }.joined(separator: ", ")
        report.notes.append(
            "This run: \(results.date), \(results.minutes.map { "\(format($0, 1)) minutes" } ?? "length not kept"); RTTs \(rtts) ms, losses \(losses) %; every measure is in \(file) (scripts/plot-bench.py draws docs/wan-*.png from it)."
        )
        return report
    }

    private func add(to report: inout BenchReport) {
        addKeystrokes(&report)
        addSlowKeystrokes(&report)
        addInterrupts(&report)
        addBulk(&report)
        addRecoveries(&report)
        addBytes(&report)
        addCost(&report)
        report.details.append(recoveryTable())
        report.details.append(keystrokeTable())
    }

    private func samples(_ program: WanProgram, rtt: Double, loss: Double) -> [Double] {
        results.keystrokes.first { $0.program == program.rawValue && $0.rtt == rtt && $0.loss == loss }?.seconds ?? []
    }

    private var cells: [(rtt: Double, loss: Double)] {
        var seen: [(Double, Double)] = []
        for cell in results.keystrokes.map({ ($0.rtt, $0.loss) }) + results.recoveries.map({ ($0.rtt, $0.loss) })
        where !seen.contains(where: { $0 == cell }) {
            seen.append(cell)
        }
        return seen
    }

    private static func milliseconds(_ seconds: Double) -> String { "\(format(seconds * 1000, 1)) ms" }

    private func addKeystrokes(_ report: inout BenchReport) {
        for (rtt, loss) in cells {
            let ssh = samples(.ssh, rtt: rtt, loss: loss)
            let mosh = samples(.mosh, rtt: rtt, loss: loss)
            guard !ssh.isEmpty else { continue }
            let (ssh50, ssh99) = (percentile(ssh, 0.5), percentile(ssh, 0.99))
            for road in roads {
                let ours = samples(road, rtt: rtt, loss: loss)
                guard !ours.isEmpty else { continue }
                let (p50, p99) = (percentile(ours, 0.5), percentile(ours, 0.99))
                report.add(
                    "keystroke echo p50 / p99, RTT \(format(rtt, 0)) ms, loss \(format(loss, 0)) %, \(road.label) (\(ours.count) keys)",
                    ours: "\(Self.milliseconds(p50)) / \(Self.milliseconds(p99))",
                    anchor:
                        "ssh \(Self.milliseconds(ssh50)) / \(Self.milliseconds(ssh99)); mosh \(Self.milliseconds(percentile(mosh, 0.5))) / \(Self.milliseconds(percentile(mosh, 0.99)))",
                    ratio:
                        "\(p50 >= ssh50 ? "+" : "−")\(format(abs(p50 - ssh50) * 1000, 1)) ms / \(format(p99 / ssh99))×",
                    target: "≤ ssh + 2 ms / ≤ 1.1×")
            }
        }
    }

    /// Under loss a keystroke whose packet was dropped waits for TCP's retransmission (mosh's
    /// own): how often that happened, pooled over the lossy cells, says more than a p99 of a
    /// hundred or two samples, which is the second-worst one.
    private func addSlowKeystrokes(_ report: inout BenchReport) {
        func share(_ program: WanProgram) -> (slow: Int, all: Int) {
            results.keystrokes.filter { $0.program == program.rawValue && $0.loss > 0 }.reduce((0, 0)) { sum, cell in
                (sum.0 + cell.seconds.filter { $0 > cell.rtt / 1000 + 0.1 }.count, sum.1 + cell.seconds.count)
            }
        }
        func shown(_ program: WanProgram) -> String {
            let (slow, all) = share(program)
            return "\(format(Double(slow) / Double(max(all, 1)) * 100, 1)) % (\(slow) of \(all))"
        }
        guard share(.ssh).all > 0 else { return }
        for road in roads where share(road).all > 0 {
            report.add(
                "keystrokes over RTT + 100 ms (a lost packet retransmitted), every lossy cell, \(road.label)",
                ours: shown(road), anchor: "ssh \(shown(.ssh)); mosh \(shown(.mosh))", ratio: "—", target: "report")
        }
    }

    private func medianSeconds(_ runs: [WanResults.Run], _ program: WanProgram) -> String {
        let mine = runs.filter { $0.program == program.rawValue }
        let values = mine.compactMap(\.seconds)
        guard !mine.isEmpty else { return "—" }
        guard values.count == mine.count else { return "\(mine.count - values.count) of \(mine.count) failed" }
        return "\(format(median(values), 2)) s"
    }

    private func addInterrupts(_ report: inout BenchReport) {
        let runs = results.interrupts
        guard !runs.isEmpty else { return }
        let count = runs.filter { $0.program == WanProgram.ssh.rawValue }.count
        for road in roads {
            let ours = runs.filter { $0.program == road.rawValue }.compactMap(\.seconds)
            let ssh = runs.filter { $0.program == WanProgram.ssh.rawValue }.compactMap(\.seconds)
            let mosh = runs.filter { $0.program == WanProgram.mosh.rawValue }.compactMap(\.seconds)
            func ratio(_ ours: [Double], _ anchor: [Double], _ name: String) -> String {
                ours.isEmpty || anchor.isEmpty ? "—" : "\(format(median(ours) / median(anchor)))× \(name)"
            }
            report.add(
                "Ctrl-C during `yes`, 20 Mbit/s, RTT 100 ms: prompt back, screen still (median of \(count)), \(road.label)",
                ours: medianSeconds(runs, road),
                anchor: "ssh \(medianSeconds(runs, .ssh)); mosh \(medianSeconds(runs, .mosh))",
                ratio: ratio(ours, road.drawsScreen ? mosh : ssh, road.drawsScreen ? "mosh" : "ssh"),
                target: road.drawsScreen ? "≤ mosh" : "≤ 0.5 s")
        }
    }

    private func addBulk(_ report: inout BenchReport) {
        let megabytes = Double(WanRoads.bigFileBytes) / 1e6
        guard let ssh = results.bulk.first(where: { $0.program == WanProgram.ssh.rawValue })?.seconds else { return }
        for road in roads {
            guard let ours = results.bulk.first(where: { $0.program == road.rawValue })?.seconds else { continue }
            report.add(
                "cat 64 MiB through the PTY, 20 Mbit/s, RTT 50 ms, \(road.label)",
                ours: "\(format(megabytes / ours, 2)) MB/s (\(format(ours, 1)) s)",
                anchor: "\(format(megabytes / ssh, 2)) MB/s (ssh -tt, \(format(ssh, 1)) s)",
                ratio: "\(format(ssh / ours))×", target: "≥ 0.9×")
        }
    }

    private func recoveries(_ program: WanProgram, _ kind: WanRecovery.Kind) -> [WanResults.Recovery] {
        results.recoveries.filter { $0.program == program.rawValue && $0.kind == kind.rawValue }
    }

    /// "1.23 s (max 1.9 s)" over every cell, or how many never came back.
    private func summary(_ measured: [WanResults.Recovery]) -> String {
        guard !measured.isEmpty else { return "—" }
        let values = measured.compactMap(\.seconds)
        let missing = measured.count - values.count
        let never = missing > 0 ? "\(missing) of \(measured.count) none within \(format(limit, 0)) s" : ""
        guard !values.isEmpty else { return never }
        let shown = "\(format(median(values), 2)) s (max \(format(values.max() ?? 0, 2)) s)"
        return never.isEmpty ? shown : "\(shown); \(never)"
    }

    private func addRecoveries(_ report: inout BenchReport) {
        let names: [WanRecovery.Kind: (String, String)] = [
            .owed: ("silent path death, a keystroke waiting → its echo on screen", "≤ 2 s"),
            .idle: ("silent path death, idle → next output on screen", "≤ 15 s"),
            .change: ("network change (wifi down, cellular up) → next output on screen", "≤ 1 RTT + 0.3 s"),
        ]
        for kind in WanRecovery.Kind.allCases {
            guard let (name, target) = names[kind] else { continue }
            for road in roads {
                let measured = recoveries(road, kind)
                guard !measured.isEmpty else { continue }
                let met = measured.filter { recovery in
                    guard let seconds = recovery.seconds else { return false }
                    switch kind {
                    case .owed: return seconds <= 2
                    case .idle: return seconds <= 15
                    case .change: return seconds <= recovery.rtt / 1000 + 0.3
                    }
                }.count
                report.add(
                    "\(name), median over \(measured.count) round trips and losses, \(road.label)",
                    ours: summary(measured),
                    anchor: "mosh \(summary(recoveries(.mosh, kind))); ssh \(summary(recoveries(.ssh, kind)))",
                    ratio: "met in \(met) of \(measured.count)", target: target)
            }
        }
    }

    private func addBytes(_ report: inout BenchReport) {
        let checked = results.recoveries.filter { $0.exact != nil }
        let lost = checked.compactMap(\.lost).reduce(0, +)
        let repeated = checked.compactMap(\.repeated).reduce(0, +)
        let inexact = checked.filter { $0.exact == false }.count
        let bulk = results.bulk.filter { WanProgram(rawValue: $0.program)?.isOurs == true }
        let bulkInexact = bulk.filter { $0.exact != true }.count
        guard !checked.isEmpty || !bulk.isEmpty else { return }
        report.add(
            "bytes lost or repeated: relay and home roads over every recovery (numbered lines and the keystroke), every road's cat (SHA-256)",
            ours:
                "\(lost) lost, \(repeated) repeated; \(inexact) of \(checked.count) recoveries and \(bulkInexact) of \(bulk.count) cats not exact",
            anchor: "0", ratio: "—", target: "0")
    }

    /// Bytes on the wire for an hour of `top` and the computer's CPU per MiB, beside mosh.
    private func addCost(_ report: inout BenchReport) {
        let wire = results.wire ?? []
        func perHour(_ program: WanProgram, _ activity: String) -> Double? {
            wire.first { $0.program == program.rawValue && ($0.activity ?? "top") == activity }?.bytesPerHour
        }
        func megabytes(_ bytes: Double?) -> String { bytes.map { "\(format($0 / 1_000_000, 2)) MB" } ?? "—" }
        let what = [
            "top": "for an hour of `top -d 1` at 80×24", "idle": "for an hour of an idle session",
        ]
        for measured in wire {
            let activity = measured.activity ?? "top"
            guard let program = WanProgram(rawValue: measured.program), program.isOurs else { continue }
            let mosh = perHour(.mosh, activity)
            report.add(
                "bytes on the device's links \(what[activity] ?? activity) (both ways, headers included; \(format(measured.seconds, 0)) s measured), \(program.label)",
                ours: megabytes(measured.bytesPerHour),
                anchor: "mosh \(megabytes(mosh)); ssh \(megabytes(perHour(.ssh, activity)))",
                ratio: mosh.map { "\(format(measured.bytesPerHour / $0))×" } ?? "—", target: "≤ mosh")
        }
        let processing = results.processing ?? []
        func perMebibyte(_ run: WanResults.Processing) -> Double { run.cpuSeconds / Double(run.mebibytes) }
        let mosh = processing.first { $0.program == WanProgram.mosh.rawValue }.map(perMebibyte)
        for measured in processing {
            guard let program = WanProgram(rawValue: measured.program), program.isOurs else { continue }
            let ours = perMebibyte(measured)
            report.add(
                "the computer's CPU per MiB of output (\(measured.mebibytes) MiB of numbered lines), \(program.label): herdr-host",
                ours: "\(format(ours * 1000, 1)) ms",
                anchor: "mosh-server \(mosh.map { "\(format($0 * 1000, 1)) ms" } ?? "—")",
                ratio: mosh.map { "\(format(ours / $0))×" } ?? "—", target: "≤ mosh-server")
        }
    }

    /// Every recovery: a row per event, round trip and loss; a column per program.
    private func recoveryTable() -> String {
        let programs = roads + [.mosh, .ssh]
        var lines = [
            "| event | RTT | loss | " + programs.map(\.label).joined(separator: " | ") + " |",
            "|---|---|---|" + String(repeating: "---|", count: programs.count),
        ]
        for kind in WanRecovery.Kind.allCases {
            for (rtt, loss) in cells {
                let row = programs.map { program -> String in
                    guard
                        let measured = results.recoveries.first(where: {
                            $0.program == program.rawValue && $0.kind == kind.rawValue && $0.rtt == rtt
                                && $0.loss == loss
                        })
                    else { return "—" }
                    var shown = measured.seconds.map { "\(format($0, 2)) s" } ?? "none in \(format(limit, 0)) s"
                    if measured.seconds != nil, measured.keystrokesEchoed == 0 { shown += " (key lost)" }
                    guard measured.exact == false else { return shown }
                    let missing = (measured.missing ?? []).map(String.init).joined(separator: ",")
                    let twice = (measured.seenTwice ?? []).map(String.init).joined(separator: ",")
                    return "\(shown) (not exact: missing [\(missing)], twice [\(twice)])"
                }
                guard row.contains(where: { $0 != "—" }) else { continue }
                lines.append(
                    "| \(kind.rawValue) | \(format(rtt, 0)) ms | \(format(loss, 0)) % | " + row.joined(separator: " | ")
                        + " |")
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Keystroke echo p50 / p99 (ms) per program, round trip and loss, mosh's prediction display too.
    private func keystrokeTable() -> String {
        let programs = roads + [.ssh, .mosh, .moshPredicted]
        var lines = [
            "| RTT | loss | " + programs.map(\.label).joined(separator: " | ") + " |",
            "|---|---|" + String(repeating: "---|", count: programs.count),
        ]
        for (rtt, loss) in cells {
            let row = programs.map { program -> String in
                let values = samples(program, rtt: rtt, loss: loss)
                guard !values.isEmpty else { return "—" }
                return "\(format(percentile(values, 0.5) * 1000, 1)) / \(format(percentile(values, 0.99) * 1000, 1))"
            }
            guard row.contains(where: { $0 != "—" }) else { continue }
            lines.append("| \(format(rtt, 0)) ms | \(format(loss, 0)) % | " + row.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }
}
