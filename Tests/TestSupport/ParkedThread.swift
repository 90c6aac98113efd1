import Foundation

/// A thread that starts one child process and then waits, alive, until released. A child
/// started with PR_SET_PDEATHSIG gets its signal when the thread that spawned it ends, so it
/// ends when the test says, not when an idle pool thread happens to be reclaimed.
final class ParkedThread: @unchecked Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var started = false
    private var ended = false

    /// Runs `spawn` on the thread (once; a second call throws) and returns the child.
    func spawn(_ spawn: @escaping @Sendable () throws -> ChildProcess) throws -> ChildProcess {
        try lock.withLock {
            guard !started else { throw FixtureError("the parked thread already started its child") }
            started = true
        }
        final class Outcome: @unchecked Sendable {
            var result: Result<ChildProcess, any Error> = .failure(FixtureError("the parked thread did not run"))
        }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let released = self.released
        Thread {
            outcome.result = Result { try spawn() }
            done.signal()
            released.wait()
        }.start()
        done.wait()
        return try outcome.result.get()
    }

    /// Lets the thread end. Idempotent.
    func release() {
        let wasParked: Bool = lock.withLock {
            defer { ended = true }
            return started && !ended
        }
        if wasParked { released.signal() }
    }

    deinit { release() }
}
