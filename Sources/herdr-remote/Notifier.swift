import CLISupport
import Foundation
import Glibc

/// `watch`'s ways of telling a person: the terminal (a bell and the OSC 777 / OSC 9 escapes, only
/// while the board owns the terminal), the desktop (`notify-send`, when there is a desktop
/// session), and `--exec` (the person's command, one event at a time, in order).
@MainActor
final class Notifier {
    /// `--exec`'s words (the program resolved on PATH).
    struct Exec: Sendable {
        var program: String
        var arguments: [String]
    }

    /// A command that runs longer than this is ended (SIGTERM): the next events must not wait.
    static let execTimeLimit = 30.0
    /// Events waiting for `--exec` beyond this many are dropped (and said so).
    static let maximumQueued = 256

    /// `notify-send`'s path, when a desktop session is there to show it.
    let desktop: String?
    let exec: Exec?
    /// Whether the terminal may get the bell and escapes now (the board owns it).
    var terminalAlerts = false
    /// Whether `--exec`'s output may go to this terminal (without a board).
    var execOutputToTerminal = false
    /// Said when something went wrong (a command that failed to start, events dropped).
    var onProblem: ((String) -> Void)?

    private var queue: [AgentNotice] = []
    private var running: Process?
    /// `notify-send`s not ended yet (kept until they end; at most `maximumDesktop`).
    private var desktopRunning: [ObjectIdentifier: Process] = [:]
    static let maximumDesktop = 8
    private var dropped = 0

    init(desktop: String?, exec: Exec?) {
        self.desktop = desktop
        self.exec = exec
    }

    /// `notify-send` when the environment has a desktop session (X11, Wayland, or a session bus)
    /// and the program is on PATH.
    static func desktopNotifier(environment: [String: String]) -> String? {
        let session = ["DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"].contains {
            !(environment[$0] ?? "").isEmpty
        }
        guard session else { return nil }
        return CommandWords.program("notify-send", path: environment["PATH"] ?? "/usr/bin:/bin")
    }

    /// Alerts: the terminal's escapes when it may have them, and the desktop notification.
    func alert(title: String, body: String, urgent: Bool) {
        if terminalAlerts {
            _ = try? FileDescriptorWriter.writeAll(
                fd: STDOUT_FILENO, string: TerminalNotification.escapes(title: title, body: body))
        }
        if let desktop, desktopRunning.count < Self.maximumDesktop {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: desktop)
            process.arguments = ["-a", "herdr-remote", "-u", urgent ? "critical" : "normal", title, body]
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            let id = ObjectIdentifier(process)
            process.terminationHandler = { [weak self] _ in
                DispatchQueue.main.async {
                    MainActor.assumeIsolated { _ = self?.desktopRunning.removeValue(forKey: id) }
                }
            }
            do {
                try process.run()
                desktopRunning[id] = process
            } catch {
                onProblem?("notify-send could not start: \(error.localizedDescription)")
            }
        }
    }

    /// Queues `--exec` for `notice`.
    func run(_ notice: AgentNotice) {
        guard exec != nil else { return }
        guard queue.count < Self.maximumQueued else {
            dropped += 1
            if dropped == 1 || dropped % 100 == 0 {
                onProblem?("--exec is behind: \(dropped) events dropped (at most \(Self.maximumQueued) wait)")
            }
            return
        }
        queue.append(notice)
        startNext()
    }

    private func startNext() {
        guard running == nil, let exec, !queue.isEmpty else { return }
        let notice = queue.removeFirst()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: exec.program)
        process.arguments = exec.arguments
        process.environment = ProcessInfo.processInfo.environment.merging(notice.environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        if !execOutputToTerminal {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        process.terminationHandler = { [weak self] _ in
            DispatchQueue.main.async {
                MainActor.assumeIsolated {
                    guard let self else { return }
                    self.running = nil
                    self.startNext()
                }
            }
        }
        do {
            try process.run()
        } catch {
            onProblem?("--exec \(exec.program) could not start: \(error.localizedDescription)")
            return startNext()
        }
        running = process
        DispatchQueue.main.asyncAfter(deadline: .now() + Self.execTimeLimit) { [weak self, weak process] in
            MainActor.assumeIsolated {
                guard let self, let process, self.running === process, process.isRunning else { return }
                self.onProblem?("--exec ran longer than \(Int(Self.execTimeLimit)) s: ended it")
                process.terminate()
            }
        }
    }
}
