import Companion
import Foundation
import Glibc
import HerdrCrypto
import HerdrHostAgent
import HerdrKit
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
        try terminal.type(
            "XDG_CONFIG_HOME=\(road.deviceHome("phone").path) \(BuiltProgram.path("herdr-remote")) connect studio")
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
        try terminal.type("echo rc=$?")
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
        let directory = try TemporaryDirectory(prefix: "relay-resume-")
        let data = directory.file("output.bin")
        let size = 20 * 1024 * 1024
        try Data(SecureRandom.bytes(size)).write(to: data)
        let generator = directory.file("generator.py")
        try Data(Self.pacedWriter.utf8).write(to: generator)
        let road = try RelayRoadFixture(originPort: proxy.port)
        proxy.forward(to: road.port)
        try road.pair()
        try road.configure("session-command", "stty raw -echo; exec python3 \(generator.path) \(data.path)")
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
                        separatedBy: "Reconnected; the session resumed where it was."
                    ).count > cut
                }, "resumed after cut \(cut): \(device.stderr)")
        }
        #expect(device.wait(timeout: 180) == 0, "\(device.stderr)")
        let printed = device.stdoutBytes
        #expect(printed.count == size)
        #expect(SHA256.hash(printed) == SHA256.hash(try [UInt8](Data(contentsOf: data))), "not a byte lost or repeated")
    }

    /// Writes a file to stdout in 64 KiB blocks, 30 ms apart (about 2 MiB/s).
    static let pacedWriter = """
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
