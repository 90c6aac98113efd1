import Foundation

/// A queue whose elements are handled by whichever thread pushes them, while no other thread is
/// handling: one at a time, in the order they were pushed, each batch under one lock. A frame is
/// handled on its connection's thread and a PTY's output on its I/O thread instead of waking a
/// loop thread for each (two thread wake-ups less per keystroke round trip). A pusher never
/// waits for the lock: if another thread holds it, that thread handles the element before it
/// lets go, so handlers may push and may block on nothing a pusher holds.
///
/// The pending elements are a plain array under a lock of their own: this sits on every
/// keystroke's path, twice.
public final class CombiningQueue<Element: Sendable>: @unchecked Sendable {
    private let pendingLock = NSLock()
    private var pending: [Element] = []
    private let lock = NSLock()
    /// The batch being handled (with `lock` held): swapped with `pending`, so the two buffers
    /// take turns and a push allocates nothing.
    private var batch: [Element] = []
    /// Called with the lock held.
    private let handle: ([Element]) -> Void
    /// Called by the thread that handled, once it let go of the lock.
    private let afterward: (() -> Void)?

    /// `handle` runs with the lock held, on whichever thread pushed; `afterward` on that thread
    /// once it let go (for work that must not hold the lock: a write that may block).
    public init(handle: @escaping ([Element]) -> Void, afterward: (() -> Void)? = nil) {
        self.handle = handle
        self.afterward = afterward
    }

    /// Queues `element` and handles everything queued, unless another thread is at it.
    public func push(_ element: Element) {
        enqueue(element)
        drain()
    }

    /// Queues `element` without handling it: for a handler that queues work of another queue
    /// while it holds its own lock, and leaves the `drain` to its caller once that lock is free.
    public func enqueue(_ element: Element) {
        pendingLock.lock()
        pending.append(element)
        pendingLock.unlock()
    }

    /// Runs `body` with the lock held (the owner's own work: timers, shutdown), then handles
    /// whatever was pushed meanwhile.
    public func withLock<Result>(_ body: () -> Result) -> Result {
        lock.lock()
        let result = body()
        lock.unlock()
        drain()
        return result
    }

    private var hasPending: Bool {
        pendingLock.lock()
        defer { pendingLock.unlock() }
        return !pending.isEmpty
    }

    /// Handles everything queued, unless another thread is at it.
    public func drain() {
        // Re-checked after unlocking: an element pushed while this thread held the lock found it
        // taken and left the element to this thread.
        var handled = false
        while hasPending {
            guard lock.try() else { break }
            pendingLock.lock()
            swap(&pending, &batch)
            pendingLock.unlock()
            if !batch.isEmpty { handle(batch) }
            batch.removeAll(keepingCapacity: true)
            lock.unlock()
            handled = true
        }
        if handled { afterward?() }
    }
}
