import CSystem
import Foundation
import Glibc
import HerdrHostAgent
import Synchronization
import TestSupport
import Testing

/// PTYProcess with real programs: the terminal they see, their exit, hang-up, the read gate.
@Suite struct PTYProcessTests {
    /// Collects a PTY's events.
    final class Collector: @unchecked Sendable {
        private let changed = NSCondition()
        private var bytes: [UInt8] = []
        private var ended: PTYProcess.Event?

        func take(_ event: PTYProcess.Event) {
            changed.lock()
            if case .output(let chunk) = event { bytes += chunk } else { ended = event }
            changed.broadcast()
            changed.unlock()
        }

        var output: [UInt8] { changed.withLock { bytes } }
        var text: String { String(decoding: output, as: UTF8.self) }
        var exit: PTYProcess.Event? { changed.withLock { ended } }

        /// Waits (bounded) until `condition` holds.
        @discardableResult
        func wait(timeout: Double = 20, _ condition: (Collector) -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while !condition(self) {
                guard Date() < deadline else { return false }
                changed.lock()
                _ = changed.wait(until: Date().addingTimeInterval(0.05))
                changed.unlock()
            }
            return true
        }
    }

    func start(_ command: String, cols: Int = 80, rows: Int = 24, allow: UInt64 = .max) throws -> (
        PTYProcess, Collector
    ) {
        let collector = Collector()
        var environment = ProcessInfo.processInfo.environment
        environment["TERM"] = "xterm-256color"
        let pty = try PTYProcess(
            PTYProcess.Launch(command: command, environment: environment, directory: "/", cols: cols, rows: rows)
        ) { collector.take($0) }
        pty.allowReading(upTo: allow)
        return (pty, collector)
    }

