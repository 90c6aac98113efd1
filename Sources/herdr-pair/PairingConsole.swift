import CLISupport
import Foundation
import Glibc
import HerdrKit
import SSHPairingHost
import TerminalQR

/// The person's answer to `Approve this device? [y/N]`.
enum Approval: Sendable, Equatable {
    case yes
    case no
    case timedOut
}

/// Where the foreground shows things and asks: a terminal for people, or the machine-readable lines
/// of test mode.
protocol PairingConsole: Sendable {
    func showCode(url: String, qr: QRCode, plan: PairingPlan, expiresAt: Date)
    func showRequest(_ request: EnrollRequest)
    /// Asks until `deadline` (monotonic seconds). Only `y`/`yes` approves; EOF and anything else deny.
    func askApproval(deadline: Double) -> Approval
    func showResult(_ outcome: EnrollOutcome, authorizedKeys: String)
    func note(_ text: String)
    func error(_ text: String)
}

extension PairingConsole {
    func codeText(url: String, plan: PairingPlan, expiresAt: Date) -> String {
        let seconds = max(0, Int(expiresAt.timeIntervalSinceNow.rounded()))
        let remaining = seconds < 90 ? "\(seconds) s" : "\(Int((Double(seconds) / 60).rounded())) min"
        let clock = DateFormatter.localizedString(from: expiresAt, dateStyle: .none, timeStyle: .medium)
        return """

            Scan this code with herdr on your phone to pair it with this computer.
              Computer  \(plan.computerName)
              User      \(plan.user)
              Hosts     \(plan.hostnames.joined(separator: ", ")) (port \(plan.port))
              Expires   \(clock) (in \(remaining))
              URL       \(url)

            Waiting for a device to scan the code. Ctrl+C cancels.

            """
    }

    func requestText(_ request: EnrollRequest) -> String {
        "\nDevice \"\(request.deviceName)\" asks to pair.\n  device key \(request.deviceKey.fingerprintSHA256)\n"
    }

    func resultText(_ outcome: EnrollOutcome, authorizedKeys: String) -> String {
        switch outcome {
        case .ok: "Approved: the device's key is now in \(authorizedKeys). The one-time key was removed.\n"
        case .denied: "Denied: nothing was added, and the one-time key was removed.\n"
        case .expired: "Expired: nothing was added, and the one-time key was removed.\n"
        case .invalid, .used: "\(outcome.token)\n"
        }
    }

    static var approvalPrompt: String { "Approve this device? [y/N] " }

    static func isYes(_ line: String) -> Bool {
        let word = line.trimmingCharacters(in: .whitespaces).lowercased()
        return word == "y" || word == "yes"
    }
}

/// For people: the code and texts on stdout, the question on the controlling terminal (stdin and
/// stderr without one).
struct TerminalConsole: PairingConsole {
    func showCode(url: String, qr: QRCode, plan: PairingPlan, expiresAt: Date) {
        let colors = RawTerminalMode.isTerminal(fd: STDOUT_FILENO)
        let lines = qr.halfBlockLines(quietZone: 4, colors: colors)
        out(lines.joined(separator: "\n") + "\n" + codeText(url: url, plan: plan, expiresAt: expiresAt))
    }

    func showRequest(_ request: EnrollRequest) {
        out(requestText(request))
    }

    func askApproval(deadline: Double) -> Approval {
        let tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC)
        let input = tty >= 0 ? tty : STDIN_FILENO
        let output = tty >= 0 ? tty : STDERR_FILENO
        defer { if tty >= 0 { close(tty) } }
        // Keys typed before the question (while waiting) must not answer it.
        if RawTerminalMode.isTerminal(fd: input) { tcflush(input, TCIFLUSH) }
        try? FileDescriptorWriter.writeAll(fd: output, string: Self.approvalPrompt)
        switch TimedLineReader.readLine(fd: input, deadline: deadline) {
        case .line(let line): return Self.isYes(line) ? .yes : .no
        case .end:
            try? FileDescriptorWriter.writeAll(fd: output, string: "\n")
            return .no
        case .timedOut:
            try? FileDescriptorWriter.writeAll(fd: output, string: "\nNo answer in time.\n")
            return .timedOut
        }
    }

    func showResult(_ outcome: EnrollOutcome, authorizedKeys: String) {
        out(resultText(outcome, authorizedKeys: authorizedKeys))
    }

    func note(_ text: String) {
        StandardError.write(text + "\n")
    }

    func error(_ text: String) {
        StandardError.write("error: \(text)\n")
    }

    private func out(_ text: String) {
        try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: text)
    }
}

/// `--test-mode`: `READY <url>`, `REQUEST <name> <SHA256:…>` and `RESULT <token>` lines on stdout;
/// answers read as lines from stdin; everything a person would see (the QR code included, without
/// colours) on stderr.
struct TestConsole: PairingConsole {
    func showCode(url: String, qr: QRCode, plan: PairingPlan, expiresAt: Date) {
        StandardError.write(qr.halfBlockLines(quietZone: 4).joined(separator: "\n") + "\n")
        StandardError.write(codeText(url: url, plan: plan, expiresAt: expiresAt))
        line("READY \(url)")
    }

    func showRequest(_ request: EnrollRequest) {
        StandardError.write(requestText(request))
        line("REQUEST \(request.deviceName) \(request.deviceKey.fingerprintSHA256)")
    }

    func askApproval(deadline: Double) -> Approval {
        StandardError.write(Self.approvalPrompt + "\n")
        switch TimedLineReader.readLine(fd: STDIN_FILENO, deadline: deadline) {
        case .line(let answer): return Self.isYes(answer) ? .yes : .no
        case .end: return .no
        case .timedOut: return .timedOut
        }
    }

    func showResult(_ outcome: EnrollOutcome, authorizedKeys: String) {
        StandardError.write(resultText(outcome, authorizedKeys: authorizedKeys))
        line("RESULT \(outcome.token)")
    }

    func note(_ text: String) {
        StandardError.write(text + "\n")
    }

    func error(_ text: String) {
        StandardError.write("error: \(text)\n")
    }

    private func line(_ text: String) {
        try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: text + "\n")
    }
}

/// Reads one line from a descriptor with a deadline, a byte at a time after `poll`, so nothing after
/// the newline is consumed and a silent person cannot hold the helper past the approval window.
enum TimedLineReader {
    static let maximumLineBytes = 4096

    enum Result: Sendable, Equatable {
        case line(String)
        case end
        case timedOut
    }

    static func readLine(fd: Int32, deadline: Double) -> Result {
        var bytes: [UInt8] = []
        while true {
            let remaining = deadline - FileIOWait.now()
            guard remaining > 0 else { return .timedOut }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining, 1) * 1000) + 1)
            if ready < 0 {
                if errno == EINTR { continue }
                return .end
            }
            guard ready > 0 else { continue }
            var byte: UInt8 = 0
            let count = read(fd, &byte, 1)
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return .end
            }
            if count == 0 { return bytes.isEmpty ? .end : .line(String(decoding: bytes, as: UTF8.self)) }
            if byte == UInt8(ascii: "\n") { return .line(String(decoding: bytes, as: UTF8.self)) }
            // An overlong line is not a yes.
            if bytes.count < maximumLineBytes { bytes.append(byte) } else { bytes = Array("no".utf8) }
        }
    }
}
