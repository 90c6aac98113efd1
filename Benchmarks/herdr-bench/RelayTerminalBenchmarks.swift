import CompanionDevice
import Foundation
import Glibc
import TestSupport

/// The terminal through the relay road, all real programs on loopback (herdr-relay, herdr-host
/// run, herdr-remote connect), beside `ssh -tt` to the SSH suite's sshd in the same run: keystroke
/// echo, `cat` of 256 MiB through the PTY, resume after a killed socket, host memory per idle
/// session, and the device's memory while its terminal stalls under a 64 MiB burst.
@MainActor
struct RelayTerminalBenchmarks {
    let ssh: SSHBenchmarks
    let runs: Int
    let keystrokes: Int
    /// What the relay's frame cap allows: 500 frames/s of 64 KiB.
    static let capBytesPerSecond = 500.0 * 65536

    /// `keystrokesOnly`: the keystroke phase alone (`herdr-bench terminal-keys`), for tracing one
    /// keystroke's path without the bulk, resume and memory phases around it.
    func run(keystrokesOnly: Bool = false) throws -> BenchReport {
        var report = BenchReport(
            title: "Relay road terminal (issue 12): herdr-remote through a loopback herdr-relay vs `ssh -tt`, same run")
        let road = try BenchRelayRoad(devices: keystrokesOnly ? 1 : 8)
        defer { road.stop() }
        // Keystrokes: one byte at a time through `stty raw -echo; exec cat`, both programs on pipes,
        // 20 a second (a fast typist; back to back they would pass the relay's 500 frames/s).
        let echo = try road.keystrokeEcho(ssh: ssh, count: min(keystrokes, 500), forwarded: true)
        echo.add(to: &report, path: "herdr-remote through the relay", targets: ("≤ 1.25×", "≤ 1.5×"))
        guard !keystrokesOnly else { return report }

        // Bulk: cat of 256 MiB through the PTY, output post-processing off on both.
        try road.configure("session-command", "stty -opost; cat \(ssh.bigFile.path)")
        var oursSeconds: [Double] = []
        var sshSeconds: [Double] = []
        for run in 0..<runs {
            let start = now()
            // Each run on another device's room: a room carries at most 512 MiB a day (the relay's
            // quota), two of these runs.
            let (bytes, status) = try SSHBenchmarks.countOutput(
                of: BuiltProgram.path("herdr-remote"), ["connect", "bench"],
                environment: road.deviceEnvironment(1 + run % 7))
            guard status == 0, bytes == SSHBenchmarks.bulkBytes else {
                throw FixtureError("cat through the relay gave \(bytes) bytes, status \(status)")
            }
            oursSeconds.append(now() - start)
            sshSeconds.append(try ssh.sshCat(pty: true, cipher: nil))
        }
        let mb = Double(SSHBenchmarks.bulkBytes) / 1e6
        let oursRate = mb / median(oursSeconds)
        let sshRate = mb / median(sshSeconds)
        let capRate = Self.capBytesPerSecond / 1e6
        let bound = min(sshRate, capRate)
        report.add(
            "cat 256 MiB through the PTY, relay road", ours: "\(format(oursRate, 1)) MB/s",
            anchor: "\(format(sshRate, 0)) MB/s (ssh -tt); \(format(capRate, 1)) MB/s (the relay's frame cap)",
            ratio: "\(format(oursRate / bound))× the smaller", target: "≥ 0.9×")

        // Resume: the device's socket killed (ss -K) 20 times while output ticks, each time after
        // the connection was up long enough for the retry to go at once; from the kill to the
        // first byte of resumed output.
        try road.configure("session-command", "stty raw -echo; while :; do printf .; sleep 0.005; done")
        let resumes = try road.resumeTimes(drops: 20)
        report.add(
            "resume after a killed socket, kill to the first resumed byte (p50 of 20)",
            ours: "\(format(median(resumes) * 1000, 0)) ms",
            anchor:
                "0 ms (no backoff before the first retry of a road that was up \(format(RetryAfterDrop.steadyRoad, 0)) s)",
            ratio: "\(format(median(resumes) * 1000, 0)) ms beyond it", target: "< 500 ms beyond it")

        // Host memory: every device attached to an idle session, against the agent parked for all.
        try road.configure("session-command", "exec cat")
        let (perSession, sshdPerSession) = try road.hostMemoryPerIdleSession(ssh: ssh)
        report.add(
            "host memory per attached idle session (herdr-host RSS growth ÷ 8)",
            ours: "\(perSession / 1024) KiB", anchor: "\(sshdPerSession / 1024) KiB (sshd's per-session processes)",
            ratio: "\(format(Double(perSession) / Double(max(sshdPerSession, 1))))×", target: "report")

        // Device memory: a 64 MiB burst while herdr-remote's terminal does not read for 3 s.
        try road.configure("session-command", "stty raw -echo; head -c \(SSHBenchmarks.stallBytes) /dev/zero")
        let (peak, idle) = try road.stalledDevicePeak()
        let sshPeak = try ssh.sshStalledPeak()
        report.add(
            "device peak RSS, 64 MiB burst, terminal stalled 3 s",
            ours: "\(peak / 1024) MiB (\((peak - idle) / 1024) MiB above idle)", anchor: "\(sshPeak / 1024) MiB (ssh)",
            ratio: "-", target: "bounded")

        report.notes.append(
            "All on loopback: herdr-relay (plain WebSocket, SQLite), herdr-host run and herdr-remote connect as separate processes; ssh -tt talks to the SSH suite's sshd. Keystrokes: \(min(keystrokes, 500)) one-byte round trips for each, 50 ms apart, the two programs taking turns; bulk: median of \(runs) runs, wall time including the signed join, the XK handshake and the session's start."
        )
        report.notes.append(
            "The frame cap allows 500 frames/s per room; the computer keeps to 456/s of at most 65505 output bytes (its share of the budget), 29.9 MB/s, 0.91× the cap's 32.8 MB/s."
        )
        return report
    }
}

