import Foundation
import Glibc

/// The programs of this package, built beside the test bundle.
public enum BuiltProgram {
    /// The path of the program `name` (`herdr-relay`, `herdr-host`…).
    public static func path(_ name: String) -> String {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent(name).path
    }
}

/// The herdr-relay binary built beside this test bundle, run as a real process.
public final class RelayProcess {
    public static var executable: String { BuiltProgram.path("herdr-relay") }

    public let process: ChildProcess
    public let port: UInt16
    private let stderrRead: Int32

    /// Starts `herdr-relay serve …` (the built one, or `executable`: an installed copy) and waits for
    /// its `listening on` line.
    public init(_ arguments: [String], environment: [String: String] = [:], executable: String = executable) throws {
        let stdout = try PipePair()
        let stderr = try PipePair(nonBlockingRead: true)
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "ATTEST_REQUIRED")
        for (key, value) in environment { env[key] = value }
        process = try ChildProcess(
            executable, ["serve"] + arguments, environment: env, stdout: stdout.write, stderr: stderr.write)
        close(stdout.write)
        close(stderr.write)
        stderrRead = stderr.read
        var line: [UInt8] = []
        var byte: UInt8 = 0
        var ready = pollfd(fd: stdout.read, events: Int16(POLLIN), revents: 0)
        while poll(&ready, 1, 10_000) > 0, read(stdout.read, &byte, 1) == 1, byte != 10 { line.append(byte) }
        close(stdout.read)
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("herdr-relay listening on "), let colon = text.lastIndex(of: ":"),
            let port = UInt16(text[text.index(after: colon)...])
        else {
            process.signal(SIGKILL)
            _ = process.wait()
            throw RelayProcessError("herdr-relay did not start: \(text) \(Self.drain(stderrRead))")
        }
        self.port = port
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            _ = process.wait()
        }
        close(stderrRead)
    }

    /// Everything written to stderr since the last call.
    public func stderrText() -> String { Self.drain(stderrRead) }

    public static func drain(_ fd: Int32) -> String {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let got = read(fd, &buffer, buffer.count)
            guard got > 0 else { break }
            out += buffer[0..<got]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// SIGTERM, then the exit status (nil if it did not exit within `timeout`).
    public func terminate(timeout: Double = 10) -> Int32? {
        process.signal(SIGTERM)
        return process.wait(timeout: timeout)
    }
}

public struct RelayProcessError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
