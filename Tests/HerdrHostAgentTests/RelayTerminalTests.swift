import Foundation
import Glibc
import HerdrCrypto
import HerdrHostAgent
import HerdrKit
import RelayClient
import TestSupport
import Testing

/// The terminal through the relay with real processes: herdr-relay, herdr-host run, herdr-remote
/// connect, a PTY on the computer running its configured command or herdr's attach (a stand-in
/// that opens tmux).
@Suite(.serialized) struct RelayTerminalTests {
    /// A relay road, paired, its agent running.
    func pairedRoad(originPort: UInt16? = nil, configure: [(String, String)] = [], standIn: Bool = false) throws -> (
        RelayRoadFixture, InteractiveProcess
    ) {
        let road = try RelayRoadFixture(originPort: originPort)
        if standIn { try road.useHerdrStandIn() }
        try road.pair()
        for (key, value) in configure { try road.configure(key, value) }
        return (road, try road.startAgent())
    }

    @Test func aPersonTypesAndResizesInTheirTerminalAndLeavesWithTilde() throws {
        let (road, agent) = try pairedRoad(standIn: true)
        defer { agent.signal(SIGTERM) }
        let directory = try TemporaryDirectory(prefix: "relay-terminal-")
        let terminal = try TmuxTerminal(directory: directory, width: 120, height: 40)
        // The exit status is printed by the same command line: keys typed after `~.` could reach
        // herdr-remote before it is gone.
        try terminal.type(
            "XDG_CONFIG_HOME=\(road.deviceHome("phone").path) \(BuiltProgram.path("herdr-remote")) connect studio; echo rc=$?"
        )
        try terminal.waitFor("remote$ ")
        try terminal.type("echo $((6*7))-through-the-relay")
        try terminal.waitFor("42-through-the-relay")
        // The remote tmux draws a status line: its pane is one row shorter than our terminal.
        try terminal.type("stty size")
        try terminal.waitFor("39 120")
        try terminal.tmux(["resize-window", "-t", "local", "-x", "100", "-y", "30"])
        // The new size travels as a resize message: wait until the computer's tmux has it.
        let socket = try #require(road.standInTmuxSocket)
        let resized = Date().addingTimeInterval(30)
        while Date() < resized {
            let size = try ProcessRunner.run(
                "tmux", ["-S", socket, "display", "-p", "-t", "default", "#{client_width}x#{client_height}"])
            if size.stdout.hasPrefix("100x30") { break }
            usleep(50_000)
        }
        try terminal.type("clear; stty size")
        try terminal.waitFor("29 100")
        // ~. after a newline leaves; the local shell comes back with exit status 0.
        try terminal.type("", enter: true)
        try terminal.type("~.", enter: false)
        try terminal.waitFor("rc=0")
        // The computer's session is still there for the next connect: herdr (tmux) kept it.
        let sessions = try ProcessRunner.run("tmux", ["-S", socket, "list-sessions", "-F", "#S"])
        #expect(sessions.stdout.contains("default"))
    }

    @Test func aQuickFailureEndsWithItsTailAndACleanExitLaterIsClosed() throws {
        let (road, agent) = try pairedRoad(configure: [
            ("session-command", "echo 'herdr: no session named main' >&2; exit 3")
        ])
        defer { agent.signal(SIGTERM) }
        let failed = try road.startConnect()
        #expect(failed.wait(timeout: 60) == 14, "remote command failed: \(failed.stderr)")
        #expect(failed.stderr.contains("exited with status 3"))
        #expect(failed.stderr.contains("herdr: no session named main"), "\(failed.stderr)")

        try road.configure("session-command", "exit 0")
        let instant = try road.startConnect()
        #expect(instant.wait(timeout: 60) == 14, "an instant exit 0 is a failure too: \(instant.stderr)")
        #expect(instant.stderr.contains("right after it started"))

        try road.configure("session-command", "echo ready; read line; echo \"bye $line\"; exit 0")
        let clean = try road.startConnect()
        #expect(clean.waitFor("ready"))
        // Past the 2 s in which an exit 0 counts as "exited at once".
        usleep(2_300_000)
        clean.writeLine("now")
        #expect(clean.wait(timeout: 60) == 0, "\(clean.stderr)")
        #expect(clean.stdout.contains("bye now"))
    }

    @Test func resumesWithoutLossThroughFiveCuts() throws {
        let proxy = try CuttingProxy()
        let size = 20 * 1024 * 1024
        let output = try PacedOutput(prefix: "relay-resume-", size: size)
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        try road.pair()
        try road.configure("session-command", "stty raw -echo; exec \(output.command)")
        // Enough for everything produced while the device is away: no cut may cost the session.
        try road.configure("resume-buffer", "64MiB")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }

