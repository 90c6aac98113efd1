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
final class CombiningQueue<Element: Sendable>: @unchecked Sendable {
    private let pendingLock = NSLock()
    private var pending: [Element] = []
    private let lock = NSLock()
    /// The batch being handled (with `lock` held): swapped with `pending`, so the two buffers
    /// take turns and a push allocates nothing.
    private var batch: [Element] = []
    /// Called with the lock held.
    private let handle: ([Element]) -> Void

    init(handle: @escaping ([Element]) -> Void) {
        self.handle = handle
    }

    /// Queues `element` and handles everything queued, unless another thread is at it.
    func push(_ element: Element) {
        pendingLock.lock()
        pending.append(element)
        pendingLock.unlock()
        drain()
    }

    /// Runs `body` with the lock held (the owner's own work: timers, shutdown), then handles
    /// whatever was pushed meanwhile.
    func withLock<Result>(_ body: () -> Result) -> Result {
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

    private func drain() {
        // Re-checked after unlocking: an element pushed while this thread held the lock found it
        // taken and left the element to this thread.
        while hasPending {
            guard lock.try() else { return }
            pendingLock.lock()
            swap(&pending, &batch)
            pendingLock.unlock()
            if !batch.isEmpty { handle(batch) }
            batch.removeAll(keepingCapacity: true)
            lock.unlock()
        }
    }
}