/// Keystroke round trips through herdr-remote and `ssh -tt`, and the CPU every process on each
/// path used for them.
struct KeystrokeEcho {
    let ours: [Double]
    let anchor: [Double]
    /// µs per round trip: the device, the relay, the computer (herdr-host with the session's
    /// `cat`); ssh, sshd (the session's processes with theirs).
    let cpu: [Double]
    /// ssh through a TCP forwarder, when measured.
    var forwarded: [Double]? = nil

    func add(to report: inout BenchReport, path: String, targets: (p50: String, p99: String)) {
        for (p, name, target) in [(0.5, "p50", targets.p50), (0.99, "p99", targets.p99)] {
            report.addLatency(
                "keystroke echo \(name), \(path)", ours: ours, anchor: anchor, anchorLabel: "ssh -tt", quantile: p,
                target: target)
        }
        if let forwarded {
            // What one store-and-forward hop costs OpenSSH, and ours against that same shape.
            for (p, name) in [(0.5, "p50"), (0.99, "p99")] {
                report.addLatency(
                    "keystroke echo \(name), ssh -tt through a TCP forwarder (a relay's hop, nothing else)",
                    ours: forwarded, anchor: anchor, anchorLabel: "ssh -tt", quantile: p, target: "report")
            }
            report.addLatency(
                "keystroke echo p50, \(path), against ssh through the forwarder", ours: ours, anchor: forwarded,
                anchorLabel: "ssh -tt, forwarded", quantile: 0.5, target: "report")
        }
        let oursCPU = cpu[0] + cpu[1] + cpu[2]
        let sshCPU = cpu[3] + cpu[4]
        report.add(
            "CPU per keystroke round trip, every process on the path",
            ours:
                "\(format(oursCPU, 0)) µs (device \(format(cpu[0], 0)), relay \(format(cpu[1], 0)), computer \(format(cpu[2], 0)))",
            anchor: "\(format(sshCPU, 0)) µs (ssh \(format(cpu[3], 0)), sshd \(format(cpu[4], 0)))",
            ratio: "\(format(oursCPU / sshCPU))×", target: "report")
    }
}

