import Foundation
import Glibc
import HerdrKit
import Plumbing
import SessionProtocol

/// The terminal sessions' shell: `HostSessionTable` decides, this starts the PTYs, moves bytes
/// and sends what the table lets go.
extension HostAgent {

    /// Sending waits while a connection has this much queued for the relay (well under the
    /// connection's own bound, so a send never fails for backpressure).
    static let sendQueueLimit = 1024 * 1024

    /// How long the loop may sleep: until the table's next deadline, at most half a second.
    func wakeTimeout(_ loop: Loop) -> Double {
        let now = MonotonicClock.now
        var timeout = 0.5
        if let deadline = loop.sessions.nextDeadline(now: now) { timeout = min(timeout, max(0, deadline - now)) }
        if let deadline = agentsDeadline(loop, now: now) { timeout = min(timeout, max(0, deadline - now)) }
        let blocked = loop.channels.routes.values.contains { queuedBytes(on: $0, loop) >= Self.sendQueueLimit }
        if blocked { timeout = min(timeout, 0.002) }
        return timeout
    }

    /// Grace periods (`tick`: the loop's thread, on its wakes; a batch of frames or output
    /// leaves them to it), then whatever each connected device may be sent now.
    func serveSessions(_ loop: Loop, tick: Bool = true) {
        let now = MonotonicClock.now
        if tick { perform(loop.sessions.tick(now: now), loop) }
        // The board first: it is coalesced to a few frames a second, and a flood of output,
        // which takes every frame the budget has, must not starve it.
        releaseHeldMessages(loop)
        serveAgents(loop, now: now)
        let screens = loop.screens
        let source: HostSessionTable.ScreenSource = { id in
            screens[id].map { terminal in
                let current = terminal.current
                return (current.screen, current.bells)
            }
        }
        for (device, channel) in loop.channels.routes where queuedBytes(on: channel, loop) < Self.sendQueueLimit {
            for message in loop.sessions.messages(for: device, now: now, screens: source) {
                send(message.bytes, on: channel, loop)
                guard loop.channels.route(of: device) == channel else { break }  // the send failed: dropped
            }
        }
        // A screen session gone from the table needs its terminal no more.
        if loop.screens.keys.contains(where: { !loop.sessions.contains($0) }) {
            loop.screens = loop.screens.filter { loop.sessions.contains($0.key) }
        }
    }

    /// A screen session's terminal took output: its answers to the program are written, and the
    /// table told the screen changed.
    func screenFed(_ id: HostSessionTable.SessionID, replies: [UInt8], _ loop: Loop) {
        if !replies.isEmpty { _ = loop.ptys[id]?.write(replies) }
        loop.sessions.screenChanged(id, now: MonotonicClock.now)
    }

    func ptyEvent(_ id: HostSessionTable.SessionID, _ event: PTYProcess.Event, _ loop: Loop) {
        switch event {
        case .output(let bytes):
            loop.sessions.output(id, bytes)
        case .exited(let status, let signal):
            loop.ptys[id] = nil
            loop.sessions.exited(id, status: status, signal: signal)
        }
    }

    func perform(_ actions: [HostSessionTable.Action], _ loop: Loop) {
        for action in actions {
            switch action {
            case .spawn(let id, let device, let target, let cols, let rows, let screen):
                loop.ptys.started += 1
                let failure = spawn(id, device: device, target: target, cols: cols, rows: rows, screen: screen, loop)
                perform(loop.sessions.spawned(id, failure: failure), loop)
            case .write(let id, let bytes):
                guard let pty = loop.ptys[id] else { continue }
                if !pty.write(bytes) {
                    log(
                        "a session's program has not read its last \(PTYProcess.maximumPendingInput >> 20) MiB of input; input dropped"
                    )
                }
            case .resize(let id, let cols, let rows):
                loop.ptys[id]?.resize(cols: cols, rows: rows)
                if let terminal = loop.screens[id] {
                    terminal.resize(rows: rows, columns: cols)
                    loop.sessions.screenChanged(id, now: MonotonicClock.now)
                }
            case .readScrollback(let id, let stream, let end, let count):
                guard let terminal = loop.screens[id] else { continue }
                // Off the loop: reading waits for the terminal's feed under way.
                let inputs = self.inputs
                DispatchQueue.global(qos: .utility).async {
                    inputs.push(.scrollbackRead(id, terminal.scrollback(stream: stream, end: end, count: count)))
                }
            case .allowReading(let id, let total):
                loop.ptys[id]?.allowReading(upTo: total)
            case .hangUp(let id):
                loop.ptys[id]?.hangUp()
            case .tellInputReceived(let device, let stream, let bytes):
                guard let channel = loop.channels.route(of: device) else { continue }
                send(CompanionMessage.inputReceived(stream: stream, bytes: bytes).bytes, on: channel, loop)
            case .dropConnection(let device, let reason):
                guard let channel = loop.channels.route(of: device) else { continue }
                drop(channel, why: "it broke the session protocol: \(reason)", loop)
            case .log(let device, let message):
                log("\(deviceName(device, loop)): \(message)")
            }
        }
    }

    /// Starts the session's PTY; the failure in words, or nil.
    private func spawn(
        _ id: HostSessionTable.SessionID, device: UUID, target: HostSessionTable.Target, cols: Int, rows: Int,
        screen: Bool, _ loop: Loop
    ) -> String? {
        let settings = AgentSettings.load(directory)
        let launch = PTYProcess.Launch(
            command: SessionCommand.command(configured: settings.sessionCommand, target: target),
            environment: SessionCommand.environment(session: SessionCommand.sessionName(target)),
            directory: SessionCommand.homeDirectory(), cols: cols, rows: rows)
        guard let work = loop.work else { return "the agent is stopping" }
        do {
            let terminal = screen ? try ScreenTerminal(rows: rows, columns: cols) : nil
            loop.screens[id] = terminal
            loop.ptys[id] = try PTYProcess(launch) { event in
                // A screen session's output is fed on the PTY's own thread: a flood is read as
                // fast as libvterm takes it.
                if let terminal, case .output(let bytes) = event {
                    work.push(.screen(id, replies: terminal.feed(bytes)))
                } else {
                    work.push(.pty(id, event))
                }
            }
            let who = deviceName(device, loop)
            let what: String
            switch target {
            case .session(let name):
                let configured = !(settings.sessionCommand ?? "").trimmingCharacters(in: .whitespaces).isEmpty
                what =
                    (configured ? "the configured command, " : "")
                    + (name.map { "herdr session \($0)" } ?? "herdr's default session")
            case .agent(let key):
                what = "herdr's agent \(key.pane) in session \(key.session)"
            }
            log("\(who): started a \(screen ? "screen session" : "session") (\(what))")
            return nil
        } catch {
            return "\(error)"
        }
    }
}
