import Glibc
import Synchronization

/// The process-wide signal handler shared by ``RawTerminalMode``, ``TerminalPrompt`` and
/// ``SignalWatcher``, and the table of terminal states to put back before the process dies.
///
/// Why one handler of our own instead of `DispatchSourceSignal`: on Linux, libdispatch installs its
/// own `sigaction` handler once per signal and never again, and routes delivery through a
/// `signalfd`; after a signal source is cancelled, a new source for the same signal is never
/// called and the signal is swallowed (measured here with Swift 6.3). One handler that knows both
/// the watchers and the terminals gives one consistent answer for every signal.
///
/// What the handler does with a signal:
/// 1. If any ``SignalWatcher`` watches it: write one byte into each watcher's socket and return (the
///    default disposition is suppressed while watched).
/// 2. If it was ignored before the handler was installed (`nohup`, a background job's SIGINT):
///    keep ignoring it.
/// 3. SIGINT, SIGTERM, SIGHUP, SIGQUIT, and the others whose previous disposition was the default:
///    restore the saved terminal states, put the default disposition back and re-raise, so the
///    process dies of the signal and its parent sees that. For the first four, a handler installed
///    before ours is not called: they end the process unless watched. (The Swift runtime's own
///    SIGQUIT hook, for one, lets the process live on, measured here with and without a terminal.)
/// 4. Otherwise (SIGWINCH, or SIGPIPE/SIGALRM/SIGUSR1/SIGUSR2 that had a handler of their own
///    before a watcher took them over): call that earlier handler, or do nothing for SIGWINCH's
///    default. For terminal restoration alone, those four are taken over only while their
///    disposition is the default, so another library's handler is never stolen.
///
/// Async-signal safety: the handler only reads memory allocated once and never freed (raw
/// pointers, no Swift arrays, no class references, so no retain/release and no exclusivity
/// checks), uses atomics, and calls `write`, `tcsetattr`, `sigaction` and `raise`, which POSIX lists
/// as async-signal-safe. It saves and restores `errno`.
///
/// Once installed for a signal, the handler stays for the life of the process; with nothing
/// registered it behaves as the previous disposition. Code that later installs its own handler for
/// one of these signals (or uses `DispatchSource.makeSignalSource`) replaces this one and loses the
/// guarantees: use ``SignalWatcher`` instead.
enum ProcessSignalRegistry {
    /// Signals that end the process after the terminals are restored, whatever handler was there
    /// before (the contract of ``RawTerminalMode``).
    static let endingSignals: [Int32] = [SIGHUP, SIGINT, SIGQUIT, SIGTERM]
    /// Signals whose default action also kills the process; taken over only while their disposition
    /// is still the default, so a handler another library installed is never stolen.
    static let defaultOnlySignals: [Int32] = [SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2]
    /// Signals a ``SignalWatcher`` may watch.
    static let watchableSignals: Set<Int32> = Set(endingSignals + defaultOnlySignals + [SIGWINCH])

    // Constants the handler reads are computed properties, not stored globals, so reading them
    // never goes through lazy global initialisation.
    static var terminalCapacity: Int { 16 }
    static var watcherCapacity: Int { 64 }
    /// Larger than every Linux signal number (`NSIG` is 65).
    static var signalTableSize: Int { 65 }

    // Slot states. A slot is written only while `claimed`, and read by the handler only when `active`.
    static var free: Int { 0 }
    static var claimed: Int { 1 }
    static var active: Int { 2 }

    /// The disposition found before installation, which decides what an unwatched signal does.
    enum Previous: Int32 {
        case defaultAction = 0
        case ignore
        case handler
        case siginfoHandler
    }

    /// Memory the handler reads: allocated once, never freed, never moved.
    struct Storage: @unchecked Sendable {
        let terminalStates: UnsafeMutablePointer<Atomic<Int>>
        let terminalOrder: UnsafeMutablePointer<Atomic<Int>>
        let terminalFDs: UnsafeMutablePointer<Int32>
        let terminalSaved: UnsafeMutablePointer<termios>
        let watcherStates: UnsafeMutablePointer<Atomic<Int>>
        let watcherSignals: UnsafeMutablePointer<Int32>
        let watcherFDs: UnsafeMutablePointer<Int32>
        let previousKinds: UnsafeMutablePointer<Previous>
        let previousActions: UnsafeMutablePointer<sigaction>
        /// Handler invocations currently reading slots; a slot is reused only when this is zero.
        let inFlight: UnsafeMutablePointer<Atomic<Int>>
        /// Registration counter, so restoring can go newest-first and the oldest saved state wins.
        let sequence: UnsafeMutablePointer<Atomic<Int>>

