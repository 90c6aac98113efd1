import Foundation
import Glibc
import HerdrCrypto
import TestSupport

/// The phases of `herdr-bench wan` under fixed conditions: keystroke echo, Ctrl-C during `yes`,
/// `cat` of 64 MiB. Each runs every program in turn on the same emulated link.
@MainActor
struct WanPhases {
    let roads: WanRoads

    /// `count` one-byte round trips through each program, taking turns, `stty raw -echo; exec
    /// cat` on the far side.
    func keystrokes(_ programs: [WanProgram], count: Int) throws -> [WanProgram: [Double]] {
        try roads.useSessionCommand(SSHBenchmarks.echoCommand)
        // One paired device's newest connection takes its route from the one before: each screen
        // road runs alone, after the roads of bytes.
        var samples: [WanProgram: [Double]] = [:]
        let groups = [programs.filter { !$0.isScreenRoad }] + programs.filter(\.isScreenRoad).map { [$0] }
        for group in groups where !group.isEmpty {
            var launches: [WanLaunch] = []
            var echoes: [PipedEcho] = []
            defer {
                for echo in echoes { echo.stop() }
                for launch in launches { launch.stop() }
            }
            for program in group {
                let launch = try WanLaunch(program, roads: roads, command: SSHBenchmarks.echoCommand)
                launches.append(launch)
                echoes.append(
                    try PipedEcho(
                        executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
                        drawsScreen: program.drawsScreen, name: program.label, warmUp: 60))
            }
            let measured = try interleavedRoundTrips(echoes, count: count, pace: 0.05)
            for (program, seconds) in zip(group, measured) { samples[program] = seconds }
        }
        return samples
    }

    /// The prompt of the interrupt phase's shell.
    static let prompt = "wan$ "

    /// A shell prints `yes` for 3 s, then Ctrl-C: seconds from the Ctrl-C until the prompt is
    /// back and the screen still (the last output before 2 s without any); nil if the prompt did
    /// not come back within 60 s.
    func interrupt(_ program: WanProgram) throws -> Double? {
        let command = "exec env PS1='\(Self.prompt)' /bin/sh -i"
        try roads.useSessionCommand(command)
        let launch = try WanLaunch(program, roads: roads, command: command)
        defer { launch.stop() }
        let screen = try ScreenRecorder(
            executable: launch.executable, arguments: launch.arguments, environment: launch.environment,
            drawsScreen: program.drawsScreen)
        defer { screen.stop() }
        guard screen.waitFor(Self.prompt, timeout: 60) else {
            throw FixtureError("\(program.label): no prompt: \(screen.stderr)")
        }
        screen.write(Array("yes\n".utf8))
        Thread.sleep(forTimeInterval: 3)
        let interrupted = now()
        let offset = screen.shownCount
        screen.write([3])
        // Without the prompt's trailing space: mosh draws a blank cell as an erase, not a space.
        // The prompt first: a program that draws screens shows `yes` as one still screen of y,
        // quiet long before the Ctrl-C.
        let trace = ProcessInfo.processInfo.environment["HERDR_BENCH_WAN_TRACE"] != nil
        guard screen.waitFor(String(Self.prompt.dropLast()), after: offset, timeout: 60),
            let still = screen.waitUntilQuiet(for: 2, timeout: 60)
        else {
            if trace {
                let tail = String(decoding: screen.shown.suffix(300), as: UTF8.self)
                FileHandle.standardError.write(
                    Data(
                        ("\(program.label): no prompt after Ctrl-C; shown after it: \(screen.timeline(after: interrupted)); "
                            + "the last text: \(tail.debugDescription); stderr: \(screen.stderr)\n").utf8))
            }
            return nil
        }
        if trace {
            let prompt = screen.arrival(of: Array(Self.prompt.dropLast().utf8), after: offset, timeout: 0)
            FileHandle.standardError.write(
                Data(
                    ("\(program.label): Ctrl-C → prompt \(prompt.map { String(format: "%.3f s", $0 - interrupted) } ?? "?"), "
                        + "still \(String(format: "%.3f s", still - interrupted)); shown after it: "
                        + "\(screen.timeline(after: interrupted)); stderr: \(screen.stderr)\n").utf8))
        }
        return still - interrupted
    }

    /// `cat` of the 64 MiB file through the PTY (`stty -opost`, so its bytes arrive unchanged):
    /// seconds from the program's start to the last byte, and whether the SHA-256 of what it
    /// printed is the file's.
    func bulk(_ program: WanProgram, expected digest: [UInt8]) throws -> (Double, Bool) {
        let command = "stty -opost; cat \(roads.bigFile.path)"
        try roads.useSessionCommand(command)
        let launch = try WanLaunch(program, roads: roads, command: command)
        defer { launch.stop() }
        let pipe = try PipePair()
        let start = now()
        let child = try ChildProcess(
            launch.executable, launch.arguments, environment: launch.environment, stdout: pipe.write)
        close(pipe.write)
        defer { close(pipe.read) }
        var received = [UInt8]()
        received.reserveCapacity(WanRoads.bigFileBytes + 65536)
        var buffer = [UInt8](repeating: 0, count: 1 << 18)
        // Bounded: 64 MiB at 20 Mbit/s is 27 s; five minutes is a path that broke.
        let deadline = start + 300
        var fds = [pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)]
        while now() < deadline {
            guard poll(&fds, 1, 1000) >= 0 || errno == EINTR else { break }
            guard fds[0].revents != 0 else { continue }
            let count = read(pipe.read, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            received += buffer[0..<count]
        }
        let seconds = now() - start
        child.signal(SIGTERM)
        if child.wait(timeout: 5) == nil {
            child.signal(SIGKILL)
            _ = child.wait()
        }
        return (seconds, received.count == WanRoads.bigFileBytes && SHA256.hash(received) == digest)
    }
}
