import Foundation
import Glibc
import Plumbing
import RelayProtocol
import Synchronization

/// Keeps one role's connection to a room alive: connects, hands each admitted connection to its
/// owner, and when it ends reconnects after a backoff, until told to stop or until the relay says
/// retrying is pointless (the room was deleted or expired, the join key no longer matches, the
/// pairing cycle cap, another device took the slot).
///
/// Runs on a thread of its own, which keeps the link alive until it stops: call `stop()` when
/// done with it. Every admitted connection is a fresh WebSocket: whatever runs on top (the Noise
/// handshake) starts over on each.
public final class RelayLink: Sendable {
    /// Why the link gave up for good.
    public enum StopReason: Hashable, Sendable, CustomStringConvertible {
        /// `stop()` was called.
        case stopped
        /// The room was deleted (1000 `room deleted`).
        case roomDeleted
        /// The relay no longer accepts our join key (`bad signature`, `signature required`, `room
        /// expired`): remote access needs re-pairing.
        case needsRepairing(String)
        /// The pairing room was closed after too many phone admissions (1000 `pairing cycle cap`).
        case pairingCycleCap
        /// Another device took our slot (1000 `displaced`); reconnecting would take it back.
        case displaced
        /// A refusal that retrying cannot fix (`ticket required`, `bad proof`, HTTP 403…).
        case refused(String)

        public var description: String {
            switch self {
            case .stopped: "stopped"
            case .roomDeleted: "room deleted"
            case .needsRepairing(let reason): "remote access needs re-pairing (\(reason))"
            case .pairingCycleCap: "pairing cycle cap"
            case .displaced: "displaced by another device"
            case .refused(let reason): "refused: \(reason)"
            }
        }
    }

    /// Where the link is.
    public enum State: Hashable, Sendable {
        /// Attempt `attempt` (from 1) is connecting.
        case connecting(attempt: Int)
        /// A connection is admitted and open.
        case admitted
        /// The last attempt or connection ended (`reason`); the next starts in `retryIn` seconds.
        case waiting(retryIn: Double, reason: String)
        case stopped(StopReason)
    }

    /// What the link reports, in order.
    public enum Event: Sendable {
        case connecting(attempt: Int)
        /// A connection was admitted: read and send on it until it ends; the link watches its end
        /// (without consuming its events) and reconnects.
        case admitted(RelayConnection)
        case waiting(retryIn: Double, reason: String)
        /// The last event.
        case stopped(StopReason)

        public var state: State {
            switch self {
            case .connecting(let attempt): .connecting(attempt: attempt)
            case .admitted: .admitted
            case .waiting(let delay, let reason): .waiting(retryIn: delay, reason: reason)
            case .stopped(let reason): .stopped(reason)
            }
        }
    }

    /// What `deliver(to:)` hands over: the link's events (but `connecting`) with each admitted
    /// connection's own frames and end between them, in order.
    public enum RoomEvent: Sendable {
        /// A connection was admitted (the phone's carries its registration token).
        case admitted(RelayConnection)
        /// A frame from the peer on the current connection.
        case frame([UInt8])
        /// The current connection ended; the link reconnects unless it stops.
        case connectionEnded(FramePipeEnd)
        case waiting(retryIn: Double, reason: String)
        /// The link gave up for good; the last event.
        case stopped(StopReason)
    }

    public struct Options: Sendable {
        public var connection = RelayConnection.Options()
        public var backoff = RelayBackoff()
        /// Uniform randomness in 0...1 for the backoff's jitter.
        public var random: @Sendable () -> Double = { Double.random(in: 0...1) }
        /// Seconds an admitted connection must have lasted for the attempt after its drop to go
        /// at once.
        public var steadyConnection = RelayBackoff.steadyConnection
        public init() {}
    }

    /// Where the events go once `deliver(to:)` was called.
    private struct Delivery {
        var handler: (@Sendable (RoomEvent) -> Void)?
        /// Signalled once the last admitted connection's end was handed over.
        var connectionEnd: DispatchSemaphore?
    }

    private struct Control {
        var credential: RelayCredential
        var stopRequested = false
        var current: RelayConnection?
        var state: State = .connecting(attempt: 1)
    }

    public let endpoint: RelayEndpoint
    public let room: String
    public let role: RelayRole
    private let control: Mutex<Control>
    private let wakeup = Condition()
    private let queue = EventQueue<Event>()
    private let delivery = Mutex(Delivery())
    private let done = Condition()
    private let finished = Mutex(false)

    /// Starts connecting at once.
    public init(
        endpoint: RelayEndpoint, room: String, role: RelayRole, credential: RelayCredential,
        options: Options = Options()
    ) {
        self.endpoint = endpoint
        self.room = room
        self.role = role
        self.control = Mutex(Control(credential: credential))
        let runner = LinkRunner(link: self, options: options)
        let thread = Thread { runner.run() }
        thread.name = "relay link"
        thread.start()
    }

    /// The credential for the next attempts (after pairing: `.joinKey`).
    public func setCredential(_ credential: RelayCredential) {
        control.withLock { $0.credential = credential }
    }