        static func allocate() -> Storage {
            func atomics(_ count: Int) -> UnsafeMutablePointer<Atomic<Int>> {
                let pointer = UnsafeMutablePointer<Atomic<Int>>.allocate(capacity: count)
                for index in 0..<count { (pointer + index).initialize(to: Atomic(0)) }
                return pointer
            }
            func plain<T>(_ count: Int, _ value: T) -> UnsafeMutablePointer<T> {
                let pointer = UnsafeMutablePointer<T>.allocate(capacity: count)
                pointer.initialize(repeating: value, count: count)
                return pointer
            }
            return Storage(
                terminalStates: atomics(terminalCapacity), terminalOrder: atomics(terminalCapacity),
                terminalFDs: plain(terminalCapacity, -1), terminalSaved: plain(terminalCapacity, termios()),
                watcherStates: atomics(watcherCapacity), watcherSignals: plain(watcherCapacity, 0),
                watcherFDs: plain(watcherCapacity, -1), previousKinds: plain(signalTableSize, Previous.defaultAction),
                previousActions: plain(signalTableSize, sigaction()), inFlight: atomics(1), sequence: atomics(1))
        }
    }

    static let storage = Storage.allocate()

    /// Which signals have the handler, and whether the `atexit` hook is registered.
    private struct Installation {
        var signals: Set<Int32> = []
        var atExitRegistered = false
    }

    private static let installation = Mutex(Installation())

    // MARK: - Terminals

