import CLISupport
import Dispatch
import Foundation
import Glibc
import HerdrKit
import SSHPairingHost
import TerminalQR

/// The foreground helper: sweep, one-time line, QR code, wait for a device, ask, answer, clean up.
///
/// It runs on a thread of its own (it blocks in `poll` and in short sleeps). SIGINT, SIGTERM and SIGHUP
/// are watched: whichever of the signal handler and the main flow claims the exit first does the
/// cleanup and ends the process; the other waits for that.
struct Foreground: Sendable {
    /// How often the state directory is looked at while waiting for a device.
    static let pollInterval = 0.02
    /// How long the enroll command gets to read the verdict before the state directory goes away.
    static let acknowledgementTimeout = 3.0

    let plan: PairingPlan

    func run() -> ExitCode {
        let console: any PairingConsole = plan.options.testMode ? TestConsole() : TerminalConsole()
        let coordinator = ExitCoordinator(console: console)
        let watcher: SignalWatcher
        do {
            watcher = try SignalWatcher(
                signals: [SIGINT, SIGTERM, SIGHUP], queue: DispatchQueue(label: "herdr-pair.signals")
            ) { signal in
                coordinator.handle(signal: signal)
            }
        } catch {
            console.error("cannot watch signals: \(error)")
            return .failure
        }
        defer { watcher.cancel() }

        let file = AuthorizedKeysFile(path: plan.authorizedKeysPath)
        do {
            let report = try StaleLineSweeper.sweep(file, stateBase: plan.stateBase)
            if !report.removedLines.isEmpty {
                console.note("Removed \(report.removedLines.count) one-time key line(s) left by an earlier herdr-pair.")
            }
        } catch {
            console.note("warning: could not sweep stale one-time lines: \(error)")
        }

        let session: PairingSession
        do {
            session = try PairingSession.begin(
                PairingSession.Configuration(
                    authorizedKeys: file, stateBase: plan.stateBase, helperPath: plan.helperPath,
                    lifetime: TimeInterval(plan.options.lifetime), approvalWindow: plan.options.approvalWindow))
        } catch {
            console.error("\(error)")
            return coordinator.codeWithoutSession(.failure)
        }
        coordinator.attach(session)

        let payload = plan.payload(
            pairingID: session.pairingID.bytes, seed: session.oneTimeKey.seed, expiresAt: session.expiresAt)
        let qr: QRCode
        do {
            qr = try QRCode(encoding: payload.url, level: .medium)
        } catch {
            return coordinator.finish(.failure, failure: "cannot draw the QR code: \(error)")
        }
        console.showCode(url: payload.url, qr: qr, plan: plan, expiresAt: session.expiresAt)

        while true {
            switch session.poll() {
            case .request(let request):
                return approve(request, session: session, console: console, coordinator: coordinator)
            case .corrupt(let reason):
                try? session.decide(.denied)
                return coordinator.finish(.failure, failure: "the request slot holds something unexpected: \(reason)")
            case .waiting:
                break
            }
            if Date() >= session.expiresAt {
                do {
                    if try session.closeIfUnclaimed() {
                        return coordinator.finish(Self.exitCode(.expired), outcome: .expired)
                    }
                } catch {
                    return coordinator.finish(.failure, failure: "\(error)")
                }
                continue  // a request got there first
            }
            FileIOWait.sleep(Self.pollInterval)
        }
    }

    private func approve(
        _ request: EnrollRequest, session: PairingSession, console: any PairingConsole, coordinator: ExitCoordinator
    ) -> ExitCode {
        console.showRequest(request)
        let deadline = FileIOWait.now() + TimeInterval(plan.options.approvalWindow)
        let outcome: EnrollOutcome
        switch console.askApproval(deadline: deadline) {
        case .yes: outcome = .ok
        case .no: outcome = .denied
        case .timedOut: outcome = .expired
        }
        do {
            try session.decide(outcome)
        } catch {
            try? session.decide(.denied)
            return coordinator.finish(.failure, failure: "\(error)")
        }
        return coordinator.finish(Self.exitCode(outcome), outcome: outcome, waitForEnroll: true)
    }

    static func exitCode(_ outcome: EnrollOutcome) -> ExitCode {
        switch outcome {
        case .ok: .success
        case .denied: ExitCode(rawValue: 3)
        case .expired: ExitCode(rawValue: 4)
        case .invalid, .used: .failure
        }
    }
}

/// Decides who ends the process, the main flow or a signal, and makes sure cleanup runs exactly once
/// before it ends.
final class ExitCoordinator: @unchecked Sendable {
    private let lock = NSLock()
    private var session: PairingSession?
    private var exiting = false
    /// A signal that arrived before there was a session to clean up.
    private var pendingSignal: Int32?
    private let console: any PairingConsole

    init(console: any PairingConsole) {
        self.console = console
    }

    /// Hands over the session for cleanup. When a signal arrived while the session was being made,
    /// cleans up here and ends the process with that signal's code.
    func attach(_ session: PairingSession) {
        let signal: Int32? = lock.withLock {
            self.session = session
            return exiting ? pendingSignal : nil
        }
        guard let signal else { return }
        reportProblems(session.interrupt(acknowledgementTimeout: 0))
        exit(ExitCode.signal(signal).rawValue)
    }

    /// The code to end with when the session could not even be made: a signal's, if one came.
    func codeWithoutSession(_ code: ExitCode) -> ExitCode {
        lock.withLock { pendingSignal.map(ExitCode.signal) ?? code }
    }

    /// A watched signal: deny or close, clean up, and exit with 128 + the signal. Ignored when the main
    /// flow is already ending the process; deferred to ``attach(_:)`` when there is no session yet.
    func handle(signal: Int32) {
        let session: PairingSession? = lock.withLock {
            if exiting { return nil }
            exiting = true
            pendingSignal = signal
            return self.session
        }
        guard let session else { return }
        reportProblems(session.interrupt())
        console.note("Cancelled; the one-time key was removed.")
        exit(ExitCode.signal(signal).rawValue)
    }

    /// The main flow's end: claims the exit (or parks while a signal handler finishes), waits for the
    /// enroll command when asked, cleans up, reports.
    func finish(_ code: ExitCode, outcome: EnrollOutcome? = nil, failure: String? = nil, waitForEnroll: Bool = false)
        -> ExitCode
    {
        let session: PairingSession? = lock.withLock {
            if exiting { return nil }
            exiting = true
            return self.session
        }
        guard let session else { park() }
        if waitForEnroll { session.waitForAcknowledgement(timeout: Foreground.acknowledgementTimeout) }
        let problems = session.finish()
        if let failure { console.error(failure) }
        reportProblems(problems)
        if let outcome { console.showResult(outcome, authorizedKeys: session.configuration.authorizedKeys.path) }
        return problems.isEmpty ? code : .failure
    }

    /// Waits for the signal handler, which is ending the process.
    func park() -> Never {
        while true { pause() }
    }

    private func reportProblems(_ problems: [HostError]) {
        for problem in problems {
            console.error("\(problem) (the line is inert after its expiry-time; the next herdr-pair run removes it)")
        }
    }
}

/// Monotonic time and sleeps for the wait loops.
enum FileIOWait {
    static func now() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    static func sleep(_ seconds: Double) {
        usleep(useconds_t(seconds * 1_000_000))
    }
}