    public var state: State { control.withLock { $0.state } }

    /// The next event, blocking at most `timeout` seconds (nil: forever); nil on timeout or after
    /// `stopped` was taken.
    public func nextEvent(timeout: Double?) -> Event? { queue.next(timeout: timeout) }

    /// The events as an async sequence, finishing after `stopped`. Shares its queue with `nextEvent`.
    public var events: AsyncStream<Event> {
        let queue = self.queue
        return AsyncStream(unfolding: { await queue.next() })
    }

    /// Hands every event from now on (and those already waiting, first) to `handler`, each
    /// admitted connection's frames and end with them: the link's on its thread, a connection's
    /// on the connection's thread, with no thread of the owner's in between. A connection's end is
    /// handed over before anything the link says after it. Set it once; `nextEvent` and `events`
    /// then get nothing.
    public func deliver(to handler: @escaping @Sendable (RoomEvent) -> Void) {
        delivery.withLock { delivery in
            while let waiting = queue.next(timeout: 0) { Self.hand(waiting, to: handler, &delivery) }
            delivery.handler = handler
        }
    }

    /// `event` to `handler` (under `delivery`'s lock, so events go one at a time and in order).
    private static func hand(
        _ event: Event, to handler: @escaping @Sendable (RoomEvent) -> Void, _ delivery: inout Delivery
    ) {
        // The link speaks again only after the connection ended; its end, on the connection's
        // thread, goes first.
        delivery.connectionEnd.take()?.wait()
        switch event {
        case .connecting: break
        case .admitted(let connection):
            handler(.admitted(connection))
            let ended = DispatchSemaphore(value: 0)
            delivery.connectionEnd = ended
            connection.deliver { event in
                switch event {
                case .message(let bytes): handler(.frame(bytes))
                case .ended(let end):
                    handler(.connectionEnded(end))
                    ended.signal()
                }
            }
        case .waiting(let delay, let reason): handler(.waiting(retryIn: delay, reason: reason))
        case .stopped(let reason): handler(.stopped(reason))
        }
    }

    /// Stops for good: closes the open connection (close 1000) or abandons the attempt. Returns at
    /// once; `waitUntilStopped` waits for the link's thread.
    public func stop() {
        let current: RelayConnection? = control.withLock {
            $0.stopRequested = true
            return $0.current
        }
        current?.close()
        wakeup.withLock { wakeup.broadcast() }
    }

    /// Blocks until the link has stopped (at most `timeout` seconds); true if it has.
    @discardableResult
    public func waitUntilStopped(timeout: Double?) -> Bool {
        let deadline = timeout.map { Deadline(seconds: $0) } ?? .never
        return done.withLock {
            while !finished.withLock({ $0 }) && !deadline.hasPassed { done.wait(until: deadline) }
            return finished.withLock { $0 }
        }
    }

    // MARK: - For the runner

    fileprivate var isStopRequested: Bool { control.withLock { $0.stopRequested } }
    fileprivate var credential: RelayCredential { control.withLock { $0.credential } }

    /// Records the attempt in progress; false (and nothing recorded) once stopping.
    fileprivate func setCurrent(_ connection: RelayConnection?) -> Bool {
        control.withLock {
            if connection != nil && $0.stopRequested { return false }
            $0.current = connection
            return true
        }
    }

    fileprivate func publish(_ event: Event) {
        control.withLock { $0.state = event.state }
        delivery.withLock { delivery in
            guard let handler = delivery.handler else { return queue.push(event) }
            Self.hand(event, to: handler, &delivery)
        }
    }

    fileprivate func finish(_ reason: StopReason) {
        publish(.stopped(reason))
        // Nothing follows `stopped`: the handler, and whatever it holds, is let go.
        delivery.withLock { $0.handler = nil }
        queue.finish()
        done.withLock {
            finished.withLock { $0 = true }
            done.broadcast()
        }
    }

    /// Sleeps `seconds` unless stopped first; false if stopped.
    fileprivate func pause(_ seconds: Double) -> Bool {
        let deadline = Deadline(seconds: seconds)
        return wakeup.withLock {
            while !isStopRequested && !deadline.hasPassed { wakeup.wait(until: deadline) }
            return !isStopRequested
        }
    }

    // MARK: - Policy

    /// What to do after a connection or an attempt ended.
    public enum Disposition: Hashable, Sendable {
        case retry(reason: String)
        /// Another relay node holds the room (4421 `reshard`, HTTP 421): the balancer is moving
        /// it, so come back shortly without counting a failure.
        case retrySoon(reason: String)
        case stop(StopReason)
    }

    /// Reshards in a row answered soon; past this the ordinary backoff applies, so a balancer
    /// that never settles (one that does not hash on the room) is not hammered.
    public static let soonRetries = 20

    /// After an admitted connection ended.
    public static func disposition(after end: FramePipeEnd) -> Disposition {
        switch end {
        case .closedByRelay(let close): disposition(afterClose: close)
        case .closedLocally: .retry(reason: "closed")
        case .failed(let error): .retry(reason: error.message)
        }
    }

