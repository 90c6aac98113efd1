import ScreenModel
import SessionProtocol
import Synchronization
import TerminalScreen

/// One screen session's terminal emulator on the computer (docs/companion.md, "Screen
/// sessions"): the PTY's output is fed to libvterm on the PTY's own reading thread, so a flood is
/// read only as fast as libvterm takes it, and the screen is published after each feed for the
/// agent's loop, which never waits on libvterm (a resize while a feed runs is applied right after
/// it; scrollback is read off the loop).
final class ScreenTerminal: Sendable {
    /// The screen as the last feed or resize left it.
    struct Published: Sendable {
        var screen: TerminalScreen
        var version: UInt64
        var bells: UInt32
    }

    private let terminal: Mutex<VirtualTerminal>
    private let published: Mutex<Published>
    private let pendingResize = Mutex<(rows: Int, columns: Int)?>(nil)

    init(rows: Int, columns: Int) throws {
        let terminal = try VirtualTerminal(rows: rows, columns: columns)
        published = Mutex(
            Published(
                screen: terminal.snapshot(), version: terminal.version, bells: 0))
        self.terminal = Mutex(terminal)
    }

    /// Feeds the program's output (on the PTY's thread); the answers the terminal owes the
    /// program (a cursor position report), to be written to the PTY.
    func feed(_ bytes: [UInt8]) -> [UInt8] {
        terminal.withLock { terminal in
            applyPendingResize(terminal)
            let replies = terminal.feed(bytes)
            publish(terminal)
            return replies
        }
    }

    /// The PTY's new size: applied now when libvterm is free, else right after the feed under way.
    func resize(rows: Int, columns: Int) {
        pendingResize.withLock { $0 = (rows, columns) }
        _ = terminal.withLockIfAvailable { terminal in
            applyPendingResize(terminal)
            publish(terminal)
        }
    }

    /// The screen now, as published.
    var current: Published { published.withLock { $0 } }

    /// The answer to a scrollback request: up to `count` kept lines before line `end`. It waits
    /// for a feed under way (libvterm keeps pushing lines), so it is never called on the loop.
    func scrollback(stream: UInt32, end: UInt64, count: Int) -> ScrollbackLines {
        terminal.withLock { terminal in
            let kept = terminal.scrollback
            let total = UInt64(kept.pushed)
            let oldest = UInt64(kept.firstNumber)
            let upper = min(end, total)
            let lower = max(oldest, upper - min(upper, UInt64(count)))
            let lines = upper > lower ? kept.lines(Int(lower)..<Int(upper)) : []
            return ScrollbackLines.answer(
                stream: stream, lines: lines, first: upper > lower ? lower : upper, oldest: oldest, total: total)
        }
    }

    private func applyPendingResize(_ terminal: VirtualTerminal) {
        guard
            let size = pendingResize.withLock({ value in
                defer { value = nil }
                return value
            })
        else { return }
        // Sizes come from the session protocol, which keeps them within libvterm's bounds.
        try? terminal.resize(rows: size.rows, columns: size.columns)
    }

    private func publish(_ terminal: VirtualTerminal) {
        published.withLock { published in
            guard published.version != terminal.version else { return }
            published.screen = terminal.snapshot(updating: published.screen, takenAt: published.version)
            published.version = terminal.version
            published.bells = UInt32(truncatingIfNeeded: terminal.bells)
        }
    }
}
