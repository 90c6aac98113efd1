import EndToEndChannel
import Foundation
import Glibc
import HerdrCrypto
import ScreenModel
import SessionProtocol
import TestSupport
import Testing

/// herdr-host's screen sessions with real processes (herdr-relay, herdr-host run, the session's
/// program in a PTY, libvterm): a device driven message by message opens one, sees the program's
/// screen in states it acknowledges, types, resizes, reads the scrollback, comes back after a
/// drop to the whole screen, and gets the exit after the last screen.
@Suite(.serialized) struct ScreenSessionTests {
    /// A device's side of one screen session: the replica of the screen, each state acknowledged
    /// as it completes.
    final class ScreenDevice {
        let device: ScriptedDevice
        var replica = ScreenReplica()
        var stream: UInt32 = 1
        var token: [UInt8] = []
        var inputReceived: UInt64 = 0
        var states: [ScreenUpdate] = []
        var exit: (end: UInt64, status: Int32?, signal: String?)?
        var scrollback: ScrollbackLines?

        init(_ device: ScriptedDevice) { self.device = device }

        /// Reads messages until `done` holds; each complete state is acknowledged.
        func read(until done: (ScreenDevice) -> Bool, timeout: Double = 30) throws {
            let deadline = Date().addingTimeInterval(timeout)
            while !done(self) {
                let left = deadline.timeIntervalSinceNow
                guard left > 0 else { throw FixtureError("the screen never came; it shows \(rows())") }
                guard let bytes = try device.next(timeout: left) else { throw FixtureError("the channel ended") }
                guard case .session(let message) = try ChannelMessage(parsing: bytes), message.stream == stream else {
                    continue
                }
                switch message {
                case .screenStarted(_, let token, let inputReceived):
                    self.token = token
                    self.inputReceived = inputReceived
                case .screen(let update):
                    states.append(update)
                    switch replica.apply(update) {
                    case .complete(let state, _):
                        try device.send(SessionMessage.screenAck(stream: stream, state: state).bytes)
                    case .partial: break
                    case .broken(let why): throw FixtureError("the computer broke the protocol: \(why)")
                    }
                case .exit(_, let end, let status, let signal): exit = (end, status, signal)
                case .scrollback(let lines): scrollback = lines
                case .refused(_, _, let text): throw FixtureError("refused: \(text)")
                default: throw FixtureError("unexpected \(message)")
                }
            }
        }

        func rows() -> [String] { (0..<replica.screen.rows).map { replica.screen.text(ofRow: $0) } }
        func shows(_ text: String) -> Bool { rows().contains { $0.contains(text) } }
    }

    @Test func aScreenSessionShowsTypesResizesScrollsAndExitsAfterItsLastScreen() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        try road.configure(
            "session-command", #"printf '\033]2;on the desk\007hello \033[1;31mred\033[0m\n'; exec tr a-z A-Z"#)
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let (_, pairing) = try road.devicePairing("phone")
        #expect(try road.connectDevice(pairing).servesScreenSessions, "the computer says it serves screen sessions")

        let screen = ScreenDevice(try ScriptedDevice.overRelay(road))
        defer { screen.device.close() }
        try screen.device.send(
            SessionMessage.openScreen(stream: 1, target: .session(name: nil), cols: 40, rows: 10).bytes)
        try screen.read { $0.shows("hello red") }
        #expect(screen.token.count == 16 && screen.inputReceived == 0)
        #expect(screen.states.first?.base == 0, "the first state is whole")
        #expect(screen.replica.screen.title == "on the desk")
        let red = screen.replica.screen.lines[0][6]
        #expect(red.text == "r" && red.style.foreground == .indexed(1) && red.style.flags.contains(.bold))
        #expect(agent.waitFor("phone: started a screen session"), "\(agent.stderr)")

        // Typing: the terminal's echo and the program's answer show it; a state acknowledges the
        // input bytes.
        try screen.device.send(SessionMessage.input(stream: 1, data: Array("typed here\r".utf8)).bytes)
        try screen.read { $0.shows("TYPED HERE") && $0.replica.inputBytes == 11 }
        #expect(screen.rows().prefix(3) == ["hello red", "typed here", "TYPED HERE"])

        // A resize is a state of the new size.
        try screen.device.send(SessionMessage.resize(stream: 1, cols: 30, rows: 6).bytes)
        try screen.read { $0.replica.screen.columns == 30 && $0.replica.screen.rows == 6 }

        // Lines scrolled off the top are kept, numbered, and read on request.
        // The terminal echoes all twelve lines before the program answers them.
        let lines = (1...12).map { "line \($0)\r" }.joined()
        try screen.device.send(SessionMessage.input(stream: 1, data: Array(lines.utf8)).bytes)
        try screen.read { $0.rows() == (8...12).map { "LINE \($0)" } + [""] }
        try screen.device.send(SessionMessage.scrollbackRequest(stream: 1, end: .max, count: 3).bytes)
        try screen.read { $0.scrollback != nil }
        let kept = try #require(screen.scrollback)
        #expect(kept.lines.count == 3 && kept.first + 3 == kept.total && kept.oldest == 0)
        let texts = kept.lines.map { line in line.map(\.text).joined().trimmingCharacters(in: .whitespaces) }
        #expect(texts == ["LINE 5", "LINE 6", "LINE 7"], "the lines just above the screen")

        // The end: the last screen, then the exit naming it.
        try screen.device.send(SessionMessage.endOfInput(stream: 1).bytes)
        try screen.read { $0.exit != nil }
        #expect(screen.exit?.status == 0, "\(String(describing: screen.exit)); \(agent.stderr)")
        #expect(screen.exit?.end == screen.replica.state, "the exit names the last state, which arrived first")
        try screen.device.send(SessionMessage.close(stream: 1).bytes)
    }

