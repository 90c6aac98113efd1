import Foundation
import HerdrAgents
import Plumbing

/// `HerdrWatcher`'s shell: a thread of its own runs the state machine, reads herdr's directory
/// when it asks, and hands each request to a short thread and each subscription to a thread of
/// its own (`HerdrSubscriptionThread`), every one with its time limit. Whatever herdr does,
/// nothing here blocks the caller: `setDemand` only queues, and the board comes back through
/// `report`, called on the watch's thread whenever the board or the watch's state changed.
public final class HerdrWatch: Sendable {
    /// What the watch knows now.
    public struct Report: Sendable, Hashable {
        /// herdr's state, its sessions and agents (empty while the watch is stopped).
        public var board: AgentBoard
        /// Whether the watch reads herdr now (something wants the board, or did a minute ago).
        public var isRunning: Bool
        /// Whether every session had its first look: the board says something true of each.
        public var isSettled: Bool

        public init(board: AgentBoard = AgentBoard(), isRunning: Bool = false, isSettled: Bool = false) {
            self.board = board
            self.isRunning = isRunning
            self.isSettled = isSettled
        }
    }

    private enum Input: Sendable {
        case demand(Bool)
        case answered(HerdrWatcher.RequestID, Result<HerdrProtocol.Answer, HerdrRequestFailure>)
        case subscription(HerdrWatcher.RequestID, HerdrWatcher.SubscriptionEvent)
        case stop
    }

    /// Inputs handled in one pass at most, before the board is reported.
    private static let maximumBatch = 1024

    private let inputs = EventQueue<Input>()

    /// Starts the watch's thread, stopped until something wants the board.
    public init(
        location: HerdrLocation, settings: HerdrWatcher.Settings = HerdrWatcher.Settings(),
        log: @escaping @Sendable (String) -> Void, report: @escaping @Sendable (Report) -> Void
    ) {
        let thread = Thread { [inputs] in
            Self.run(inputs, location: location, settings: settings, log: log, report: report)
        }
        thread.name = "herdr watch"
        thread.start()
    }

    /// Whether anything wants the board now (a device watches, or an `open agent` waits for a
    /// fresh look). The watch stops `linger` seconds after the last want ended.
    public func setDemand(_ wanted: Bool) { inputs.push(.demand(wanted)) }

    /// Ends the watch's thread and every connection to herdr.
    public func stop() {
        inputs.push(.stop)
        inputs.finish()
    }

    private static func run(
        _ inputs: EventQueue<Input>, location: HerdrLocation, settings: HerdrWatcher.Settings,
        log: @Sendable (String) -> Void, report: @Sendable (Report) -> Void
    ) {
        var machine = HerdrWatcher(settings: settings)
        var subscriptions: [HerdrWatcher.RequestID: HerdrSubscriptionThread] = [:]
        var last = Report()
        loop: while true {
            let timeout = machine.nextDeadline.map { max(0, $0 - MonotonicClock.now) }
            let first = inputs.next(timeout: timeout)
            // Nil with no deadline: the queue was finished.
            if first == nil, timeout == nil { break }
            var batch = first.map { [$0] } ?? []
            while batch.count < maximumBatch, let more = inputs.next(timeout: 0) { batch.append(more) }
            var actions: [HerdrWatcher.Action] = []
            for input in batch {
                let now = instant()
                switch input {
                case .demand(let wanted): actions += machine.setDemand(wanted, now: now)
                case .answered(let id, let result): actions += machine.answered(id, result, now: now)
                case .subscription(let id, let event): actions += machine.subscription(id, event, now: now)
                case .stop: break loop
                }
            }
            actions += machine.tick(now: instant())
            // Bounded: a scan's answer asks for requests, never for another scan.
            var index = 0
            while index < actions.count {
                let action = actions[index]
                index += 1
                switch action {
                case .scan:
                    actions += machine.scanned(HerdrScan.read(location), now: instant())
                case .request(let id, let socket, let method):
                    let thread = Thread {
                        inputs.push(
                            .answered(
                                id,
                                HerdrSocketConnection.request(method, socket: socket, timeout: settings.requestTimeout))
                        )
                    }
                    thread.name = "herdr request"
                    thread.start()
                case .subscribe(let id, let socket, let panes):
                    subscriptions[id] = HerdrSubscriptionThread(
                        socket: socket, panes: panes, timeout: settings.requestTimeout
                    ) { event in inputs.push(.subscription(id, event)) }
                case .unsubscribe(let id):
                    subscriptions.removeValue(forKey: id)?.cancel()
                case .log(let line):
                    log(line)
                }
            }
            let current = Report(board: machine.board, isRunning: machine.isRunning, isSettled: machine.isSettled)
            if current != last {
                last = current
                report(current)
            }
        }
        for subscription in subscriptions.values { subscription.cancel() }
    }

    private static func instant() -> HerdrWatcher.Instant {
        HerdrWatcher.Instant(monotonic: MonotonicClock.now, unix: Int64(Date().timeIntervalSince1970))
    }
}
