import Foundation
import Glibc
import HerdrKit
import TestSupport

/// herdr's agents (issue 37), every program the real one on loopback: herdr-relay, herdr-host run
/// reading the herdr stand-in (its default session with 100 agents), herdr-remote on a paired
/// device. A status change on the computer to `watch`'s line on the device, beside the same
/// change reaching a client subscribed straight to herdr's socket; `agents` across three
/// computers, one of which does not answer, beside its per-computer limit; herdr-host's CPU with
/// the 100 agents idle, watched and not, beside the stand-in's own over the same time.
@MainActor
struct AgentsBenchmarks {
    /// Status changes timed (`HERDR_BENCH_AGENT_CHANGES`, 50 by default).
    let changes: Int
    /// Seconds of each idle CPU measure (`HERDR_BENCH_AGENTS_SECONDS`, 60 by default).
    let idleSeconds: Double
    /// `agents` runs per case.
    let runs: Int
    static let idleAgents = 100
    /// `agents --timeout`: its default, each computer's limit.
    static let limit = 5.0
    /// Before each change (after the board, or the last change, was shown): past the computer's
    /// 100 ms coalescing, so each change goes at once, as status changes seconds apart do.
    static let pause: useconds_t = 250_000

    func run() throws -> BenchReport {
        var report = BenchReport(
            title:
                "herdr's agents (issue 37): a status change to watch, agents across three computers, herdr-host's CPU with 100 idle agents, same run"
        )
        let home = try TemporaryDirectory(prefix: "herdr-bench-agents-")
        let herdr = try HerdrStandIn(home: home.appending("host-home"))
        defer { herdr.stop() }
        let road = try BenchRelayRoad(devices: 1, hostEnvironment: ["HOME": herdr.home.path, "SHELL": "/bin/sh"])
        defer { road.stop() }
        try herdr.startSession()
        for number in 1...Self.idleAgents {
            try herdr.addAgent(pane: "w1:p\(number)", name: "agent-\(number)", status: .idle)
        }
        guard let agent = road.agentPID, let standIn = herdr.serverPID() else {
            throw FixtureError("herdr-host or the stand-in is not running")
        }

        // Nobody watching: herdr-host parked, holding no connection to herdr.
        let unwatched = Self.cpuPerHour([[agent], [standIn]], seconds: idleSeconds)

        // Status changes: herdr's own subscriber and watch's line, from the same moment.
        let subscriber = try HerdrEventSubscriber(socket: herdr.socketPath(), pane: "w1:p1")
        defer { subscriber.stop() }
        let watch = try WatchLines(arguments: ["watch", "bench"], environment: road.deviceEnvironment(0))
        defer { watch.stop() }
        guard watch.stderr.waitForLine(1, timeout: 60, where: { $0.contains("bench: watching (100 agents)") }) != nil
        else { throw FixtureError("watch did not start: \(watch.stderr.text)") }
        var shown: [Double] = []
        var seen: [Double] = []
        for index in 1...changes {
            usleep(Self.pause)
            let start = now()
            try herdr.setStatus(pane: "w1:p1", index % 2 == 1 ? .blocked : .done)
            guard
                let line = watch.stdout.waitForLine(
                    index, timeout: 30, where: { $0.contains(" bench default/w1:p1 ") }),
                let event = subscriber.lines.waitForLine(
                    index, timeout: 30, where: { $0.contains("pane.agent_status_changed") })
            else {
                throw FixtureError(
                    "change \(index) not shown: watch: \(watch.stdout.text) \(watch.stderr.text); herdr: \(subscriber.lines.text)"
                )
            }
            shown.append(line - start)
            seen.append(event - start)
        }
        for (quantile, name, target) in [(0.5, "p50", "≤ 50 ms"), (0.99, "p99", "report")] {
            let ours = percentile(shown, quantile)
            let anchor = percentile(seen, quantile)
            report.add(
                "status change on the computer → watch's line on the device, \(name) of \(changes), relay road",
                ours: "\(format(ours * 1000, 1)) ms",
                anchor: "\(format(anchor * 1000, 1)) ms (a client subscribed to herdr's socket)",
                ratio: "\(format(ours / anchor, 1))×", target: target)
        }

        // Watched: the device's board open, nothing changing.
        let watched = Self.cpuPerHour([[agent], [standIn], [watch.pid]], seconds: idleSeconds)
        watch.stop()
        subscriber.stop()
        for (name, used) in [("a device watching", watched), ("nobody watching", unwatched)] {
            report.add(
                "herdr-host CPU per hour, \(Self.idleAgents) idle agents, \(name)", ours: "\(format(used[0], 0)) ms",
                anchor: "\(format(used[1], 0)) ms (the herdr stand-in serving it)",
                ratio: used[1] > 0 ? "\(format(used[0] / used[1], 1))×" : "n/a", target: "report")
        }

        // agents across three computers: this one, one with no herdr, one that does not answer.
        let computers = try PairedComputers(road: road, directory: home)
        let laptop = try computers.add("laptop", running: true)
        defer { laptop?.signal(SIGTERM) }
        _ = try computers.add("nas", running: false)
        let answering = try Self.agentsWallTimes(road, ["bench", "laptop"], runs: runs, status: 0)
        let away = try Self.agentsWallTimes(road, ["bench", "laptop", "nas"], runs: runs, status: 17)
        let silent = try LoopbackSocket.listen()
        defer { close(silent.fd) }
        try computers.moveRelay(of: "nas", to: "http://127.0.0.1:\(silent.port)")
        let quiet = try Self.agentsWallTimes(road, ["bench", "laptop", "nas"], runs: runs, status: 17)
        report.add(
            "agents across 3 computers, one's herdr-host not running (its relay says so), wall time",
            ours: "\(format(median(away), 2)) s", anchor: "\(format(median(answering), 2)) s (the two that answer)",
            ratio: "+\(format(median(away) - median(answering), 2)) s",
            target: "≤ \(format(Self.limit + 0.2, 1)) s")
        report.add(
            "agents across 3 computers, one silent (its relay accepts and never answers), wall time",
            ours: "\(format(median(quiet), 2)) s", anchor: "\(format(Self.limit, 2)) s (the per-computer limit)",
            ratio: "+\(format(median(quiet) - Self.limit, 2)) s beyond it",
            target: "≤ \(format(Self.limit + 0.2, 1)) s")

        report.notes.append(
            "All on loopback: herdr-relay (plain WebSocket, SQLite), herdr-host run with the herdr stand-in (Python, tests' TestSupport) as its herdr, \(Self.idleAgents) agents in its default session; herdr-remote watch without a terminal (one line per event). Each change flips agent-1 between blocked and done (every one news), \(format(Double(Self.pause) / 1e6, 2)) s after the board or the last change was shown, so none falls in the computer's 100 ms coalescing; both times run from just before the stand-in is told to change it to the line's arrival (watch's stdout, and the subscriber's socket read)."
        )
        report.notes.append(
            "Changes shown by watch in \(format((shown.min() ?? 0) * 1000, 1))–\(format((shown.max() ?? 0) * 1000, 1)) ms, seen by herdr's subscriber in \(format((seen.min() ?? 0) * 1000, 1))–\(format((seen.max() ?? 0) * 1000, 1)) ms."
        )
        report.notes.append(
            "CPU is the scheduler's count for every thread (schedstat), over \(format(idleSeconds, 0)) s each, scaled to an hour. Nobody watching: herdr-host parked for the device, which is not connected (herdr-host reads nothing of herdr then). Watching: herdr-remote watch connected, the board of \(Self.idleAgents) agents unchanged; herdr-remote itself used \(format(watched[2], 0)) ms an hour."
        )
        report.notes.append(
            "agents: median of \(runs) runs of `herdr-remote agents` (limit \(format(Self.limit, 0)) s) with the computers asked at once; wall time from the program's start to its exit. Runs: answering \(Self.list(answering)), herdr-host not running \(Self.list(away)), silent \(Self.list(quiet)) s."
        )
        return report
    }

