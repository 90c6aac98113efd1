import CLISupport
import Foundation
import Glibc
import HerdrAgents
import HerdrKit
import Plumbing

/// `watch`'s shell: follows every computer's board (`ComputerBoardWatch`), tells the person about
/// agents that became `blocked` or `done` (`NotificationGate`, `Notifier`), and on a terminal shows
/// the board (`BoardScreen`, `BoardView`) in the alternate screen and opens the chosen agent's
/// pane as `connect --agent` does, coming back to the board when that terminal ends. Without a
/// terminal it prints one line per event instead. The terminal is put back on every way out.
@MainActor
final class WatchController {
    private let hosts: [HostProfile]
    private let store: HostStore
    private let options: BoardWatchOptions
    private let notifier: Notifier
    /// A board on a terminal (stdin and stdout both terminals), else lines.
    private let interactive: Bool
    /// Whether the board's terminal gets the bell and the notification escapes.
    private let terminalAlerts: Bool
    private var entries: [ComputerEntry]
    private var watches: [String: any ComputerBoardWatch] = [:]
    /// Each computer's last board, to tell what changed (none: its first board is not news).
    private var known: [String: AgentBoard] = [:]
    private var gate = NotificationGate()
    private var screen = BoardScreen()
    private var keys = BoardKeyDecoder()
    /// The last thing to tell on the board (an alert, how an agent's terminal ended).
    private var message: String?
    /// An agent's terminal is open: the board is not drawn, the terminal gets no escapes.
    private var attached = false
    private var boardShown = false
    private let terminal = LocalTerminal()
    private var reader: StandardInputReader?
    private var signals: SignalWatcher?
    private var ticker: Task<Void, Never>?
    private var ending: CheckedContinuation<ExitCode, Never>?
    private var endedWith: ExitCode?

    init(
        hosts: [HostProfile], store: HostStore, options: BoardWatchOptions, notifier: Notifier, interactive: Bool,
        terminalAlerts: Bool
    ) {
        self.terminalAlerts = terminalAlerts
        self.hosts = hosts
        self.store = store
        self.options = options
        self.notifier = notifier
        self.interactive = interactive
        entries = hosts.map { ComputerEntry(name: $0.name, road: $0.road) }
    }

    /// Watches until the person quits (0), or a signal ends it (128 + the signal).
    func run() async -> ExitCode {
        notifier.execOutputToTerminal = !interactive
        notifier.onProblem = { [weak self] text in self?.say(text) }
        for host in hosts {
            let watch = ComputerBoards.watch(host, store: store, options: options)
            watch.onChange = { [weak self] state in self?.update(host.name, state) }
            watches[host.name] = watch
        }
        if interactive {
            do {
                try enterBoard()
            } catch {
                StandardError.write("error: cannot take the terminal: \(error)\n")
                return .ioError
            }
            let reader = StandardInputReader(onEnd: { [weak self] in self?.finish(.success) })
            self.reader = reader
            routeKeysToBoard()
            reader.start()
        } else {
            StandardError.write(
                "Watching \(hosts.map(\.name).joined(separator: ", ")); one line per agent that becomes blocked or done (Ctrl-C stops).\n"
            )
        }
        signals = try? watchSignals()
        for watch in watches.values { watch.start() }
        ticker = Task { [weak self] in
            while (try? await Task.sleep(for: .seconds(1))) != nil {
                self?.tick()
            }
        }
        refresh()
        let code = await withCheckedContinuation { continuation in
            if let endedWith { return continuation.resume(returning: endedWith) }
            ending = continuation
        }
        ticker?.cancel()
        signals?.cancel()
        for watch in watches.values { watch.stop() }
        leaveBoard()
        return code
    }

    private func finish(_ code: ExitCode) {
        guard endedWith == nil else { return }
        endedWith = code
        ending?.resume(returning: code)
        ending = nil
    }

    private func watchSignals() throws -> SignalWatcher {
        try SignalWatcher(signals: [SIGWINCH, SIGINT, SIGTERM, SIGHUP], queue: .main) { [weak self] number in
            MainActor.assumeIsolated {
                guard let self else { return }
                if number == SIGWINCH { self.draw() } else { self.finish(.signal(number)) }
            }
        }
    }

    // MARK: Boards and events

    private func update(_ name: String, _ state: ComputerBoardState) {
        guard let index = entries.firstIndex(where: { $0.name == name }) else { return }
        let before = entries[index]
        entries[index].update(state)
        switch state {
        case .live(let board, _):
            if let old = known[name] {
                let now = Int64(Date().timeIntervalSince1970)
                for notice in AgentNotice.changes(on: name, from: old, to: board, now: now) { tell(notice) }
                if !before.isLive { say("\(name): back (\(Self.agents(board.agents.count)))") }
            } else {
                say("\(name): watching (\(Self.agents(board.agents.count)))")
            }
            known[name] = board
        case .lost(let problem, let retrying):
            if before.state != state {
                say(
                    "\(name): \(ComputerEntry.word(for: problem.kind)): \(problem.message)\(retrying ? " (trying again)" : "")"
                )
            }
        case .connecting:
            break
        }
        refresh()
    }