/// A relay, a computer with herdr-host run, and `devices` paired devices (`bench` on each).
@MainActor
final class BenchRelayRoad {
    let directory: TemporaryDirectory
    /// The relay this road started; nil when it runs through one started elsewhere (a cluster).
    let relay: RelayProcess?
    let origin: String
    /// Where clients connect: the relay's port, or the one in front of the relay given.
    let port: UInt16
    private var agent: InteractiveProcess?
    let devices: Int
    /// More of herdr-host's environment (a HOME with herdr in it).
    private let extraHostEnvironment: [String: String]

    /// `homeListen`: where the computer's home door listens (off: the relay road only);
    /// `relayArguments`: more `herdr-relay serve` flags. `through`: the origin and loopback port
    /// of a relay already running (a cluster behind HAProxy); without it the road starts a relay
    /// of its own (SQLite, plain WebSocket). `hostEnvironment` adds to herdr-host's environment.
    init(
        devices: Int, homeListen: String = "off", relayArguments: [String] = [],
        through external: (origin: String, port: UInt16)? = nil, hostEnvironment extra: [String: String] = [:]
    ) throws {
        extraHostEnvironment = extra
        directory = try TemporaryDirectory(prefix: "herdr-bench-terminal-")
        if let external {
            (origin, port, relay) = (external.origin, external.port, nil)
        } else {
            let database = directory.appending("relay.sqlite").path
            let first = try RelayProcess(
                ["--listen", "127.0.0.1:0", "--origin", "http://127.0.0.1:1", "--db", database],
                environment: ["ATTEST_REQUIRED": "false"])
            port = first.port
            _ = first.terminate()
            origin = "http://127.0.0.1:\(port)"
            // Every client here comes from 127.0.0.1: the per-address upgrade limit would throttle
            // the 20 drops' reconnects (the agent's and the device's) as one noisy client.
            relay = try RelayProcess(
                [
                    "--listen", "127.0.0.1:\(port)", "--origin", origin, "--db", database, "--upgrades-per-minute",
                    "100000", "--log",
                ] + relayArguments,
                environment: ["ATTEST_REQUIRED": "false"])
        }
        self.devices = devices
        try configure("home-listen", homeListen)
        for index in 0..<devices { try pair(index) }
        agent = try InteractiveProcess(BuiltProgram.path("herdr-host"), ["run"], environment: hostEnvironment)
        guard
            agent!.waitFor(
                timeout: 60, { _, log in log.components(separatedBy: "parking in its room").count > devices })
        else { throw FixtureError("the agent did not park: \(agent!.stderr)") }
        // Parking is confirmed by the status file.
        let deadline = now() + 60
        while now() < deadline {
            let status = try ProcessRunner.run(
                BuiltProgram.path("herdr-host"), ["status"], environment: hostEnvironment)
            if status.stdout.components(separatedBy: "parked").count > devices { break }
            usleep(50_000)
        }
    }

    /// herdr-host run's process id.
    var agentPID: pid_t? { agent?.process.pid }

    func stop() {
        agent?.signal(SIGTERM)
        _ = agent?.wait(timeout: 15)
        _ = relay?.terminate()
    }

