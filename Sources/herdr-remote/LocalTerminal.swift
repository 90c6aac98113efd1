import CLISupport
import Foundation
import Glibc

/// The local side of `connect`: raw mode on a terminal, the window size, and status lines.
/// (Remote output is written by the connection's own thread; see `TerminalSessionOptions.directOutput`.)
@MainActor
final class LocalTerminal {
    let isInteractive = RawTerminalMode.isTerminal(fd: STDIN_FILENO)
    private var raw: RawTerminalMode?
    /// `connect --screen`'s drawing, whose screen is given back first on restore.
    var screenView: ScreenView?

    /// The terminal's size, or $COLUMNS/$LINES, or 80×24.
    var size: (cols: Int, rows: Int) {
        if let size = RawTerminalMode.windowSize(fd: STDOUT_FILENO) ?? RawTerminalMode.windowSize(fd: STDIN_FILENO),
            size.cols > 0, size.rows > 0
        {
            return size
        }
        let environment = ProcessInfo.processInfo.environment
        return (Int(environment["COLUMNS"] ?? "") ?? 80, Int(environment["LINES"] ?? "") ?? 24)
    }

    func enterRawMode() throws {
        guard isInteractive, raw == nil else { return }
        raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
    }

    func restore() {
        screenView?.close()
        raw?.restore()
        raw = nil
    }

    /// A status line for the person, readable in raw mode too (explicit CR LF).
    func status(_ text: String) {
        let line = text.replacingOccurrences(of: "\n", with: "\r\n")
        StandardError.write(raw == nil ? line + "\n" : "\r\n[herdr-remote] " + line + "\r\n")
    }
}
