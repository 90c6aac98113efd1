import Foundation
import Plumbing
import Synchronization

/// One `events.subscribe` connection on a thread of its own: it connects, subscribes, and reports
/// the start (within `timeout`), then every event as it comes, then the end. The thread waits in
/// `poll` between events, costing nothing while herdr is quiet; `cancel()` ends it at once.
final class HerdrSubscriptionThread: Sendable {
    private let connection = Mutex<HerdrSocketConnection?>(nil)
    private let cancelled = Atomic<Bool>(false)

    /// Starts the thread; `report` gets what the connection brings, the last call an `.ended`
    /// (none after `cancel()`).
    init(
        socket: String, panes: [String], timeout: Double,
        report: @escaping @Sendable (HerdrWatcher.SubscriptionEvent) -> Void
    ) {
        let thread = Thread { [self] in
            let failure = run(socket: socket, panes: panes, timeout: timeout, report: report)
            if !cancelled.load(ordering: .relaxed) { report(.ended(failure)) }
        }
        thread.name = "herdr subscription"
        thread.start()
    }

    func cancel() {
        cancelled.store(true, ordering: .relaxed)
        connection.withLock { $0?.cancel() }
    }

    private func run(
        socket: String, panes: [String], timeout: Double,
        report: @Sendable (HerdrWatcher.SubscriptionEvent) -> Void
    ) -> HerdrRequestFailure {
        do throws(HerdrRequestFailure) {
            let opened = try HerdrSocketConnection(path: socket)
            let isCancelled = connection.withLock { stored in
                stored = opened
                return cancelled.load(ordering: .relaxed)
            }
            if isCancelled { opened.cancel() }
            let id = "herdr-host-events"
            let deadline = MonotonicClock.now + timeout
            try opened.write(HerdrProtocol.subscribeLine(id: id, panes: panes), deadline: deadline)
            var started = false
            var lines = 0
            while !started {
                lines += 1
                guard lines <= HerdrProtocol.maximumLinesPerAnswer else {
                    throw HerdrRequestFailure(.malformed, "did not start its subscription")
                }
                switch try HerdrProtocol.subscriptionLine(try opened.readLine(deadline: deadline), id: id) {
                case .started:
                    started = true
                    report(.started)
                case .event, nil:
                    continue
                }
            }
            while true {
                if case .event(let event) = try HerdrProtocol.subscriptionLine(
                    try opened.readLine(deadline: nil), id: id)
                {
                    report(.event(event))
                }
            }
        } catch {
            return HerdrSocketConnection.during("events.subscribe", error)
        }
    }
}