    var hostEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appending("host").path
        return environment.merging(extraHostEnvironment) { $1 }
    }

    func deviceEnvironment(_ index: Int) -> [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory.appending("device-\(index)").path
        return environment
    }

    func configure(_ key: String, _ value: String) throws {
        let result = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["config", key, value], environment: hostEnvironment)
        guard result.status == 0 else { throw FixtureError("herdr-host config failed: \(result.stderr)") }
    }

    private func pair(_ index: Int) throws {
        try RelayProgramPairing.pair(
            origin: origin, computerName: "bench", deviceName: "phone-\(index)", hostEnvironment: hostEnvironment,
            deviceEnvironment: deviceEnvironment(index))
    }

    // MARK: - Resume

    /// Kills the device's relay socket `drops` times; each time, seconds to the first new output.
    func resumeTimes(drops: Int) throws -> [Double] {
        try resumeTimes(drops: drops, steady: RetryAfterDrop.steadyRoad + 0.1) { pid in
            try killSockets(of: pid, remotePort: port)
        }
    }

    /// Runs `herdr-remote connect bench` on pipes, and `drops` times calls `cut` with its pid,
    /// `steady` seconds after the output began or resumed; each time, seconds from the cut to the
    /// first output after it reconnected. `restore` runs after each resume.
    func resumeTimes(
        drops: Int, extra: [String] = [], steady: Double = 0, cut: (pid_t) throws -> Void,
        restore: () throws -> Void = {}
    ) throws -> [Double] {
        let input = try PipePair()
        let output = try PipePair()
        let errors = try PipePair()
        let device = try ChildProcess(
            BuiltProgram.path("herdr-remote"), ["connect", "bench"] + extra, environment: deviceEnvironment(0),
            stdin: input.read, stdout: output.write, stderr: errors.write)
        close(input.read)
        close(output.write)
        close(errors.write)
        defer {
            device.signal(SIGTERM)
            _ = device.wait()
            close(input.write)
            close(output.read)
            close(errors.read)
        }
        let arrivals = ArrivalLog()
        let (outputFD, errorFD) = (output.read, errors.read)
        let reader = Thread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while read(outputFD, &buffer, buffer.count) > 0 { arrivals.note(now()) }
        }
        reader.start()
        let stderrReader = Thread {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(errorFD, &buffer, buffer.count)
                guard count > 0 else { break }
                arrivals.noteText(String(decoding: buffer[0..<count], as: UTF8.self))
            }
        }
        stderrReader.start()
        guard arrivals.waitForOutput(after: 0, timeout: 30) != nil else {
            throw FixtureError("no output from the resume session; the device said: \(arrivals.text)")
        }
        var times: [Double] = []
        for drop in 1...drops {
            Thread.sleep(forTimeInterval: steady)
            let killed = now()
            do {
                try cut(device.pid)
            } catch {
                throw FixtureError("drop \(drop): \(error); the device said: \(arrivals.text)")
            }
            // Output still in the pipe when the socket died may land just after: only bytes after
            // the resume count.
            guard arrivals.waitForText("Reconnected", count: drop, timeout: 60),
                let first = arrivals.waitForOutput(
                    after: arrivals.lastTextTime(containing: "The link dropped"), timeout: 30)
            else { throw FixtureError("no resume after drop \(drop): \(arrivals.text)") }
            times.append(first - killed)
            try restore()
        }
        return times
    }

    /// `ss -K` on the sockets of `pid` connected to `remotePort` (found with `ss -tnp`: /proc/net/tcp
    /// reads back only its first page through Foundation).
    private func killSockets(of pid: pid_t, remotePort: UInt16) throws {
        let listing = try ProcessRunner.run("ss", ["-tnpH", "state", "established"], check: true).stdout
        var ports: [String] = []
        for line in listing.split(separator: "\n") where line.contains("pid=\(pid),") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 4, fields[3].hasSuffix(":\(remotePort)"),
                let local = fields[2].split(separator: ":").last
            else { continue }
            ports.append(String(local))
        }
        guard !ports.isEmpty else { throw FixtureError("herdr-remote has no socket to the relay: \(listing)") }
        for localPort in ports {
            _ = try ProcessRunner.run("ss", ["-K", "sport", "=", ":\(localPort)"], check: true)
        }
    }

    // MARK: - Memory

    /// herdr-host's RSS growth per attached idle session, all devices attached; and sshd's RSS for
    /// one idle `ssh -tt` session (its per-session processes).
    func hostMemoryPerIdleSession(ssh: SSHBenchmarks) throws -> (Int, Int) {
        guard let agent else { throw FixtureError("no agent") }
        let before = residentKiB(agent.process.pid)
        var sessions: [InteractiveProcess] = []
        for index in 0..<devices {
            sessions.append(
                try InteractiveProcess(
                    BuiltProgram.path("herdr-remote"), ["connect", "bench"], environment: deviceEnvironment(index)))
        }
        guard agent.waitFor(timeout: 60, { _, log in log.components(separatedBy: "started a session").count > devices })
        else { throw FixtureError("not every session started: \(agent.stderr)") }
        usleep(500_000)
        let after = residentKiB(agent.process.pid)
        for session in sessions { session.signal(SIGTERM) }
        for session in sessions { _ = session.wait(timeout: 15) }

        // sshd: the processes a session adds under the listener.
        guard let listener = ssh.server.pid else { throw FixtureError("sshd is not running") }
        let childrenBefore = Set(Self.descendants(of: listener))
        let child = try InteractiveProcess("ssh", ["-tt"] + ssh.sshArguments + ["exec cat"], environment: [:])
        var added: [pid_t] = []
        let deadline = now() + 30
        while now() < deadline {
            added = Self.descendants(of: listener).filter { !childrenBefore.contains($0) }
            if added.count >= 2 { break }
            usleep(50_000)
        }
        usleep(300_000)
        let sshdKiB = added.map(residentKiB).reduce(0, +)
        child.signal(SIGTERM)
        _ = child.wait(timeout: 15)
        return ((after - before) * 1024 / devices, sshdKiB * 1024)
    }

    /// herdr-remote's peak and idle RSS (KiB) while its stdout, a FIFO, is not read for 3 s during
    /// a 64 MiB burst; then everything is read.
    func stalledDevicePeak() throws -> (Int, Int) {
        let fifo = directory.file("stall-fifo").path
        unlink(fifo)
        guard mkfifo(fifo, 0o600) == 0 else { throw FixtureError("mkfifo failed") }
        let device = try InteractiveProcess(
            "/bin/sh", ["-c", "exec \(BuiltProgram.path("herdr-remote")) connect bench > \(fifo)"],
            environment: deviceEnvironment(0))
        let reader = open(fifo, O_RDONLY)
        guard reader >= 0 else { throw FixtureError("cannot open the FIFO") }
        defer { close(reader) }
        var byte: UInt8 = 0
        guard read(reader, &byte, 1) == 1 else {
            let status =
                (try? ProcessRunner.run(BuiltProgram.path("herdr-host"), ["status"], environment: hostEnvironment))
            throw FixtureError(
                "no output: \(device.stderr); the agent's status: \(status?.stdout ?? "")")
        }
        let idle = residentKiB(device.process.pid)
        var peak = idle
        let end = now() + 3
        while now() < end {
            peak = max(peak, peakRSSKiB(pid: String(device.process.pid)))
            usleep(50_000)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while read(reader, &buffer, buffer.count) > 0 {}
        peak = max(peak, peakRSSKiB(pid: String(device.process.pid)))
        _ = device.wait(timeout: 60)
        return (peak, idle)
    }

    /// `count` keystrokes through `herdr-remote connect bench` (with `extra` arguments) and
    /// `ssh -tt`, taking turns so both see the same moments of the machine's load.
    /// `forwarded`: ssh also takes turns through a TCP forwarder (`splice-child --forward`), the
    /// price of one relay hop on OpenSSH's own path.
    func keystrokeEcho(ssh: SSHBenchmarks, extra: [String] = [], count: Int, forwarded: Bool = false) throws
        -> KeystrokeEcho
    {
        try configure("session-command", SSHBenchmarks.echoCommand)
        let ourEcho = try PipedEcho(
            executable: BuiltProgram.path("herdr-remote"), arguments: ["connect", "bench"] + extra,
            environment: deviceEnvironment(0))
        defer { ourEcho.stop() }
        let sshEcho = try PipedEcho(
            executable: "ssh", arguments: ["-tt"] + ssh.sshArguments + [SSHBenchmarks.echoCommand], environment: nil)
        defer { sshEcho.stop() }
        guard let agent = agent?.process.pid, let listener = ssh.server.pid else {
            throw FixtureError("the agent or sshd is not running")
        }
        // sshd's processes for the direct session only: taken before the forwarded one starts.
        let paths = [
            [ourEcho.pid], relay.map { [$0.process.pid] } ?? [], [agent] + Self.descendants(of: agent),
            [sshEcho.pid], Self.descendants(of: listener),
        ]
        var echoes = [ourEcho, sshEcho]
        var forwarder: RelayBenchmarks.Child?
        var forwardedEcho: PipedEcho?
        defer {
            forwardedEcho?.stop()
            forwarder?.stop()
        }
        if forwarded {
            let child = try RelayBenchmarks.Child(["splice-child", "--forward", String(ssh.server.port)])
            forwarder = child
            let arguments = ssh.sshArguments.map { $0 == String(ssh.server.port) ? String(child.port) : $0 }
            let echo = try PipedEcho(
                executable: "ssh", arguments: ["-tt"] + arguments + [SSHBenchmarks.echoCommand], environment: nil)
            forwardedEcho = echo
            echoes.append(echo)
        }
        let before = paths.map(cpuNanoseconds)
        let samples = try interleavedRoundTrips(echoes, count: count, pace: 0.05)
        // A thread that ended meanwhile leaves the sum: never below zero.
        let used = zip(paths.map(cpuNanoseconds), before).map {
            max(0, Double($0) - Double($1)) / 1e3 / Double(count)
        }
        return KeystrokeEcho(ours: samples[0], anchor: samples[1], cpu: used, forwarded: forwarded ? samples[2] : nil)
    }

    static func descendants(of pid: pid_t) -> [pid_t] {
        guard let children = try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8) else {
            return []
        }
        let direct = children.split(separator: " ").compactMap { pid_t($0) }
        return direct + direct.flatMap(descendants)
    }
}

