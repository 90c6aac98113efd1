import Foundation
import Glibc
import TestSupport

/// A program whose stdin and stdout are pipes, running an echo (`stty raw -echo; exec cat` on the
/// far side): one-byte round trips, timed from the write to the byte coming back.
final class PipedEcho {
    let executable: String
    /// What errors call it: the program's name, or `executable`.
    let name: String
    var pid: pid_t { child.pid }
    private let input: PipePair
    private let output: PipePair
    private let child: ChildProcess
    /// Set for a program that draws a screen (mosh-client): only bytes outside its escape
    /// sequences can be the echo.
    private var screen: TerminalTextFilter?

    /// Starts the program and waits until it echoes at all (the far side may still be starting,
    /// for up to `warmUp` seconds). `drawsScreen`: its output is a terminal's (see `screen`).
    init(
        executable: String, arguments: [String], environment: [String: String]?, drawsScreen: Bool = false,
        name: String? = nil,
        warmUp: Double = 20
    ) throws {
        self.executable = executable
        self.name = name ?? executable
        screen = drawsScreen ? TerminalTextFilter() : nil
        input = try PipePair()
        output = try PipePair()
        child = try ChildProcess(
            executable, arguments, environment: environment, stdin: input.read, stdout: output.write)
        close(input.read)
        close(output.write)
        var warmed = false
        for _ in 0..<Int(warmUp / 0.05) where !warmed {
            var w = UInt8(ascii: "w")
            _ = write(input.write, &w, 1)
            while let byte = readByte(timeout: 0.05) { if byte == w { warmed = true } }
        }
        guard warmed else {
            stop()
            throw FixtureError("\(self.name) never echoed")
        }
    }

    /// Seconds from writing `byte` to reading it back.
    func roundTrip(_ byte: UInt8, index: Int) throws -> Double {
        var byte = byte
        let start = now()
        _ = write(input.write, &byte, 1)
        while true {
            guard let got = readByte(timeout: 5) else {
                throw FixtureError("\(name): no echo for keystroke \(index)")
            }
            if got == byte { return now() - start }
        }
    }

    func stop() {
        close(input.write)
        close(output.read)
        child.signal(SIGTERM)
        child.wait()
    }

    private func readByte(timeout: Double) -> UInt8? {
        var fds = [pollfd(fd: output.read, events: Int16(POLLIN), revents: 0)]
        guard poll(&fds, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var byte: UInt8 = 0
        guard read(output.read, &byte, 1) == 1 else { return nil }
        // A byte of an escape sequence stands for no keystroke: a NUL never matches one.
        guard screen == nil || screen!.isText(byte) else { return 0 }
        return byte
    }
}

/// `count` keystroke round trips through each program, taken in turn (one of each per `pace`
/// seconds), so both see the same moments of a machine whose load drifts.
func interleavedRoundTrips(_ programs: [PipedEcho], count: Int, pace: Double) throws -> [[Double]] {
    var samples = [[Double]](repeating: [], count: programs.count)
    var next = now()
    for index in 0..<count {
        for (which, program) in programs.enumerated() {
            let wait = next - now()
            if wait > 0 { usleep(UInt32(wait * 1e6)) }
            next = max(next + pace / Double(programs.count), now())
            samples[which].append(try program.roundTrip(UInt8(ascii: "a") + UInt8(index % 26), index: index))
        }
    }
    return samples
}