    static func list(_ values: [Double]) -> String { values.map { format($0, 2) }.joined(separator: ", ") }

    /// Milliseconds of CPU an hour each group of processes uses over the next `seconds`.
    static func cpuPerHour(_ groups: [[pid_t]], seconds: Double) -> [Double] {
        let before = groups.map(cpuNanoseconds)
        usleep(useconds_t(seconds * 1e6))
        return zip(groups.map(cpuNanoseconds), before).map { Double($0 &- $1) / 1e6 * 3600 / seconds }
    }

    /// Wall times of `herdr-remote agents HOSTS`, each checked to exit with `status`.
    static func agentsWallTimes(_ road: BenchRelayRoad, _ hosts: [String], runs: Int, status: Int32) throws
        -> [Double]
    {
        try (0..<runs).map { _ in
            let start = now()
            let result = try ProcessRunner.run(
                BuiltProgram.path("herdr-remote"), ["agents"] + hosts + ["--timeout", String(Int(limit))],
                environment: road.deviceEnvironment(0), timeout: 60)
            let took = now() - start
            guard result.status == status else {
                throw FixtureError("agents \(hosts) exited \(result.status): \(result.stdout) \(result.stderr)")
            }
            return took
        }
    }
}

/// More computers at a bench road's relay, paired with its first device: each a herdr-host
/// configuration and an empty HOME of its own (no herdr), home door off.
@MainActor
struct PairedComputers {
    let road: BenchRelayRoad
    let directory: TemporaryDirectory

    init(road: BenchRelayRoad, directory: TemporaryDirectory) throws {
        self.road = road
        self.directory = directory
    }