/// The CPU time `pids` have used so far, every thread, user and kernel (the scheduler's own
/// count in /proc/PID/task/TID/schedstat, in nanoseconds: exact, where utime and stime are ticks).
func cpuNanoseconds(_ pids: [pid_t]) -> UInt64 {
    var total: UInt64 = 0
    for pid in pids {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task") else { continue }
        for task in tasks {
            guard let text = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/schedstat", encoding: .utf8),
                let first = text.split(separator: " ").first, let used = UInt64(first)
            else { continue }
            total += used
        }
    }
    return total
}

/// The resident set of `pid` now (VmRSS), in KiB.
func residentKiB(_ pid: pid_t) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }
    return 0
}

/// When output arrived, and the status lines, from the reader threads.
final class ArrivalLog: @unchecked Sendable {
    private let condition = NSCondition()
    private var times: [Double] = []
    private var lines: [(Double, String)] = []

    func note(_ time: Double) {
        condition.withLock {
            times.append(time)
            condition.broadcast()
        }
    }

    func noteText(_ text: String) {
        condition.withLock {
            lines.append((now(), text))
            condition.broadcast()
        }
    }

    var text: String { condition.withLock { lines.map(\.1).joined() } }

    func lastTextTime(containing needle: String) -> Double {
        condition.withLock { lines.last { $0.1.contains(needle) }?.0 ?? 0 }
    }

    /// The first output arrival after `time`.
    func waitForOutput(after time: Double, timeout: Double) -> Double? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while true {
                if let first = times.first(where: { $0 > time }) { return first }
                guard condition.wait(until: deadline) else { return nil }
            }
        }
    }

    func waitForText(_ needle: String, count: Int, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while lines.map(\.1).joined().components(separatedBy: needle).count <= count {
                guard condition.wait(until: deadline) else { return false }
            }
            return true
        }
    }
}