    /// Remembers `saved` as the state to put back on `fd` if the process ends before
    /// ``unregisterTerminal(slot:)``. Installs the handlers and the `atexit` hook on first use.
    ///
    /// - Returns: the slot, or `nil` when all slots are taken.
    static func registerTerminal(fd: Int32, saved: termios) -> Int? {
        let storage = storage
        installation.withLock { state in
            for signal in endingSignals { install(signal, &state) }
            for signal in defaultOnlySignals { install(signal, &state, onlyOverDefault: true) }
            if !state.atExitRegistered {
                state.atExitRegistered = true
                atexit { ProcessSignalRegistry.restoreAllTerminals() }
            }
        }
        for slot in 0..<terminalCapacity {
            guard
                storage.terminalStates[slot].compareExchange(
                    expected: free, desired: claimed, ordering: .sequentiallyConsistent
                ).exchanged
            else { continue }
            storage.terminalFDs[slot] = fd
            storage.terminalSaved[slot] = saved
            storage.terminalOrder[slot].store(
                storage.sequence.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent).newValue,
                ordering: .sequentiallyConsistent)
            storage.terminalStates[slot].store(active, ordering: .sequentiallyConsistent)
            return slot
        }
        return nil
    }

    /// Forgets a terminal slot; when this returns, no handler is still using it.
    static func unregisterTerminal(slot: Int) {
        release(storage.terminalStates + slot)
    }

    /// Puts back every registered terminal state, newest registration first, so that when one
    /// terminal was registered twice its oldest (original) state is the one left.
    /// Async-signal-safe.
    static func restoreAllTerminals() {
        let storage = storage
        var below = Int.max
        while true {
            var chosen = -1
            var chosenOrder = Int.min
            for slot in 0..<terminalCapacity
            where storage.terminalStates[slot].load(ordering: .sequentiallyConsistent) == active {
                let order = storage.terminalOrder[slot].load(ordering: .sequentiallyConsistent)
                if order < below && order > chosenOrder {
                    chosen = slot
                    chosenOrder = order
                }
            }
            if chosen < 0 { return }
            _ = tcsetattr(storage.terminalFDs[chosen], TCSANOW, storage.terminalSaved + chosen)
            below = chosenOrder
        }
    }

    // MARK: - Watchers

    /// Makes the handler write a byte to `fd` whenever `signal` arrives, until unregistered.
    ///
    /// - Returns: the slot, or `nil` when all slots are taken.
    static func registerWatcher(signal: Int32, fd: Int32) -> Int? {
        precondition(watchableSignals.contains(signal), "CLISupport: signal \(signal) cannot be watched")
        let storage = storage
        for slot in 0..<watcherCapacity {
            guard
                storage.watcherStates[slot].compareExchange(
                    expected: free, desired: claimed, ordering: .sequentiallyConsistent
                ).exchanged
            else { continue }
            storage.watcherSignals[slot] = signal
            storage.watcherFDs[slot] = fd
            storage.watcherStates[slot].store(active, ordering: .sequentiallyConsistent)
            // Install after the slot is active, so the first signal after this returns is seen.
            installation.withLock { install(signal, &$0) }
            return slot
        }
        return nil
    }

    /// Stops notifying a watcher slot; when this returns, no handler is still writing to its fd.
    static func unregisterWatcher(slot: Int) {
        release(storage.watcherStates + slot)
    }

    // MARK: - Handler

    /// Must be called with the installation lock held.
    private static func install(_ signal: Int32, _ state: inout Installation, onlyOverDefault: Bool = false) {
        guard !state.signals.contains(signal) else { return }
        let storage = storage
        var action = sigaction()
        action.__sigaction_handler = .init(sa_sigaction: { signal, info, context in
            ProcessSignalRegistry.handle(signal, info, context)
        })
        // SA_RESTART: a signal must not make blocked reads and writes elsewhere fail with EINTR.
        action.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK
        sigemptyset(&action.sa_mask)
        for other in watchableSignals { sigaddset(&action.sa_mask, other) }
        var previous = sigaction()
        guard sigaction(signal, nil, &previous) == 0 else { return }
        let raw = unsafeBitCast(previous.__sigaction_handler.sa_handler, to: Int.self)
        let kind: Previous
        if raw == 0 {
            kind = .defaultAction
        } else if raw == 1 {  // SIG_IGN
            kind = .ignore
        } else if previous.sa_flags & SA_SIGINFO != 0 {
            kind = .siginfoHandler
        } else {
            kind = .handler
        }
        if onlyOverDefault && kind != .defaultAction { return }
        storage.previousActions[Int(signal)] = previous
        storage.previousKinds[Int(signal)] = kind
        guard sigaction(signal, &action, nil) == 0 else { return }
        state.signals.insert(signal)
    }

    /// The signal handler itself. Async-signal-safe: see the type's documentation.
    private static func handle(
        _ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?
    ) {
        let savedErrno = errno
        defer { errno = savedErrno }
        let storage = storage
        storage.inFlight.pointee.wrappingAdd(1, ordering: .sequentiallyConsistent)
        var watched = false
        for slot in 0..<watcherCapacity
        where storage.watcherStates[slot].load(ordering: .sequentiallyConsistent) == active
            && storage.watcherSignals[slot] == signal
        {
            var byte = UInt8(truncatingIfNeeded: signal)
            _ = write(storage.watcherFDs[slot], &byte, 1)  // non-blocking: a full buffer already says "signal"
            watched = true
        }
        let kind = storage.previousKinds[Int(signal)]
        let ends = signal == SIGHUP || signal == SIGINT || signal == SIGQUIT || signal == SIGTERM
        if watched || kind == .ignore || (kind == .defaultAction && signal == SIGWINCH) {
            storage.inFlight.pointee.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            return
        }
        if !ends && (kind == .handler || kind == .siginfoHandler) {
            // Someone else's handler, found when a watcher took the signal over: give it back the signal.
            storage.inFlight.pointee.wrappingSubtract(1, ordering: .sequentiallyConsistent)
            let previous = storage.previousActions + Int(signal)
            if kind == .siginfoHandler {
                previous.pointee.__sigaction_handler.sa_sigaction?(signal, info, context)
            } else {
                previous.pointee.__sigaction_handler.sa_handler?(signal)
            }
            return
        }
        restoreAllTerminals()
        storage.inFlight.pointee.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        // Die of the signal as if never caught: the parent (a shell) sees the real cause. The signal
        // is blocked while this handler runs, so it is delivered as soon as the handler returns.
        var fallback = sigaction()
        fallback.__sigaction_handler = .init(sa_handler: nil)  // SIG_DFL
        sigemptyset(&fallback.sa_mask)
        _ = sigaction(signal, &fallback, nil)
        _ = raise(signal)
    }

    /// Frees a slot and waits until no handler that may have seen it active is still running.
    private static func release(_ state: UnsafeMutablePointer<Atomic<Int>>) {
        state.pointee.store(claimed, ordering: .sequentiallyConsistent)
        while storage.inFlight.pointee.load(ordering: .sequentiallyConsistent) != 0 {
            sched_yield()
        }
        state.pointee.store(free, ordering: .sequentiallyConsistent)
    }
}
