import Dispatch
import Glibc
import Synchronization

/// Calls a handler on a queue of your choice when one of the watched signals arrives: SIGWINCH for
/// resizes, SIGINT/SIGTERM/SIGHUP (also SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2) for a clean
/// shutdown.
///
///     let watcher = try SignalWatcher(signals: [SIGWINCH, SIGTERM], queue: queue) { signal in
///         if signal == SIGWINCH { session.resize(RawTerminalMode.windowSize(fd: 1)) } else { session.close() }
///     }
///     ...
///     watcher.cancel()
///
/// While a signal is watched its default disposition is suppressed: SIGTERM no longer kills the
/// process, the handler decides. After ``cancel()`` (or when the watcher is released) the previous
/// behaviour is back, including terminal restoration by ``RawTerminalMode``; watching the same
/// signal again later works.
///
/// Repeated signals that arrive before the handler runs are coalesced: the handler is called once
/// per distinct signal per wake-up, like `DispatchSourceSignal`.
///
/// Why not `DispatchSourceSignal`: on Linux, once a dispatch signal source for a signal has been
/// cancelled, a new one for that signal never fires and the signal is swallowed. This type keeps
/// the same shape (a queue, a handler, cancel) on top of the process-wide handler of this library:
/// the handler writes the signal number into a non-blocking socket pair, and a dispatch read source
/// on the other end calls your handler on `queue`.
public final class SignalWatcher: Sendable {
    /// The watched signals.
    public let signals: [Int32]
    // Dispatch sources are thread-safe (cancel may be called from any thread); the overlay just
    // does not say so.
    nonisolated(unsafe) private let source: any DispatchSourceRead
    private let slots: Mutex<[Int]?>

    /// Starts watching `signals`; `handler` runs on `queue` with the signal number.
    ///
    /// Keep the watcher: releasing it cancels it.
    ///
    /// - Throws: ``SystemError`` if the socket pair cannot be made, or `ENOSPC` when too many watchers exist.
    /// - Precondition: every signal is one of the watchable signals listed above.
    public init(signals: [Int32], queue: DispatchQueue, handler: @escaping @Sendable (Int32) -> Void)
        throws(SystemError)
    {
        // A socket pair rather than pipe(2): it takes close-on-exec and non-blocking atomically
        // (pipe2 does not import), so no child spawned meanwhile inherits it.
        var ends: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { throw SystemError.fromErrno("socketpair") }
        let (readFD, writeFD) = (ends[0], ends[1])
        var taken: [Int] = []
        for signal in Set(signals) {
            guard let slot = ProcessSignalRegistry.registerWatcher(signal: signal, fd: writeFD) else {
                for slot in taken { ProcessSignalRegistry.unregisterWatcher(slot: slot) }
                close(readFD)
                close(writeFD)
                throw SystemError("register signal watcher", code: ENOSPC)
            }
            taken.append(slot)
        }
        let source = DispatchSource.makeReadSource(fileDescriptor: readFD, queue: queue)
        source.setEventHandler { @Sendable in
            var buffer = [UInt8](repeating: 0, count: 64)
            var arrived: [Int32] = []
            while true {
                let count = read(readFD, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                for byte in buffer[..<count] where !arrived.contains(Int32(byte)) { arrived.append(Int32(byte)) }
            }
            for signal in arrived { handler(signal) }
        }
        source.setCancelHandler { @Sendable in
            close(readFD)
            close(writeFD)
        }
        self.signals = signals
        self.source = source
        self.slots = Mutex(taken)
        source.resume()
    }

    /// Stops watching. Idempotent. After it returns, no new handler call starts (one already
    /// running on the queue may finish), and the signals behave as they did before.
    public func cancel() {
        let taken = slots.withLock { slots in
            defer { slots = nil }
            return slots
        }
        guard let taken else { return }
        // Unregister first: once this returns no signal handler writes to the pipe, so closing it
        // (in the cancel handler) cannot hit a reused descriptor number.
        for slot in taken { ProcessSignalRegistry.unregisterWatcher(slot: slot) }
        source.cancel()
    }

    /// Whether the watcher is still watching.
    public var isActive: Bool { slots.withLock { $0 != nil } }

    deinit {
        cancel()
    }
}