    /// Pairs the computer `name`; with `running`, starts its herdr-host and returns it once parked.
    func add(_ name: String, running: Bool) throws -> InteractiveProcess? {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appending("host-\(name)").path
        environment["HOME"] = directory.appending("\(name)-home").path
        try FileManager.default.createDirectory(
            at: directory.appending("\(name)-home"), withIntermediateDirectories: true)
        try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["config", "home-listen", "off"], environment: environment, check: true)
        try RelayProgramPairing.pair(
            origin: road.origin, computerName: name, deviceName: "phone-0", hostEnvironment: environment,
            deviceEnvironment: road.deviceEnvironment(0))
        guard running else { return nil }
        let agent = try InteractiveProcess(BuiltProgram.path("herdr-host"), ["run"], environment: environment)
        guard agent.waitFor("parking in its room", timeout: 60) else {
            agent.signal(SIGTERM)
            throw FixtureError("\(name)'s herdr-host did not park: \(agent.stderr)")
        }
        return agent
    }

    /// Points the device's saved host `name` at another relay origin.
    func moveRelay(of name: String, to origin: String) throws {
        let file = URL(fileURLWithPath: road.deviceEnvironment(0)["XDG_CONFIG_HOME"] ?? "")
            .appendingPathComponent("herdr-remote/hosts.json")
        var hosts = try JSONDecoder().decode([HostProfile].self, from: Data(contentsOf: file))
        guard let index = hosts.firstIndex(where: { $0.name == name }) else {
            throw FixtureError("no saved host \(name)")
        }
        hosts[index].companion?.relay = origin
        try JSONEncoder().encode(hosts).write(to: file)
    }
}

/// Lines read from a descriptor on a thread of their own, each with the moment it arrived.
final class TimedLines: @unchecked Sendable {
    private let condition = NSCondition()
    private var lines: [(time: Double, text: String)] = []
    private var partial: [UInt8] = []

    /// Reads `fd` until its end (then closes it).
    init(reading fd: Int32) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fd, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                take(buffer[0..<count], at: now())
            }
            close(fd)
        }
        thread.start()
    }

    private func take(_ bytes: ArraySlice<UInt8>, at time: Double) {
        condition.lock()
        defer { condition.unlock() }
        partial += bytes
        while let end = partial.firstIndex(of: UInt8(ascii: "\n")) {
            lines.append((time, String(decoding: partial[..<end], as: UTF8.self)))
            partial.removeSubrange(...end)
        }
        condition.broadcast()
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return lines.map(\.text).joined(separator: "\n")
    }

    /// When the `number`-th line (from 1) that `matches` arrived, once it has, or nil after `timeout` s.
    func waitForLine(_ number: Int, timeout: Double, where matches: (String) -> Bool) -> Double? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            let found = lines.filter { matches($0.text) }
            if found.count >= number { return found[number - 1].time }
            guard condition.wait(until: deadline) else { return nil }
        }
    }
}

/// `herdr-remote ARGUMENTS` without a terminal: its stdout and stderr lines timed as they come.
final class WatchLines {
    private let process: ChildProcess
    private let input: Int32
    let stdout: TimedLines
    let stderr: TimedLines
    var pid: pid_t { process.pid }

    init(arguments: [String], environment: [String: String]) throws {
        let input = try PipePair()
        let output = try PipePair()
        let errors = try PipePair()
        process = try ChildProcess(
            BuiltProgram.path("herdr-remote"), arguments, environment: environment, stdin: input.read,
            stdout: output.write, stderr: errors.write)
        close(input.read)
        close(output.write)
        close(errors.write)
        self.input = input.write
        stdout = TimedLines(reading: output.read)
        stderr = TimedLines(reading: errors.read)
    }

    /// SIGINT (watch's own way out), then SIGKILL if it is still there.
    func stop() {
        guard process.isRunning else { return }
        process.signal(SIGINT)
        if process.wait(timeout: 15) == nil {
            process.signal(SIGKILL)
            _ = process.wait()
        }
        close(input)
    }
}

/// herdr's own event path: a client subscribed on herdr's socket to one pane's status changes
/// (`events.subscribe`), its lines timed as they arrive.
final class HerdrEventSubscriber {
    private let fd: Int32
    let lines: TimedLines
    private var stopped = false

    init(socket path: String, pane: String) throws {
        guard let fd = UnixSocketClient.connect(path) else { throw FixtureError("cannot connect to \(path)") }
        let request =
            #"{"id":"s1","method":"events.subscribe","params":{"subscriptions":[{"type":"pane.agent_status_changed","pane_id":"\#(pane)"}]}}"#
            + "\n"
        guard write(fd, request, request.utf8.count) == request.utf8.count else {
            close(fd)
            throw FixtureError("cannot subscribe on \(path)")
        }
        // The reader owns a duplicate: shutting this one down ends its read.
        self.fd = fd
        lines = TimedLines(reading: dup(fd))
        guard lines.waitForLine(1, timeout: 10, where: { $0.contains("subscription_started") }) != nil else {
            throw FixtureError("herdr's socket did not start the subscription: \(lines.text)")
        }
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }
}