        let device = try road.startConnect()
        for cut in 1...5 {
            #expect(
                device.waitForBytes(timeout: 120) { out, _ in out.count >= cut * 3 * 1024 * 1024 },
                "output before cut \(cut): \(device.stdoutBytes.count) bytes; \(device.stderr)")
            if cut % 2 == 1 {
                #expect(proxy.cut() >= 1, "the device's connection went through the proxy")
            } else {
                try road.restartRelay()
            }
            #expect(
                device.waitForBytes(timeout: 120) { _, stderr in
                    String(decoding: stderr, as: UTF8.self).components(
                        separatedBy: "; the session resumed where it was."
                    ).count > cut
                }, "resumed after cut \(cut): \(device.stderr)")
        }
        #expect(device.wait(timeout: 180) == 0, "\(device.stderr)")
        let printed = device.stdoutBytes
        #expect(printed.count == size)
        #expect(SHA256.hash(printed) == SHA256.hash(try output.bytes()), "not a byte lost or repeated")
    }

    @Test func aDeviceAwayWhileMoreThanTheResumeBufferIsWrittenLosesNothing() throws {
        let proxy = try CuttingProxy()
        let directory = try TemporaryDirectory(prefix: "relay-away-")
        let size = 6 * 1024 * 1024
        let data = directory.file("output.bin")
        let source = SecureRandom.bytes(size)
        try Data(source).write(to: data)
        let progress = directory.file("progress")
        let writer = directory.file("writer.py")
        try Data(Self.progressWriter.utf8).write(to: writer)
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        try road.pair()
        try road.configure(
            "session-command", "stty raw -echo; exec python3 \(writer.path) \(data.path) \(progress.path)")
        try road.configure("resume-buffer", "1MiB")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }

        let device = try road.startConnect()
        #expect(
            device.waitForBytes(timeout: 120) { out, _ in out.count >= 256 * 1024 },
            "output before the cut: \(device.stdoutBytes.count) bytes; \(device.stderr)")
        // The device is kept away: its connection cut, every new one refused.
        proxy.refuse(true)
        #expect(proxy.cut() >= 1, "the device's connection went through the proxy")
        #expect(
            device.waitForBytes(timeout: 60) { _, stderr in
                String(decoding: stderr, as: UTF8.self).contains("The link dropped")
            }, "\(device.stderr)")
        // The writer goes on until the computer's 1 MiB resume buffer is full, then waits: decided
        // when its count stops moving (or it wrote everything, which the checks below refuse).
        func written() -> Int {
            Int((try? String(contentsOf: progress, encoding: .utf8)) ?? "") ?? 0
        }
        var last = -1
        var still = 0
        for _ in 0..<300 where still < 5 {
            usleep(200_000)
            let now = written()
            still = now == last ? still + 1 : 0
            last = now
        }
        #expect(last < size, "the writer was held while the device was away (wrote \(last) of \(size))")

        proxy.refuse(false)
        #expect(
            device.waitForBytes(timeout: 120) { out, _ in out.count >= size },
            "all output after the return: \(device.stdoutBytes.count) bytes; \(device.stderr)")
        // Past the 2 s in which an exit 0 counts as "exited at once": the writer waits for this.
        usleep(2_300_000)
        device.writeLine("done")
        #expect(device.wait(timeout: 180) == 0, "\(device.stderr)")
        #expect(device.stderr.contains("the session resumed where it was"), "\(device.stderr)")
        let printed = device.stdoutBytes
        #expect(printed.count == size)
        #expect(SHA256.hash(printed) == SHA256.hash(source), "not a byte lost or repeated")
    }

    /// Writes a file to stdout in 64 KiB blocks, as fast as the terminal takes them, and how much
    /// it has written to a progress file after each; then waits for a line before it exits.
    static let progressWriter = """
        import os, sys
        done = 0
        with open(sys.argv[1], "rb") as source:
            while True:
                block = source.read(65536)
                if not block:
                    break
                while block:
                    count = os.write(1, block)
                    block = block[count:]
                    done += count
                with open(sys.argv[2] + ".tmp", "w") as f:
                    f.write(str(done))
                os.replace(sys.argv[2] + ".tmp", sys.argv[2])
        sys.stdin.readline()

        """

    @Test func aFloodStaysUnderTheRelaysFrameCap() throws {
        let size = 100 * 1024 * 1024
        let (road, agent) = try pairedRoad(configure: [("session-command", "stty raw -echo; yes | head -c \(size)")])
        defer { agent.signal(SIGTERM) }
        let device = try road.startConnect()
        #expect(device.wait(timeout: 300) == 0, "\(device.stderr)")
        let printed = device.stdoutBytes
        #expect(printed.count == size)
        #expect(printed.prefix(4) == [0x79, 0x0A, 0x79, 0x0A])
        #expect(!device.stderr.contains("The link dropped"), "\(device.stderr)")
        // The relay never closed anything for the frame rate (it would show in its counters).
        let metrics = try RelayHTTPClient(endpoint: RelayEndpoint(parsing: road.origin)).request(
            method: "GET", path: "/metrics", room: nil, body: nil)
        let text = String(decoding: metrics.body, as: UTF8.self)
        #expect(text.contains("relay_frames_spliced"), "\(text)")
        #expect(!text.contains("frame rate exceeded"), "\(text)")
    }

    @Test func aStalledDeviceHoldsTheWriterAndStaysSmall() throws {
        let directory = try TemporaryDirectory(prefix: "relay-stall-")
        let progress = directory.file("progress")
        let writer = directory.file("writer.py")
        try Data(Self.countingWriter.utf8).write(to: writer)
        let size = 64 * 1024 * 1024
        let (road, agent) = try pairedRoad(configure: [
            (
                "session-command",
                "stty raw -echo; echo ready; read go; exec python3 \(writer.path) \(size) \(progress.path)"
            )
        ])
        defer { agent.signal(SIGTERM) }
        // herdr-remote's stdout is a FIFO this test reads only when it wants to.
        let fifo = directory.file("stdout").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let device = try InteractiveProcess(
            "/bin/sh", ["-c", "exec \(BuiltProgram.path("herdr-remote")) connect studio > \(fifo)"],
            environment: road.deviceEnvironment("phone"))
        let reader = open(fifo, O_RDONLY)
        #expect(reader >= 0)
        defer { close(reader) }
        var received: [UInt8] = []
        func read(atLeast count: Int) {
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while received.count < count {
                let got = Glibc.read(reader, &chunk, chunk.count)
                guard got > 0 else { return }
                received += chunk[0..<got]
            }
        }
        read(atLeast: 6)
        #expect(received == Array("ready\n".utf8), "\(device.stderr)")
        let idle = try Self.residentBytes(device.process.pid)
        device.writeLine("go")

        // The device stops reading: the writer is held once the window, the computer's resume
        // buffer and the terminal's own buffers are full. Decided when its count stops moving.
        func written() -> Int {
            Int(
                (try? String(contentsOf: progress, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
                    ?? "")
                ?? 0
        }
        var last = -1
        var held = false
        for _ in 0..<300 {
            usleep(200_000)
            let now = written()
            if now > 0, now == last {
                held = true
                break
            }
            last = now
        }
        #expect(held, "the writer was held at \(last) bytes")
        // The computer keeps at most its 8 MiB resume buffer, the device its 4 MiB window; the
        // sockets and the PTY hold a little more.
        #expect(last < 16 * 1024 * 1024, "written while stalled: \(last)")
        let stalled = try Self.residentBytes(device.process.pid)
        #expect(stalled - idle < 24 * 1024 * 1024, "device memory grew by \(stalled - idle) bytes")

        read(atLeast: 6 + size)
        #expect(received.count == 6 + size)
        #expect(device.wait(timeout: 120) == 0, "\(device.stderr)")
    }

    /// An agent that runs for months goes back to about its size when its sessions end: what
    /// they held is not kept by the allocator (issue 36: each session's resume buffer was one
    /// array of megabytes, and once glibc had freed one such mmapped buffer the next ones came
    /// from its arenas and stayed resident there: 34 MB grew to 88 MB over 20 sessions of 16.9 MB).
    @Test func theComputerGoesBackToItsSizeWhenItsSessionsEnd() throws {
        let size = 16 * 1024 * 1024
        let sessions = 12
        let (road, agent) = try pairedRoad(configure: [
            ("session-command", "stty raw -echo; head -c \(size) /dev/zero")
        ])
        defer { agent.signal(SIGTERM) }
        // Each session as fast as the relay lets it: the device's window and the computer's
        // resume buffer fill, as with any bulk output.
        func session(_ number: Int) throws {
            let device = try road.startConnect()
            #expect(
                device.waitForBytes(timeout: 60) { out, _ in out.count >= size },
                "session \(number): \(device.stdoutBytes.count) bytes; \(device.stderr)")
            #expect(device.wait(timeout: 60) != nil, "session \(number) did not end: \(device.stderr)")
        }
        try session(1)
        let first = try Self.residentBytes(agent.process.pid)
        for number in 2...sessions { try session(number) }
        // The last session's memory goes back once the agent has seen it end: waited for. The
        // bound is far above what the sessions after the first leave (under 1 MiB after 20) and
        // far below what they left before (65 MiB after these 12; 29 MiB with 8 MiB sessions).
        let bound = first + 12 * 1024 * 1024
        var resident = try Self.residentBytes(agent.process.pid)
        let deadline = Date().addingTimeInterval(30)
        while resident > bound, Date() < deadline {
            usleep(100_000)
            resident = try Self.residentBytes(agent.process.pid)
        }
        #expect(
            resident <= bound,
            "herdr-host holds \((resident - first) >> 20) MiB more after \(sessions) sessions than after the first (\(first >> 20) MiB)"
        )
    }

    @Test func twoDevicesShareOneHerdrSessionEachThroughItsOwnPTY() throws {
        let road = try RelayRoadFixture()
        try road.useHerdrStandIn()
        try road.pair(deviceName: "phone")
        try road.pair(deviceName: "tablet")
        let agent = try road.startAgent(parkedFor: 2)
        defer { agent.signal(SIGTERM) }
        let phone = try road.startConnect(device: "phone")
        #expect(phone.waitFor("remote$ "), "\(phone.stderr)")
        let tablet = try road.startConnect(device: "tablet")
        #expect(tablet.waitFor("remote$ "), "\(tablet.stderr)")
        phone.writeLine("echo shared-$((6*7))")
        #expect(phone.waitFor("shared-42"))
        #expect(tablet.waitFor("shared-42"), "the tablet sees what the phone typed: herdr (tmux) shares the session")
        #expect(
            agent.waitFor { _, log in log.components(separatedBy: "started a session").count == 3 }, "\(agent.stderr)")
        phone.signal(SIGTERM)
        tablet.signal(SIGTERM)
        _ = phone.wait(timeout: 30)
        _ = tablet.wait(timeout: 30)
    }

    @Test func theComputerIsBackRightAfterDevicesLeave() throws {
        let road = try RelayRoadFixture()
        try road.pair(deviceName: "phone")
        try road.pair(deviceName: "tablet")
        try road.configure("session-command", "echo ready; exec cat")
        let agent = try road.startAgent(parkedFor: 2)
        defer { agent.signal(SIGTERM) }
        for round in 1...3 {
            let phone = try road.startConnect(device: "phone")
            let tablet = try road.startConnect(device: "tablet")
            #expect(phone.waitFor("ready"), "round \(round): \(phone.stderr) \(agent.stderr)")
            #expect(tablet.waitFor("ready"), "round \(round): \(tablet.stderr)")
            phone.signal(SIGTERM)
            tablet.signal(SIGTERM)
            _ = phone.wait(timeout: 30)
            _ = tablet.wait(timeout: 30)
        }
    }

    @Test func afterTheGracePeriodTheDeviceIsToldAndAttachesAfresh() throws {
        let (road, agent) = try pairedRoad(configure: [
            ("session-command", "echo \"session $$ ready\"; exec cat"), ("grace-period", "1"),
        ])
        defer { agent.signal(SIGTERM) }
        let device = try road.startConnect()
        let first = try #require(device.waitForMatch(#"session (\d+) ready"#))
        _ = road.relay.terminate()
        #expect(agent.waitFor("for its device and was ended", timeout: 60), "\(agent.stderr)")
        try road.restartRelay()
        #expect(
            device.waitFor("no longer had the session", timeout: 120),
            "\(device.stderr); exit status \(String(describing: device.wait(timeout: 0)))")
        #expect(device.stderr.contains("hung up after 1 s without the device"), "\(device.stderr)")
        let second = try #require(device.waitForMatch(#"session (\d+) ready"#, timeout: 60, after: 1))
        #expect(second != first, "a fresh session runs")
        device.writeLine("still here")
        #expect(device.waitFor { out, _ in out.components(separatedBy: "still here").count >= 3 })
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    @Test func theDailyQuotaStopsTheRetriesAndSaysWhen() throws {
        let road = try RelayRoadFixture(relayArguments: ["--daily-byte-quota", "1048576"])
        try road.pair()
        try road.configure("session-command", "stty raw -echo; head -c 4194304 /dev/zero; sleep 60")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try road.startConnect()
        #expect(device.wait(timeout: 120) == 16, "\(device.stderr)")
        #expect(device.stderr.contains("the relay 127.0.0.1 closed the room"), "\(device.stderr)")
        #expect(device.stderr.contains("daily byte quota"))
        #expect(device.stderr.contains("UTC at the latest"))
        #expect(device.stdoutBytes.count < 1024 * 1024, "nothing past the quota")
    }

    @Test func aRemovedPairingAndAnAbsentComputerEachSayWhatToDo() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        // No agent running: the computer is not in the room.
        let offline = try road.startConnect()
        #expect(offline.wait(timeout: 60) == 12, "\(offline.stderr)")
        #expect(offline.stderr.contains("is not connected to the relay 127.0.0.1"), "\(offline.stderr)")
        #expect(offline.stderr.contains("herdr-host run"))
        // Unpaired on the computer: the room is deleted, and the device is told to pair again.
        let unpair = try ProcessRunner.run(
            BuiltProgram.path("herdr-host"), ["unpair", "phone"], environment: road.hostEnvironment)
        #expect(unpair.status == 0, "\(unpair.stderr)")
        let gone = try road.startConnect()
        #expect(gone.wait(timeout: 60) == 15, "\(gone.stderr)")
        #expect(gone.stderr.contains("pair again"), "\(gone.stderr)")
    }

    @Test(arguments: [
        (TamperingProxy.Fault.alter, TamperingProxy.Direction.toPhone, 60),
        (.replay, .toPhone, 80), (.alter, .fromPhone, 12), (.replay, .fromPhone, 14),
    ])
    func aTamperedFrameCostsAReconnectNotAByte(
        fault: TamperingProxy.Fault, direction: TamperingProxy.Direction, index: Int
    ) throws {
        let proxy = try TamperingProxy(fault: fault, direction: direction, index: index)
        let size = 4 * 1024 * 1024
        let output = try PacedOutput(prefix: "relay-tamper-", size: size)
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        try road.pair()
        // Keystrokes keep frames going from the device too: one line every 50 ms, read by the generator's shell.
        try road.configure(
            "session-command", "stty raw -echo; (\(output.command); sleep 1); cat > /dev/null")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try road.startConnect()
        // Typing starts once output flows, so the terminal no longer echoes (stty has run).
        #expect(device.waitForBytes(timeout: 60) { out, _ in !out.isEmpty }, "\(device.stderr)")
        var typed = 0
        while !proxy.applied, typed < 400 {
            device.writeLine("k")
            typed += 1
            usleep(50_000)
        }
        #expect(proxy.applied, "the fault happened")
        #expect(
            device.waitForBytes(timeout: 120) { out, _ in out.count >= size },
            "\(device.stdoutBytes.count) bytes; \(device.stderr)")
        let printed = Array(device.stdoutBytes.prefix(size))
        #expect(SHA256.hash(printed) == SHA256.hash(try output.bytes()))
        #expect(device.stderr.contains("; the session resumed where it was."), "\(device.stderr)")
        device.signal(SIGTERM)
        _ = device.wait(timeout: 30)
    }

    /// Bytes of resident memory of `pid`.
    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
        return kilobytes * 1024
    }

    /// Writes `size` zero bytes in 64 KiB blocks, noting after each how many went out.
    static let countingWriter = """
        import os, sys
        size, progress = int(sys.argv[1]), sys.argv[2]
        block = bytes(65536)
        done = 0
        while done < size:
            os.write(1, block)
            done += len(block)
            with open(progress + ".tmp", "w") as f:
                f.write(str(done))
            os.replace(progress + ".tmp", progress)

        """

    /// `size` random bytes in a file, and the command that writes them to stdout in 64 KiB
    /// blocks, 30 ms apart (about 2 MiB/s).
    struct PacedOutput {
        let directory: TemporaryDirectory
        let data: URL
        let command: String

        init(prefix: String, size: Int) throws {
            directory = try TemporaryDirectory(prefix: prefix)
            data = directory.file("output.bin")
            try Data(SecureRandom.bytes(size)).write(to: data)
            let writer = directory.file("generator.py")
            try Data(Self.writer.utf8).write(to: writer)
            command = "python3 \(writer.path) \(data.path)"
        }

        /// What the command writes.
        func bytes() throws -> [UInt8] { try [UInt8](Data(contentsOf: data)) }

        static let writer = """
            import sys, time
            out = sys.stdout.buffer
            with open(sys.argv[1], "rb") as source:
                while True:
                    block = source.read(65536)
                    if not block:
                        break
                    out.write(block)
                    out.flush()
                    time.sleep(0.03)

            """
    }
}
