import Foundation

/// Collects benchmark rows and prints them as a Markdown table, ours beside the anchor.
struct BenchReport {
    struct Row {
        var name: String
        var ours: String
        var anchor: String
        var ratio: String
        var target: String
    }

    var title: String
    var rows: [Row] = []
    var notes: [String] = []
    /// Markdown after the notes (a suite's detail tables).
    var details: [String] = []

    mutating func add(_ name: String, ours: String, anchor: String, ratio: String, target: String) {
        rows.append(Row(name: name, ours: ours, anchor: anchor, ratio: ratio, target: target))
        print("  \(name): ours \(ours), anchor \(anchor), ratio \(ratio) (target \(target))")
    }

    /// A latency row: the `p` quantile of `ours` beside that of `anchor` (seconds, shown in µs),
    /// the anchor named by `anchorLabel` when given.
    mutating func addLatency(
        _ name: String, ours: [Double], anchor: [Double], anchorLabel: String? = nil, quantile p: Double,
        target: String
    ) {
        let mine = percentile(ours, p)
        let theirs = percentile(anchor, p)
        add(
            name, ours: "\(format(mine * 1e6, 0)) µs",
            anchor: "\(format(theirs * 1e6, 0)) µs" + (anchorLabel.map { " (\($0))" } ?? ""),
            ratio: "\(format(mine / theirs))×", target: target)
    }

    var markdown: String {
        var lines = ["### \(title)", "", "| measure | ours | anchor | ratio | target |", "|---|---|---|---|---|"]
        for row in rows { lines.append("| \(row.name) | \(row.ours) | \(row.anchor) | \(row.ratio) | \(row.target) |") }
        if !notes.isEmpty { lines += [""] + notes.map { "- \($0)" } }
        for detail in details { lines += ["", detail] }
        return lines.joined(separator: "\n") + "\n"
    }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
}

func format(_ value: Double, _ digits: Int = 2) -> String { String(format: "%.\(digits)f", value) }

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Peak resident set size of this process (VmHWM), in KiB.
func peakRSSKiB(pid: String = "self") -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}
