import CLISupport
import CompanionPairing
import Foundation
import Glibc
import HerdrHostAgent
import HerdrKit
import TerminalQR

/// `herdr-host pair` on a terminal: the code as a QR in half blocks and as a line of text (and as
/// a PNG file with `--png`), the question for the typed code, and what happened.
final class TerminalPairingConsole: PairingConsole, @unchecked Sendable {
    private let pngFile: String?
    /// The web client the code is shown as an address of (`--web`, `--web-client`).
    private let webClient: String?
    private let lock = NSLock()

    init(pngFile: String?, webClient: String? = nil) {
        self.pngFile = pngFile
        self.webClient = webClient
    }

    private func write(_ text: String) {
        lock.lock()
        defer { lock.unlock() }
        try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, string: text)
    }

    func showCode(_ code: CompanionCode) {
        let shown = webClient.map { code.webAddress(client: $0) } ?? code.url
        var text =
            webClient == nil
            ? "\nScan this code with herdr-remote pair (or paste the line below):\n\n"
            : "\nScan this code with the phone's camera: it opens the web client (herdr-remote pair takes it too):\n\n"
        if let qr = try? QRCode(encoding: shown, level: .medium) {
            let colors = isatty(STDOUT_FILENO) == 1
            text += qr.halfBlockLines(quietZone: 4, colors: colors).joined(separator: "\n") + "\n\n"
            if let pngFile {
                do {
                    try AtomicFile.write(qr.png(), to: URL(fileURLWithPath: pngFile), mode: 0o600)
                    text += "(The QR code is also in \(pngFile).)\n"
                } catch {
                    text += "(Could not write \(pngFile): \(error))\n"
                }
            }
        }
        text += shown + "\n\n"
        let road =
            code.relay.map { "Relay: \($0.origin)" }
            ?? "Home network only: \(code.home.map(\.description).joined(separator: ", "))"
        text += "\(road). The code changes after 2 minutes without a device.\n"
        write(text)
    }

    func ask(attemptsLeft: Int) {
        let tries = attemptsLeft == 1 ? "last try" : "\(attemptsLeft) tries"
        if attemptsLeft == ComputerPairing.Configuration().attempts {
            write("\nA device connected. Type the code it shows (\(tries)): ")
        } else {
            write("Type the code again (\(tries)): ")
        }
    }

    func voidQuestion(_ text: String) {
        // What was typed for the void question must not answer the next one.
        if isatty(STDIN_FILENO) == 1 { tcflush(STDIN_FILENO, TCIFLUSH) }
        write("\n\(text)\n")
    }

    func say(_ text: String) { write("\(text)\n") }
}

/// Reads the person's lines on a thread of its own, for the pairing loop.
enum LineReader {
    static func start(_ deliver: @escaping @Sendable (String?) -> Void) {
        let thread = Thread {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while true {
                let count = read(STDIN_FILENO, &byte, 1)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 {
                    deliver(nil)
                    return
                }
                if byte == UInt8(ascii: "\n") {
                    deliver(String(decoding: line, as: UTF8.self))
                    line = []
                } else if line.count < 256 {
                    line.append(byte)
                }
            }
        }
        thread.name = "input"
        thread.start()
    }
}