    @Test func aResumeGetsTheWholeScreenAndTheInputCount() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        try road.configure("session-command", "echo ready; exec cat")
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let first = ScreenDevice(try ScriptedDevice.overRelay(road))
        try first.device.send(
            SessionMessage.openScreen(stream: 1, target: .session(name: nil), cols: 20, rows: 5).bytes)
        try first.read { $0.shows("ready") }
        try first.device.send(SessionMessage.input(stream: 1, data: Array("abc\r".utf8)).bytes)
        try first.read { $0.rows().filter { $0 == "abc" }.count == 2 }
        let lastState = first.replica.state
        first.device.close()

        let second = ScreenDevice(try ScriptedDevice.overRelay(road))
        defer { second.device.close() }
        second.stream = 7
        try second.device.send(SessionMessage.resumeScreen(stream: 7, token: first.token, cols: 20, rows: 5).bytes)
        try second.read { $0.replica.state > 0 }
        #expect(second.token == first.token && second.inputReceived == 4)
        #expect(second.states.first?.base == 0 && (second.states.first?.state ?? 0) > lastState)
        #expect(second.replica.screen == first.replica.screen, "the whole screen, as it was")

        // A byte session's resume does not take a screen session's token.
        try second.device.send(
            SessionMessage.resume(stream: 8, token: first.token, received: 0, cols: 20, rows: 5, window: 1 << 20).bytes)
        var refused = false
        while !refused, let bytes = try second.device.next() {
            if case .session(.refused(8, .unknownSession, _)) = try ChannelMessage(parsing: bytes) { refused = true }
        }
        #expect(refused)
    }

    /// The resident memory of process `pid`, in bytes.
    static func residentBytes(_ pid: pid_t) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return (Int(line.split(separator: " ")[1]) ?? 0) * 1024
    }

    /// 4 MB of random bytes, a megabyte line and 20,000 scrolled lines into one screen session
    /// while a session of bytes beside it echoes: the echo never waits for the flood, herdr-host's
    /// memory stays within its bounds, and the flood's screen comes through to its end.
    @Test func hostileOutputStallsNoOtherSessionAndStaysWithinItsBounds() throws {
        let road = try RelayRoadFixture()
        try road.pair()
        let flood = [
            "head -c 4000000 /dev/urandom", "head -c 1048576 /dev/zero | tr '\\0' x", "seq 20000",
            // Whatever state the random bytes left: cancel a sequence, leave a string, reset.
            #"printf '\030\033\\\033c'"#, "echo flood-done",
        ].joined(separator: "; ")
        try road.configure(
            "session-command", #"if [ "$HERDR_SESSION" = flood ]; then \#(flood); fi; exec cat"#)
        let agent = try road.startAgent()
        defer { agent.signal(SIGTERM) }
        let device = try ScriptedDevice.overRelay(road)
        defer { device.close() }
        try device.send(SessionMessage.open(stream: 1, name: nil, cols: 80, rows: 24, window: 1 << 20).bytes)
        try device.send(
            SessionMessage.openScreen(stream: 2, target: .session(name: "flood"), cols: 80, rows: 24).bytes)
        #expect(agent.waitFor("phone: started a screen session"), "\(agent.stderr)")
        let idle = try Self.residentBytes(agent.process.pid)

        // Keystrokes echo on stream 1 all through the flood; stream 2's newest state is
        // acknowledged after each echo. A keystroke and an acknowledgement each 100 ms keep
        // this device within the relay's frame rate.
        var replica = ScreenReplica()
        var peak = idle
        var echoes = 0
        var floodDone = false
        let deadline = Date().addingTimeInterval(120)
        while !floodDone, Date() < deadline {
            usleep(100_000)
            echoes += 1
            let word = "echo-\(echoes)"
            try device.send(SessionMessage.input(stream: 1, data: Array("\(word)\r".utf8)).bytes)
            var echoed: [UInt8] = []
            var complete: UInt64?
            while !String(decoding: echoed, as: UTF8.self).contains(word) {
                guard let bytes = try device.next() else {
                    throw FixtureError("the channel ended; herdr-host said: \(agent.stderr)")
                }
                switch try ChannelMessage(parsing: bytes) {
                case .session(.output(1, _, let data)): echoed += data
                case .session(.screen(let update)):
                    switch replica.apply(update) {
                    case .complete(let state, _):
                        complete = state
                        floodDone = (0..<replica.screen.rows).contains {
                            replica.screen.text(ofRow: $0).contains("flood-done")
                        }
                    case .partial: break
                    case .broken(let why): throw FixtureError("the computer broke the protocol: \(why)")
                    }
                default: break
                }
            }
            if let complete { try device.send(SessionMessage.screenAck(stream: 2, state: complete).bytes) }
            peak = max(peak, try Self.residentBytes(agent.process.pid))
        }
        #expect(floodDone, "the flood's last screen came: \(replica.screen.text(ofRow: 0))")
        print("hostile output: \(echoes) echoes, \(String(format: "%.1f", -deadline.timeIntervalSinceNow + 120)) s")
        #expect(echoes > 1, "keystrokes echoed while the flood ran")
        // The screen absorbs the flood: herdr-host grows by its scrollback's bound, not the output.
        #expect(peak - idle < 64 << 20, "herdr-host grew from \(idle >> 20) MiB to \(peak >> 20) MiB")
    }
}
