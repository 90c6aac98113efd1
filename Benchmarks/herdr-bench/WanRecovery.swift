import Foundation
import Glibc
import TestSupport

/// The recovery phases of `herdr-bench wan`: a session printing numbered lines every 0.1 s, on
/// the device's wifi; then the path dies silently (the emulator drops the flows it carried, new
/// ones pass: a phone whose old path died and whose new connection works), or the network
/// changes (wifi's interface down, cellular's up). From the event to the next output on the
/// device's screen, and what was printed checked line by line.
@MainActor
struct WanRecovery {
    enum Kind: String, CaseIterable {
        /// A keystroke typed right after the path died, waiting for its echo: the next output
        /// (the echo, or a line, whichever the resumed road brings first).
        case owed
        /// Nothing typed: the next line printed after the path died.
        case idle
        /// wifi's interface down, cellular's up: the next line after cellular is up.
        case change
    }

    let roads: WanRoads
    /// How long the next output is waited for.
    let limit: Double
    /// Seconds between wifi's addresses going and its link going down, in a change (0: the one
    /// `ip link set down` takes by itself, about a millisecond).
    var changeGap: Double = 0
    /// The line tick of the session.
    static let tick = 0.1

    func measure(_ program: WanProgram, _ kind: Kind, rtt: Double, loss: Double) throws -> WanResults.Recovery {
        let command = NumberedLines.command(tick: Self.tick, limit: Int(limit) + 90)
        try roads.useSessionCommand(command)
        let network = roads.network
        // The session starts on wifi; for a change cellular is down until the change.
        try network.setInterface("cellular", up: kind != .change)
        defer {
            try? network.setState("wifi", .up)
            try? network.setInterface("wifi", up: true)
            try? network.setInterface("cellular", up: true)
        }
        let launch = try WanLaunch(program, roads: roads, command: command)
        defer { launch.stop() }
        let screen = try ScreenRecorder(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
            drawsScreen: program.drawsScreen)
        defer { screen.stop() }
        guard screen.waitFor("L0000", timeout: 60) else {
            throw FixtureError("\(program.label): the session did not start: \(screen.stderr)")
        }
        // Past the time after which a dropped road is tried again at once (2 s), as a session
        // that has been up a while.
        Thread.sleep(forTimeInterval: 2.5)
        var event = now()
        var recovered: Double?
        switch kind {
        case .owed, .idle:
            try network.setState("wifi", .cut)
            if kind == .owed { screen.write([NumberedLines.keystroke]) }
            // What was in flight when the flows died still lands within one way and a tick.
            recovered = screen.firstArrival(after: event + rtt / 2000 + Self.tick + 0.05, timeout: limit)
            // The keystroke's echo follows the resumed output; a moment to see it.
            if kind == .owed, recovered != nil { _ = screen.waitFor("k", timeout: 2) }
        case .change:
            if changeGap > 0 {
                try network.flushAddresses("wifi")
                Thread.sleep(forTimeInterval: changeGap)
            }
            try network.setInterface("wifi", up: false)
            try network.setInterface("cellular", up: true)
            event = now()
            recovered = screen.firstArrival(after: event, timeout: limit)
        }
        // A little more output after the recovery, for the line check.
        if recovered != nil { Thread.sleep(forTimeInterval: 0.5) }
        screen.stop()
        let arrivals = screen.arrivalTimes.map { $0 - event }.filter { $0 >= -1 && $0 <= limit }
        let check = program.resumesBytes ? NumberedLines(screen.shown) : nil
        return WanResults.Recovery(
            rtt: rtt, loss: loss, program: program.rawValue, kind: kind.rawValue,
            seconds: recovered.map { $0 - event }, arrivals: arrivals, lost: check?.lost, repeated: check?.repeated,
            missing: check?.missing, seenTwice: check?.again,
            // mosh shows the screen's latest state, not every line: its echo is not counted.
            keystrokesEchoed: kind == .owed && !program.drawsScreen
                ? screen.shown.filter { $0 == NumberedLines.keystroke }.count : nil,
            exact: check.map { $0.isExact && $0.keystrokes == (kind == .owed ? 1 : 0) },
            said: String(screen.stderr.suffix(800)))
    }
}
