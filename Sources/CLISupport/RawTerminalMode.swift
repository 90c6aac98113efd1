import Glibc
import Synchronization

/// A terminal in raw mode, holding the state to put back.
///
/// Raw mode is `cfmakeraw`: no echo, no line editing (canonical mode), no signals from keys (Ctrl+C,
/// Ctrl+Z and Ctrl+\ reach the remote session as bytes), no input translation (CR stays CR), no
/// output post-processing (`\n` is not turned into `\r\n`), 8-bit characters, and `read` returns as
/// soon as one byte is there (VMIN 1, VTIME 0).
///
///     let raw = try RawTerminalMode.enter(fd: STDIN_FILENO)
///     defer { raw.restore() }
///
/// The saved state is put back on every exit path a process survives long enough to run code on:
/// - ``restore()`` (idempotent) and `deinit`;
/// - `exit(3)` and returning from `main`, through an `atexit` hook;
/// - SIGINT, SIGTERM, SIGHUP and SIGQUIT (and SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2 while their
///   disposition is the default), through a process-wide async-signal-safe handler that restores
///   the terminal and then re-raises the signal with the default disposition, so the process still
///   dies of that signal. A signal watched by a ``SignalWatcher`` does not kill the process
///   (restoring is then the program's own shutdown path), and one the process inherited as
///   ignored stays ignored. Note that this makes SIGQUIT end a Swift program, which the Swift
///   runtime's own SIGQUIT hook otherwise survives.
///
/// Not covered: SIGKILL and SIGSTOP (cannot be caught); `_exit(2)`; crashes (traps from
/// `fatalError`, `precondition` and force-unwraps, SIGSEGV, SIGABRT), which belong to the Swift
/// runtime's backtracer; SIGTSTP/SIGTTIN/SIGTTOU stops (with raw mode the keyboard cannot send
/// SIGTSTP, and a stopped process resumes in raw mode). `reset` or `stty sane` repairs a terminal
/// left raw by those.
///
/// Do not close `fd` while the terminal is raw: restore first, because the emergency paths restore
/// by descriptor number.
public final class RawTerminalMode: Sendable {
    /// The terminal's descriptor (not owned: it is never closed here).
    public let fd: Int32
    /// The attributes found on entry, put back on restore.
    public let savedAttributes: termios
    /// The registry slot while raw; `nil` once restored.
    private let slot: Mutex<Int?>

    private init(fd: Int32, savedAttributes: termios, slot: Int) {
        self.fd = fd
        self.savedAttributes = savedAttributes
        self.slot = Mutex(slot)
    }

    /// Switches the terminal on `fd` to raw mode.
    ///
    /// The original state is registered for the emergency paths before the switch, so there is no
    /// moment when the terminal is raw and a signal would leave it so. After the switch the state is
    /// read back and checked, because `tcsetattr` reports success when any part of the change worked.
    ///
    /// - Throws: ``SystemError`` (`ENOTTY` when `fd` is not a terminal; `ENOSPC` when too many
    ///   terminal states are registered at once).
    public static func enter(fd: Int32) throws(SystemError) -> RawTerminalMode {
        let original = try TerminalAttributes.get(fd)
        guard let slot = ProcessSignalRegistry.registerTerminal(fd: fd, saved: original) else {
            throw SystemError("register terminal", code: ENOSPC)
        }
        let mode = RawTerminalMode(fd: fd, savedAttributes: original, slot: slot)
        do throws(SystemError) {
            try TerminalAttributes.set(fd, makeRaw(original))
            let now = try TerminalAttributes.get(fd)
            if now.c_lflag & tcflag_t(ECHO | ICANON | ISIG | IEXTEN) != 0 || now.c_oflag & tcflag_t(OPOST) != 0 {
                throw SystemError("tcsetattr (raw mode not taken)", code: EINVAL)
            }
        } catch {
            mode.restore()
            throw error
        }
        return mode
    }

    /// Puts the saved attributes back. Safe to call any number of times, from any thread.
    ///
    /// Best effort: if the terminal is gone (hung up, closed) there is nothing left to restore.
    public func restore() {
        slot.withLock { slot in
            guard let taken = slot else { return }
            try? TerminalAttributes.set(fd, savedAttributes)
            // Only now forget the state: a signal arriving mid-way still finds it and restores.
            ProcessSignalRegistry.unregisterTerminal(slot: taken)
            slot = nil
        }
    }

    /// Whether the terminal is still in raw mode through this object.
    public var isActive: Bool { slot.withLock { $0 != nil } }

    deinit {
        restore()
    }

    /// The raw-mode version of `attributes` (what `cfmakeraw` does, with VMIN 1 and VTIME 0 set
    /// explicitly).
    public static func makeRaw(_ attributes: termios) -> termios {
        var raw = attributes
        cfmakeraw(&raw)
        TerminalAttributes.setControlCharacter(&raw, VMIN, 1)
        TerminalAttributes.setControlCharacter(&raw, VTIME, 0)
        return raw
    }

    /// The terminal's size in character cells, or `nil` when `fd` is not a terminal or the size is
    /// unknown (0×0, as on a fresh pseudo-terminal nobody sized).
    public static func windowSize(fd: Int32) -> (cols: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(fd, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Whether `fd` is a terminal.
    public static func isTerminal(fd: Int32) -> Bool {
        isatty(fd) == 1
    }
}
