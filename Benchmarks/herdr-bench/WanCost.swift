import Foundation
import Glibc
import TestSupport

/// What a session costs in `herdr-bench wan` (issue 42): bytes on the device's links while a
/// busy `top` runs, and the computer's CPU per MiB of output (herdr-host, which keeps a screen
/// session's terminal with libvterm, against mosh-server, which keeps its own).
@MainActor
struct WanCost {
    let roads: WanRoads

    /// What the device's links carry in `herdr-bench wan`'s top phase: a busy `top` (at the
    /// terminal every program's session sees: what mosh-client is given with stty, and
    /// herdr-remote's size on pipes), and a session where nothing happens.
    enum Activity: String, CaseIterable {
        case top
        case idle

        var command: String {
            switch self {
            case .top: "exec env TERM=xterm-256color LINES=24 COLUMNS=80 top -d 1"
            case .idle: "echo idle-ready; exec cat"
            }
        }

        /// What the device shows once the session runs.
        var ready: String { self == .top ? "load average" : "idle-ready" }
    }

    /// Bytes both ways on the device's links (wifi and cellular, headers included) while
    /// `activity` runs through `program` for `seconds`, after it has drawn and settled for 3 s.
    func wireBytes(_ program: WanProgram, _ activity: Activity, seconds: Double) throws -> WanResults.Wire {
        try roads.useSessionCommand(activity.command)
        let launch = try WanLaunch(program, roads: roads, command: activity.command)
        defer { launch.stop() }
        let screen = try ScreenRecorder(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
            drawsScreen: program.drawsScreen)
        defer { screen.stop() }
        guard screen.waitFor(activity.ready, timeout: 60) else {
            throw FixtureError("\(program.label): \(activity.rawValue) did not start: \(screen.stderr)")
        }
        Thread.sleep(forTimeInterval: 3)
        let before = try deviceLinkBytes()
        Thread.sleep(forTimeInterval: seconds)
        let after = try deviceLinkBytes()
        return .init(program: program.rawValue, activity: activity.rawValue, seconds: seconds, bytes: after - before)
    }

    /// The computer's CPU seconds (user and system) while `mebibytes` MiB of numbered lines go
    /// through `program`'s session, from a still screen until the device shows the end.
    func processing(_ program: WanProgram, mebibytes: Int) throws -> WanResults.Processing {
        let command =
            "echo cost-ready; sleep 1; head -c \(mebibytes << 20) \(roads.bigFile.path); echo; echo cost-done"
        try roads.useSessionCommand(command)
        let launch = try WanLaunch(program, roads: roads, command: command)
        defer { launch.stop() }
        guard let server = program == .mosh ? launch.server?.pid : roads.hostPID else {
            throw FixtureError("\(program.label): no computer process to measure")
        }
        let screen = try ScreenRecorder(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
            drawsScreen: program.drawsScreen)
        defer { screen.stop() }
        guard screen.waitFor("cost-ready", timeout: 60) else {
            throw FixtureError("\(program.label): the session did not start: \(screen.stderr)")
        }
        let (cpuBefore, start) = (try Self.cpuSeconds(of: server), now())
        guard screen.waitFor("cost-done", timeout: 600) else {
            throw FixtureError("\(program.label): \(mebibytes) MiB did not reach the device: \(screen.stderr)")
        }
        let (cpuAfter, end) = (try Self.cpuSeconds(of: server), now())
        return .init(
            program: program.rawValue, mebibytes: mebibytes, cpuSeconds: cpuAfter - cpuBefore, seconds: end - start)
    }

    /// Received and sent bytes of the device's two links, summed.
    private func deviceLinkBytes() throws -> Int {
        let files = ["wifi", "cellular"].flatMap { link in
            ["rx", "tx"].map { "/sys/class/net/\(link)/statistics/\($0)_bytes" }
        }
        let result = try roads.network.run(in: "device", "cat", files)
        let counts = result.stdout.split(whereSeparator: \.isNewline).compactMap { Int($0) }
        guard result.status == 0, counts.count == files.count else {
            throw FixtureError("the device's link counters: \(result.stdout) \(result.stderr)")
        }
        return counts.reduce(0, +)
    }

    /// User and system CPU seconds `pid` has used (/proc/PID/stat's utime and stime).
    static func cpuSeconds(of pid: pid_t) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        // The fields after the command's closing parenthesis start at the third (state).
        guard let close = stat.lastIndex(of: ")") else { throw FixtureError("/proc/\(pid)/stat: \(stat)") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
            throw FixtureError("/proc/\(pid)/stat: \(stat)")
        }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
