import CLISupport
import Glibc
import HerdrKit
import Plumbing
import SessionProtocol
import Synchronization

/// `connect --screen`'s drawing: each screen the computer sends, with the keys' predicted echo
/// (`EchoPredictor`), painted into this terminal by `ScreenPainter` from the connection's
/// thread; the person's own screen given back once, however the session ends; nothing drawn
/// after that.
final class ScreenView: Sendable {
    private struct State {
        var painter: ScreenPainter
        var predictor: EchoPredictor
        var opened = false
        var closed = false
    }

    private let state: Mutex<State>

    init(rows: Int, columns: Int, predict: EchoPredictor.Mode) {
        state = Mutex(
            State(painter: ScreenPainter(rows: rows, columns: columns), predictor: EchoPredictor(mode: predict)))
    }

    /// Draws the computer's screen; false when the terminal could not be written.
    func draw(_ frame: ScreenFrame) -> Bool {
        state.withLock { state in
            state.predictor.received(frame, now: MonotonicClock.now)
            return paint(&state, rang: frame.rang)
        }
    }

    /// The person typed `bytes` (sent to the computer): their predicted echo is drawn at once.
    func typed(_ bytes: [UInt8]) {
        state.withLock { state in
            state.predictor.typed(bytes, now: MonotonicClock.now)
            _ = paint(&state, rang: false)
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

    private func paint(_ state: inout State, rang: Bool) -> Bool {
        guard !state.closed, let screen = state.predictor.display else { return true }
        var bytes = state.opened ? [] : ScreenPainter.opening
        state.opened = true
        bytes += state.painter.paint(screen, rang: rang)
        guard !bytes.isEmpty else { return true }
        return (try? FileDescriptorWriter.writeAll(fd: STDOUT_FILENO, bytes: bytes)) != nil
    }
}