    @Test func theProgramSeesATerminalOfItsOwnWithUTF8AndTheWindowSize() throws {
        let (_, output) = try start(
            "tty -s && echo tty-yes; stty -a | grep -o -- '-\\?iutf8' | head -1; stty size; echo \"term=$TERM\"; ps -o sid= -p $$ | tr -d ' '; echo pid=$$",
            cols: 132, rows: 43)
        #expect(output.wait { $0.exit != nil })
        let text = output.text
        #expect(text.contains("tty-yes"))
        #expect(
            text.contains("\r\niutf8\r\n") || text.hasPrefix("tty-yes\r\niutf8"),
            "IUTF8 is on: \(text.debugDescription)")
        #expect(text.contains("43 132"))
        #expect(text.contains("term=xterm-256color"))
        // The shell leads a session of its own (setsid): its session id is its pid.
        let lines = text.components(separatedBy: "\r\n")
        let pid = lines.first { $0.hasPrefix("pid=") }.map { String($0.dropFirst(4)) }
        #expect(pid != nil && lines.contains(pid!), "\(lines)")
        #expect(output.exit == .exited(status: 0, signal: nil))
    }

    @Test func resizeReachesTheProgram() throws {
        let (pty, output) = try start("trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done")
        #expect(output.wait { $0.text.contains("ready") })
        pty.resize(cols: 100, rows: 30)
        #expect(output.wait { $0.text.contains("30 100") }, "\(output.text.debugDescription)")
        pty.hangUp()
        #expect(output.wait { $0.exit != nil })
    }

    @Test func exitStatusSignalAndTheLastOutputBeforeTheExit() throws {
        let (_, failed) = try start("printf 'last words'; exit 7")
        #expect(failed.wait { $0.exit != nil })
        #expect(failed.text == "last words")
        #expect(failed.exit == .exited(status: 7, signal: nil))
        let (_, killed) = try start("kill -TERM $$")
        #expect(killed.wait { $0.exit != nil })
        #expect(killed.exit == .exited(status: nil, signal: SIGTERM))
    }

    @Test func aBackgroundJobHoldingTheTerminalDoesNotHoldTheExit() throws {
        let (_, output) = try start("(sleep 30 &) ; echo done")
        #expect(output.wait { $0.exit != nil })
        #expect(output.text.contains("done"))
        #expect(output.exit == .exited(status: 0, signal: nil))
    }

    @Test func hangingUpEndsTheWholeProcessGroupAndReapsIt() throws {
        let directory = try TemporaryDirectory(prefix: "pty-")
        let pidFile = directory.file("child.pid").path
        let (pty, output) = try start("sleep 300 & echo $! > \(pidFile); echo ready; wait")
        #expect(output.wait { $0.text.contains("ready") })
        let child = try #require(
            Int32(String(contentsOfFile: pidFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        #expect(kill(child, 0) == 0)
        pty.hangUp()
        #expect(output.wait { $0.exit != nil })
        #expect(output.exit == .exited(status: nil, signal: SIGHUP))
        // The background job got the hang-up too; the shell was reaped (no zombie of ours remains).
        let gone = Date().addingTimeInterval(10)
        while kill(child, 0) == 0 && Date() < gone { usleep(20_000) }
        #expect(kill(child, 0) != 0, "the group's other member was hung up")
        let shellGone = Date().addingTimeInterval(10)
        while kill(pty.pid, 0) == 0 && Date() < shellGone { usleep(20_000) }
        #expect(kill(pty.pid, 0) != 0, "the shell was reaped")
    }

    @Test func aClosedReadGateStopsTheWriter() throws {
        let directory = try TemporaryDirectory(prefix: "pty-")
        let progress = directory.file("progress").path
        // Writes 16 MiB in 64 KiB blocks, noting each block done.
        let (pty, output) = try start(
            "i=0; while [ $i -lt 256 ]; do head -c 65536 /dev/zero; i=$((i+1)); echo $i > \(progress); done",
            allow: 1024 * 1024)
        #expect(output.wait { $0.output.count >= 1024 * 1024 })
        // The gate holds at 1 MiB: the writer stops once the terminal's buffers are full. Its
        // progress stops moving: two reads far apart say the same.
        func written() -> Int {
            Int(
                (try? String(contentsOfFile: progress, encoding: .utf8))?.trimmingCharacters(
                    in: .whitespacesAndNewlines)
                    ?? "") ?? 0
        }
        var last = -1
        var stable = false
        for _ in 0..<100 {
            usleep(100_000)
            let now = written()
            if now == last {
                stable = true
                break
            }
            last = now
        }
        #expect(stable, "the writer stopped")
        #expect(output.output.count == 1024 * 1024, "nothing past the gate was read")
        #expect(last < 64, "the writer is held far short of its 256 blocks: \(last)")
        pty.allowReading(upTo: .max)
        #expect(output.wait { $0.exit != nil })
        #expect(output.output.count >= 16 * 1024 * 1024)
    }

    @Test func inputReachesTheProgramAndTheBoundRefusesAFlood() throws {
        let (pty, output) = try start("stty -echo; echo ready; read line; echo \"got:$line\"; sleep 300")
        #expect(output.wait { $0.text.contains("ready") })
        #expect(pty.write(Array("hello\n".utf8)))
        #expect(output.wait { $0.text.contains("got:hello") })
        // Nobody reads now: input piles up to the bound, then is refused.
        let block = [UInt8](repeating: 0x61, count: 1024 * 1024)
        var accepted = 0
        for _ in 0..<20 where pty.write(block) { accepted += 1 }
        #expect(accepted <= PTYProcess.maximumPendingInput / block.count + 1)
        #expect(accepted < 20)
        pty.hangUp()
        #expect(output.wait { $0.exit != nil })
    }

    @Test func writersOnSeveralThreadsEachKeepTheirOrderAndLoseNothing() throws {
        // Raw and without echo, `cat` hands back exactly what was typed: each writer's lines must
        // come back whole and in its order, however direct writes, partial writes and the
        // queue interleave (each write is one whole line, so lines never mix).
        let (pty, output) = try start("stty raw -echo; echo ready; exec cat")
        #expect(output.wait { $0.text.contains("ready") })
        let writers = 4
        let lines = 1000
        let padding = String(repeating: "x", count: 2000)
        let refused = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for line in 0..<lines {
                // A refusal (the bound) is retried for at most 10 s.
                var tries = 0
                while !pty.write(Array("w\(writer) \(line) \(padding)\n".utf8)) {
                    tries += 1
                    guard tries < 10_000 else {
                        refused.withLock { $0 += 1 }
                        return
                    }
                    usleep(1000)
                }
            }
        }
        #expect(refused.withLock { $0 } == 0)
        let expected =
            "ready\n".utf8.count
            + (0..<writers).reduce(0) { sum, writer in
                sum + (0..<lines).reduce(0) { $0 + "w\(writer) \($1) \(padding)\n".utf8.count }
            }
        #expect(output.wait { $0.output.count >= expected })
        var next = [Int](repeating: 0, count: writers)
        var inOrder = true
        for row in output.text.split(separator: "\n").dropFirst() {
            let fields = row.split(separator: " ")
            guard fields.count == 3, fields[0].hasPrefix("w"), let writer = Int(fields[0].dropFirst()),
                writer < writers, let line = Int(fields[1]), fields[2] == padding
            else {
                inOrder = false
                break
            }
            if line != next[writer] { inOrder = false }
            next[writer] = line + 1
        }
        #expect(inOrder)
        #expect(next == [Int](repeating: lines, count: writers))
        pty.hangUp()
        #expect(output.wait { $0.exit != nil })
    }

    @Test func aWriteTheTerminalCannotTakeWholeKeepsItsRestAheadOfLaterInput() throws {
        // The program reads nothing for a second: the first write fills the terminal's buffer
        // and its rest is queued; what is written next must come after all of it.
        let (pty, output) = try start("stty raw -echo; echo ready; sleep 1; exec cat")
        #expect(output.wait { $0.text.contains("ready") })
        let big = (0..<(1024 * 1024)).map { UInt8(ascii: "a") + UInt8($0 % 26) }
        #expect(pty.write(big))
        #expect(pty.write(Array("<end>".utf8)))
        #expect(output.wait { $0.text.hasSuffix("<end>") })
        let echoed = output.output.drop { $0 != UInt8(ascii: "\n") }.dropFirst()
        // A Bool: a failed `==` on two 1 MiB arrays would have the report diff them.
        let same = echoed.elementsEqual(big + Array("<end>".utf8))
        #expect(same, "echoed \(echoed.count) bytes, expected \(big.count + 5)")
        pty.hangUp()
        #expect(output.wait { $0.exit != nil })
    }

    /// The eventfd descriptors this process has open now.
    static func eventDescriptors() -> Set<Int32> {
        let numbers = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            numbers.compactMap { Int32($0) }.filter {
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)"))
                    == "anon_inode:[eventfd]"
            })
    }

    @Test func aWakeUpAfterTheSessionEndedWritesToNoOtherFile() async {
        // The PTY's I/O thread wakes on an eventfd and closes it when the session has ended; a
        // credit or a hang-up coming after that must not write into whatever file gets its number.
        // Descriptor numbers are the whole process's, and other tests open and close eventfds in
        // parallel: the check runs in a process of its own, where only it can take the number.
        await #expect(processExitsWith: .success) {
            try await Self.wakeUpAfterTheSessionEndedReachesNoReusedDescriptor()
        }
    }

    static func wakeUpAfterTheSessionEndedReachesNoReusedDescriptor() async throws {
        let (pty, output) = try PTYProcessTests().start("read line; exit 0", allow: 1 << 40)
        let wake = pty.wakeDescriptorForTesting
        try #require(eventDescriptors().contains(wake))
        #expect(pty.write(Array("go\r".utf8)))
        try #require(output.wait { $0.exit == .exited(status: 0, signal: nil) })
        let deadline = Date().addingTimeInterval(10)
        while eventDescriptors().contains(wake) && Date() < deadline { usleep(10_000) }
        try #require(!eventDescriptors().contains(wake), "the I/O thread closed its eventfd")

        // Take the number back: the kernel hands out the lowest free one.
        var reopened: [Int32] = []
        defer { for fd in reopened { close(fd) } }
        while reopened.count < 64, reopened.last != wake {
            let fd = csystem_eventfd_nonblocking()
            try #require(fd >= 0)
            reopened.append(fd)
        }
        try #require(reopened.last == wake, "eventfd number \(wake) reused")
        pty.allowReading(upTo: .max)
        pty.hangUp()
        var count: UInt64 = 0
        let got = read(wake, &count, 8)
        try #require(got < 0 && errno == EAGAIN, "\(got) bytes (a count of \(count)) reached another eventfd")
    }
}
