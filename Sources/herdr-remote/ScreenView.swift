import CLISupport
import Glibc
import HerdrKit
import ScreenModel
import Synchronization

/// `connect --screen`'s drawing: each screen the computer sends, painted into this terminal by
/// `ScreenPainter` from the connection's thread, and the person's own screen given back once,
/// however the session ends; a screen arriving after that is not drawn.
final class ScreenView: Sendable {
    private struct State {
        var painter: ScreenPainter
        var opened = false
        var closed = false
    }

    private let state: Mutex<State>

    init(rows: Int, columns: Int) {
        state = Mutex(State(painter: ScreenPainter(rows: rows, columns: columns)))
    }

    /// Draws `screen`; false when the terminal could not be written.
    func draw(_ screen: TerminalScreen, rang: Bool) -> Bool {
        state.withLock { state in
            guard !state.closed else { return true }
            var bytes = state.opened ? [] : ScreenPainter.opening
            state.opened = true
            bytes += state.painter.paint(screen, rang: rang)
            return (try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, bytes: bytes)) != nil
        }
    }

    /// The terminal's new size: the next screen is drawn whole.
    func resize(rows: Int, columns: Int) {
        state.withLock { $0.painter.resize(rows: rows, columns: columns) }
    }

    /// Gives the person's screen back (once), and draws nothing more.
    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            if state.opened { _ = try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, bytes: ScreenPainter.closing) }
        }
    }
}
