import CLISupport
import Dispatch
import Glibc
import Synchronization
import Testing

/// Signals seen by a watcher's handler, in order.
final class SignalLog: Sendable {
    private let seen = Mutex<[Int32]>([])
    var signals: [Int32] { seen.withLock { $0 } }
    func record(_ signal: Int32) { seen.withLock { $0.append(signal) } }

    /// Waits up to `timeout` seconds for `count` signals, without holding a thread: the watcher's
    /// queue needs one from the same small pool.
    func wait(for count: Int, timeout: Double = 10) async -> Bool {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if signals.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return false
    }
}

extension InProcessTerminalTests {
    @Suite struct SignalWatcherTests {
        @Test func deliversTheSignalOnTheGivenQueue() async throws {
            let log = SignalLog()
            let queue = DispatchQueue(label: "watcher")
            let onQueue = Mutex(false)
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let watcher = try SignalWatcher(signals: [SIGWINCH], queue: queue) { signal in
                onQueue.withLock { $0 = DispatchQueue.getSpecific(key: key) == true }
                log.record(signal)
            }
            defer { watcher.cancel() }
            kill(getpid(), SIGWINCH)
            #expect(await log.wait(for: 1))
            #expect(log.signals == [SIGWINCH])
            #expect(onQueue.withLock { $0 })
        }

        @Test func aWatchedTerminatingSignalDoesNotKill() async throws {
            let log = SignalLog()
            let watcher = try SignalWatcher(signals: [SIGHUP, SIGUSR1], queue: DispatchQueue(label: "w")) {
                log.record($0)
            }
            defer { watcher.cancel() }
            kill(getpid(), SIGHUP)
            #expect(await log.wait(for: 1))
            kill(getpid(), SIGUSR1)
            #expect(await log.wait(for: 2))
            #expect(log.signals == [SIGHUP, SIGUSR1])  // and this process is still alive to check
        }

        @Test func repeatedSignalsBeforeTheHandlerRunsAreCoalesced() async throws {
            let log = SignalLog()
            let queue = DispatchQueue(label: "suspended")
            queue.suspend()
            let watcher = try SignalWatcher(signals: [SIGWINCH, SIGUSR2], queue: queue) { log.record($0) }
            defer { watcher.cancel() }
            for _ in 0..<5 { kill(getpid(), SIGWINCH) }
            kill(getpid(), SIGUSR2)
            try await Task.sleep(for: .milliseconds(200))
            queue.resume()
            #expect(await log.wait(for: 2))
            try await Task.sleep(for: .milliseconds(100))
            // Once each; pending signals are delivered by number, not in the order they were sent.
            #expect(log.signals.sorted() == [SIGUSR2, SIGWINCH].sorted())
        }

        @Test func cancelStopsDeliveryAndTheSameSignalCanBeWatchedAgain() async throws {
            let first = SignalLog()
            let watcher = try SignalWatcher(signals: [SIGUSR1], queue: DispatchQueue(label: "a")) {
                first.record($0)
            }
            kill(getpid(), SIGUSR1)
            #expect(await first.wait(for: 1))
            watcher.cancel()
            watcher.cancel()  // idempotent
            #expect(!watcher.isActive)
            // Still watched by a second watcher (or SIGUSR1 would end this process): the first is silent.
            let second = SignalLog()
            let again = try SignalWatcher(signals: [SIGUSR1], queue: DispatchQueue(label: "b")) {
                second.record($0)
            }
            defer { again.cancel() }
            kill(getpid(), SIGUSR1)
            #expect(await second.wait(for: 1))
            try await Task.sleep(for: .milliseconds(100))
            #expect(first.signals == [SIGUSR1])
            #expect(second.signals == [SIGUSR1])
        }

        @Test func twoWatchersOfOneSignalBothHearIt() async throws {
            let (a, b) = (SignalLog(), SignalLog())
            let one = try SignalWatcher(signals: [SIGWINCH], queue: DispatchQueue(label: "1")) { a.record($0) }
            let two = try SignalWatcher(signals: [SIGWINCH], queue: DispatchQueue(label: "2")) { b.record($0) }
            defer {
                one.cancel()
                two.cancel()
            }
            kill(getpid(), SIGWINCH)
            #expect(await a.wait(for: 1))
            #expect(await b.wait(for: 1))
        }
    }
}