    private static func agents(_ count: Int) -> String { count == 1 ? "1 agent" : "\(count) agents" }

    private func tell(_ notice: AgentNotice) {
        let decision = gate.admit(notice, now: MonotonicClock.now)
        if !interactive { _ = try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: notice.line + "\n") }
        guard decision != .repeated else { return }
        notifier.run(notice)
        guard decision == .alert else { return }
        notifier.alert(title: notice.title, body: notice.body, urgent: notice.agent.status == .blocked)
        if interactive { message = "\(clock()) \(notice.title) (\(notice.body))" }
    }

    private func tick() {
        if let summary = gate.summary(now: MonotonicClock.now) {
            notifier.alert(title: summary.title, body: summary.body, urgent: true)
            if interactive { message = "\(clock()) \(summary.title): \(summary.body)" }
        }
        refresh()
    }

    /// A line for the person: on stderr without a board; on the board, its last message.
    private func say(_ text: String) {
        if interactive {
            if !attached { message = "\(clock()) \(text)" }
        } else {
            StandardError.write(text + "\n")
        }
    }

    private func clock() -> String {
        var now = time(nil)
        var parts = tm()
        localtime_r(&now, &parts)
        return String(format: "%02d:%02d:%02d", parts.tm_hour, parts.tm_min, parts.tm_sec)
    }

    // MARK: The board

    private func refresh() {
        screen.show(AgentRow.rows(entries))
        draw()
    }

    private func draw() {
        guard boardShown, !attached else { return }
        let size = terminal.size
        let lines = BoardView.render(
            screen, computers: entries, message: message, now: Int64(Date().timeIntervalSince1970), width: size.cols,
            height: size.rows)
        let text = "\u{1B}[H" + lines.joined(separator: "\u{1B}[K\r\n") + "\u{1B}[K\u{1B}[J"
        _ = try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: text)
    }

    private func enterBoard() throws {
        try terminal.enterRawMode()
        _ = try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: "\u{1B}[?1049h\u{1B}[?25l\u{1B}[H\u{1B}[2J")
        boardShown = true
        notifier.terminalAlerts = terminalAlerts
    }

    private func leaveBoard() {
        guard boardShown else { return }
        boardShown = false
        notifier.terminalAlerts = false
        _ = try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: "\u{1B}[?25h\u{1B}[?1049l")
        terminal.restore()
    }

    private func routeKeysToBoard() {
        reader?.route { bytes in
            DispatchQueue.main.async { MainActor.assumeIsolated { [weak self] in self?.keys(bytes) } }
        }
    }

    private func keys(_ bytes: [UInt8]) {
        guard !attached else { return }
        for key in keys.feed(bytes) {
            switch screen.handle(key, now: MonotonicClock.now) {
            case .none: break
            case .redraw: draw()
            case .quit: return finish(.success)
            case .open(let row):
                Task { await open(row) }
                return
            }
        }
    }

    // MARK: An agent's terminal

    /// Opens `row`'s pane in this terminal as `connect --agent` does, and comes back to the board
    /// when it ends. On the Noise roads the board's connection hands the computer over first (a
    /// relay room admits one connection of a device) and the agent's connection feeds the board.
    private func open(_ row: AgentRow) async {
        guard !attached, endedWith == nil, let host = hosts.first(where: { $0.name == row.computer }) else { return }
        attached = true
        signals?.cancel()
        signals = nil
        leaveBoard()
        let companion = watches[row.computer] as? CompanionBoardWatch
        if let companion {
            terminal.status("Handing \(host.name) over from the board to the agent's terminal...")
            await companion.suspend()
        }
        var options = options.session
        options.agent = AgentTarget(row.target)
        options.promptResponder = ConnectCommand.answerPrompts
        options.directOutput = { bytes in (try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, bytes: bytes)) != nil }
        if let companion {
            options.onAgents = { board, road in companion.feed(board, road: road) }
        }
        // A host's key was trusted before its board could be read: nothing new to trust here.
        let session = TerminalSession(profile: host, store: store, options: options) { _ in false }
        var report = ""
        let code =
            (try? await ConnectCommand.attach(
                session, host: host, terminal: terminal, report: { report += $0 },
                startInput: { [reader] session in reader?.routeToSession(session) })) ?? .ioError
        routeKeysToBoard()
        companion?.resume()
        attached = false
        if code == .hangup || code == .terminated { return finish(code) }
        let name = row.agent.displayName
        message =
            report.isEmpty
            ? "\(clock()) back from \(name) on \(row.computer)"
            : "\(clock()) \(name) on \(row.computer): " + report.replacingOccurrences(of: "\n", with: " ")
        guard endedWith == nil else { return }
        do {
            try enterBoard()
        } catch {
            return finish(.ioError)
        }
        signals = try? watchSignals()
        refresh()
    }
}
