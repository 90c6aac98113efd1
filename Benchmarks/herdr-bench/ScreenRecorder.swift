import Foundation
import Glibc
import TestSupport

/// A device program on pipes whose every read of output is kept with the time it arrived: what
/// reached the screen, and when. For a program that draws a screen (mosh), the text is what it
/// printed outside its escape sequences.
final class ScreenRecorder: @unchecked Sendable {
    private let child: ChildProcess
    private let input: Int32
    private let condition = NSCondition()
    /// Output reads: when each arrived and where its text starts in `text`.
    private var arrivals: [(time: Double, offset: Int)] = []
    private var raw: [UInt8] = []
    private var text: [UInt8] = []
    private var errors = ""
    private var ended = false
    private var filter: TerminalTextFilter?

    init(executable: String, arguments: [String], environment: [String: String], drawsScreen: Bool) throws {
        let stdin = try PipePair()
        let stdout = try PipePair()
        let stderr = try PipePair()
        child = try ChildProcess(
            executable, arguments, environment: environment, stdin: stdin.read, stdout: stdout.write,
            stderr: stderr.write)
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        input = stdin.write
        filter = drawsScreen ? TerminalTextFilter() : nil
        let (output, diagnostics) = (stdout.read, stderr.read)
        Thread { [self] in readOutput(output) }.start()
        Thread { [self] in readErrors(diagnostics) }.start()
    }

    var pid: pid_t { child.pid }

    private func readOutput(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            let time = now()
            condition.withLock {
                if count > 0 {
                    let chunk = buffer[0..<count]
                    raw += chunk
                    let shown = filter == nil ? Array(chunk) : filter!.text(of: chunk)
                    if !shown.isEmpty {
                        arrivals.append((time, text.count))
                        text += shown
                    }
                } else {
                    ended = true
                }
                condition.broadcast()
            }
            if count <= 0 { break }
        }
        close(fd)
    }

    private func readErrors(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            let said = String(decoding: buffer[0..<count], as: UTF8.self)
            condition.withLock { errors += said }
        }
        close(fd)
    }

    func write(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(input, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }

    /// Every byte of output so far, escape sequences included.
    var output: [UInt8] { condition.withLock { raw } }
    /// The text shown so far (the output itself, or mosh's outside its escape sequences).
    var shown: [UInt8] { condition.withLock { text } }
    var stderr: String { condition.withLock { errors } }
    /// When output last arrived (0: none yet).
    var lastArrival: Double { condition.withLock { arrivals.last?.time ?? 0 } }
    /// When each read of shown text arrived.
    var arrivalTimes: [Double] { condition.withLock { arrivals.map(\.time) } }

    /// Waits until the shown text holds `needle` somewhere after `offset`; whether it came.
    func waitFor(_ needle: String, after offset: Int = 0, timeout: Double) -> Bool {
        arrival(of: Array(needle.utf8), after: offset, timeout: timeout) != nil
    }

    /// When the read that completed `needle`, found after text offset `offset`, arrived; nil
    /// if it did not within `timeout` s.
    func arrival(of needle: [UInt8], after offset: Int, timeout: Double) -> Double? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while true {
                if let end = Self.end(of: needle, in: text, from: offset) {
                    return arrivals.last { $0.offset < end }?.time
                }
                guard !ended, condition.wait(until: deadline) else { return nil }
            }
        }
    }

    /// The first time shown text arrived after `time`, waiting up to `timeout` s.
    func firstArrival(after time: Double, timeout: Double) -> Double? {
        let deadline = Date().addingTimeInterval(timeout)
        return condition.withLock {
            while true {
                if let first = arrivals.first(where: { $0.time > time }) { return first.time }
                guard !ended, condition.wait(until: deadline) else { return nil }
            }
        }
    }

    /// Waits until nothing has arrived for `quiet` s (at most `timeout` s); when the last
    /// output arrived, or nil if the output never went quiet.
    func waitUntilQuiet(for quiet: Double, timeout: Double) -> Double? {
        let deadline = now() + timeout
        while now() < deadline {
            let last = lastArrival
            if now() - last >= quiet { return last }
            usleep(useconds_t(min(quiet, max(0.01, last + quiet - now())) * 1e6))
        }
        return nil
    }

    /// Shown bytes that arrived after `time`, per `step` s (a trace of a recovery or an
    /// interrupt, for `HERDR_BENCH_WAN_TRACE`): "+0.0 s 131072 B, +0.1 s 262144 B, …".
    func timeline(after time: Double, step: Double = 0.1) -> String {
        condition.withLock {
            var buckets: [Int: Int] = [:]
            for (index, arrival) in arrivals.enumerated() where arrival.time > time {
                let end = index + 1 < arrivals.count ? arrivals[index + 1].offset : text.count
                buckets[Int((arrival.time - time) / step), default: 0] += end - arrival.offset
            }
            return buckets.keys.sorted().map { String(format: "+%.1f s %d B", Double($0) * step, buckets[$0]!) }
                .joined(separator: ", ")
        }
    }

    /// The length of the shown text now (an offset to search after).
    var shownCount: Int { condition.withLock { text.count } }

    /// Ends the program (SIGTERM, then SIGKILL after 5 s), and its input.
    func stop() {
        child.signal(SIGTERM)
        if child.wait(timeout: 5) == nil {
            child.signal(SIGKILL)
            _ = child.wait()
        }
        close(input)
        // The reader ends with the pipe (a grandchild holding it open is killed with the namespace).
        let deadline = Date().addingTimeInterval(2)
        condition.withLock {
            while !ended { guard condition.wait(until: deadline) else { break } }
        }
    }

    private static func end(of needle: [UInt8], in haystack: [UInt8], from offset: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, offset <= haystack.count - needle.count else {
            return nil
        }
        var index = offset
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0] && haystack[index..<index + needle.count].elementsEqual(needle) {
                return index + needle.count
            }
            index += 1
        }
        return nil
    }
}