    /// After an attempt failed before admission.
    public static func disposition(after error: ConnectionError) -> Disposition {
        switch error.kind {
        case .refused:
            let reason = error.serverError ?? ""
            switch reason {
            case AdmissionError.badSignature.rawValue, AdmissionError.signatureRequired.rawValue:
                return .stop(.needsRepairing(reason))
            case AdmissionError.ticketRequired.rawValue, AdmissionError.badTicket.rawValue,
                AdmissionError.badProof.rawValue, AdmissionError.badHello.rawValue:
                return .stop(.refused(reason))
            default:
                // rate limited, mac offline, slot occupied: later may work.
                if let close = error.close, case .stop(let stop) = disposition(afterClose: close) { return .stop(stop) }
                return .retry(reason: reason)
            }
        case .closed:
            if let close = error.close { return disposition(afterClose: close) }
            return .retry(reason: error.message)
        case .httpStatus:
            let status = error.status ?? 0
            if status == 421 { return .retrySoon(reason: "HTTP 421 \(error.serverError ?? "reshard")") }
            if status == 400 || status == 403 || status == 404 || status == 501 {
                return .stop(.refused("HTTP \(status) \(error.serverError ?? "")"))
            }
            return .retry(reason: error.message)
        case .invalidEndpoint:
            return .stop(.refused(error.message))
        default:
            return .retry(reason: error.message)
        }
    }

    static func disposition(afterClose close: RelayClose) -> Disposition {
        switch close.reason {
        case RelayClose.roomDeleted.reason: .stop(.roomDeleted)
        case RelayClose.pairingCycleCap.reason: .stop(.pairingCycleCap)
        case RelayClose.displaced.reason: .stop(.displaced)
        case RelayClose.roomExpired.reason: .stop(.needsRepairing(close.reason))
        case RelayClose.reshard.reason where close.code == RelayClose.reshard.code:
            .retrySoon(reason: "relay closed: \(close)")
        case AdmissionError.badSignature.rawValue, AdmissionError.signatureRequired.rawValue:
            .stop(.needsRepairing(close.reason))
        // A Hello the relay cannot read is closed without a Result; sending it again cannot help.
        case AdmissionError.badHello.rawValue: .stop(.refused(close.reason))
        default: .retry(reason: "relay closed: \(close)")
        }
    }
}

/// The link's thread.
private final class LinkRunner: Sendable {
    let link: RelayLink
    let options: RelayLink.Options

    init(link: RelayLink, options: RelayLink.Options) {
        self.link = link
        self.options = options
    }

    func run() {
        var backoff = options.backoff
        var attempt = 0
        var reshards = 0
        while true {
            var peerLeft = false
            // Seconds the admitted connection lasted, once it ended.
            var upFor: Double?
            if link.isStopRequested { return link.finish(.stopped) }
            attempt += 1
            link.publish(.connecting(attempt: attempt))
            let disposition: RelayLink.Disposition
            do {
                let connection = try RelayConnection(
                    starting: link.endpoint, room: link.room, role: link.role, credential: link.credential,
                    options: options.connection)
                guard link.setCurrent(connection) else {
                    connection.close()
                    return link.finish(.stopped)
                }
                defer { _ = link.setCurrent(nil) }
                try connection.waitForAdmission()
                // A parked computer that was admitted found the relay working: whatever ends this
                // connection, the next attempt is a first one, not the tenth of a losing streak.
                if link.role == .computer { backoff.reset() }
                let start = MonotonicClock.now
                link.publish(.admitted(connection))
                let end = connection.waitUntilEnded(timeout: nil) ?? .closedLocally
                upFor = MonotonicClock.now - start
                backoff.connectionEnded(after: MonotonicClock.now - start)
                disposition = RelayLink.disposition(after: end)
                peerLeft = end == .closedByRelay(.peerGone)
            } catch {
                disposition = RelayLink.disposition(after: error)
            }
            if link.isStopRequested { return link.finish(.stopped) }
            if case .retrySoon = disposition {} else { reshards = 0 }
            switch disposition {
            case .stop(let reason):
                return link.finish(reason)
            case .retrySoon(let reason):
                reshards += 1
                let delay =
                    reshards <= RelayLink.soonRetries
                    ? RelayBackoff.soonDelay(random: options.random()) : backoff.nextDelay(random: options.random())
                link.publish(.waiting(retryIn: delay, reason: reason))
                if !link.pause(delay) { return link.finish(.stopped) }
            case .retry(let reason):
                // The peer left (a device's session ended, or its network dropped): the relay is
                // fine, so be back at once for the next connection. Each of these follows a peer's
                // admission, which the relay rate-limits, so this cannot spin.
                if peerLeft {
                    backoff.reset()
                    continue
                }
                // A connection that had been up a while dropped (a computer parked through a
                // balancer whose node died): the first attempt goes at once, to the node the
                // balancer picks now. Each follows an admission that lasted: this cannot spin.
                if let upFor, upFor >= options.steadyConnection { continue }
                let delay = backoff.nextDelay(random: options.random())
                link.publish(.waiting(retryIn: delay, reason: reason))
                if !link.pause(delay) { return link.finish(.stopped) }
            }
        }
    }
}
