import CSystem
import Foundation
import Glibc
import NetworkPath
import Plumbing
import RelayProtocol
import WebWire

/// What a client proves at admission (interop-facts §5, step 3).
public enum RelayCredential: Sendable {
    /// `{}`: open mode, or a Mac parking in a pairing room.
    case none
    /// `{"ticket":…}`: a pairing-room ticket from `/attest`.
    case ticket(String)
    /// `{"sig":…}`: the join key's signature over `RelayTranscript.join(role, nonce, room, origin)`.
    case joinKey(RelayJoinKey)
}

/// One WebSocket to a relay room, admitted, on a thread of its own.
///
/// The thread does every blocking thing (name resolution, connect, TLS, upgrade, admission, then
/// reading and writing with poll); nothing here blocks Swift's cooperative pool except the
/// blocking calls documented as such.
///
/// Sending: `send` is thread-safe and never blocks. Frames are queued and written in order by the
/// connection's thread, each masked with a fresh random key. The queue is bounded: when it holds
/// more than `Options.maximumQueuedBytes`, `send` fails with `backpressure` and queues nothing
/// (an empty queue always takes one frame); `waitUntilWritable` blocks until it has drained to
/// half. Callers that produce faster than the relay takes should stop reading their source and
/// wait, rather than drop.
///
/// Receiving: events come out in order through `receive(timeout:)` (blocking) or `events` (an
/// `AsyncStream`), which share one queue. While more than `Options.maximumIncomingBytes` wait
/// unconsumed the thread stops reading the socket, so the relay's backpressure reaches the peer.
///
/// Keepalive: a ping every `pingInterval` seconds; no pong within `pongTimeout` ends the
/// connection with `keepaliveTimeout` (not while reading is paused for a slow consumer, since
/// frames are arriving then). The relay's pings are answered.
public final class RelayConnection: Sendable {
    public struct Options: Sendable {
        /// Ask to be refused with `slot occupied` rather than displace the slot's holder.
        public var nonDisplacing = false
        /// Seconds for name resolution's aftermath, TCP connect and TLS.
        public var connectTimeout: Double = 10
        /// Seconds for the upgrade and admission once connected.
        public var admissionTimeout: Double = 15
        /// Seconds between our pings.
        public var pingInterval = Double(RelayLimits.clientPingInterval)
        /// Seconds to wait for a pong before giving up on the relay.
        public var pongTimeout = Double(RelayLimits.clientPongTimeout)
        /// Outgoing bytes queued beyond which `send` fails with `backpressure`.
        public var maximumQueuedBytes = 4 * 1024 * 1024
        /// Incoming bytes waiting for the consumer beyond which reading pauses.
        public var maximumIncomingBytes = 4 * 1024 * 1024
        /// Seconds `close()` waits for the relay's closing handshake before dropping the socket.
        public var closeTimeout: Double = 1
        /// Extra upgrade headers, for probes only (an `Origin` the relay must refuse).
        var extraHeaders: [(String, String)] = []

        public init() {}
    }

    public let endpoint: RelayEndpoint
    public let room: String
    public let role: RelayRole
    public let options: Options
    let shared: ConnectionShared

    // MARK: - Connecting

    /// Connects and completes admission, blocking the calling thread until admitted (or refused,
    /// or `connectTimeout` + `admissionTimeout` pass). Call it off the cooperative pool.
    /// `started` gets the connection before admission, so that another thread may call the
    /// attempt off (`abandon`) while it connects.
    public static func connect(
        to endpoint: RelayEndpoint, room: String, role: RelayRole, credential: RelayCredential,
        options: Options = Options(), started: (RelayConnection) -> Void = { _ in }
    ) throws(ConnectionError) -> RelayConnection {
        let connection = try RelayConnection(
            starting: endpoint, room: room, role: role, credential: credential, options: options)
        started(connection)
        try connection.waitForAdmission()
        return connection
    }

    /// Connects and completes admission without blocking the caller; cancelling the task
    /// abandons the attempt (`cancelled`).
    public static func connect(
        to endpoint: RelayEndpoint, room: String, role: RelayRole, credential: RelayCredential,
        options: Options = Options()
    ) async throws(ConnectionError) -> RelayConnection {
        let connection = try RelayConnection(
            starting: endpoint, room: room, role: role, credential: credential, options: options)
        let outcome = await withTaskCancellationHandler {
            await connection.shared.admissionOutcome()
        } onCancel: {
            connection.close()
        }
        if case .failure(let error) = outcome { throw error }
        return connection
    }

    /// Starts the connection's thread; admission runs there. `waitForAdmission` reports it.
    init(
        starting endpoint: RelayEndpoint, room: String, role: RelayRole, credential: RelayCredential,
        options: Options
    ) throws(ConnectionError) {
        guard !room.utf8.contains(where: { $0 < 0x21 || $0 > 0x7E }) else {
            throw ConnectionError(.protocolViolation, "a room name is printable ASCII")
        }
        let wakeFD = csystem_eventfd_nonblocking()
        guard wakeFD >= 0 else {
            throw ConnectionError(.connectionLost, "eventfd failed: \(RelayTransport.lastError)")
        }
        self.endpoint = endpoint
        self.room = room
        self.role = role
        self.options = options
        let shared = ConnectionShared(wakeFD: wakeFD, maximumIncomingBytes: options.maximumIncomingBytes)
        self.shared = shared
        let setup = ConnectionWorker.Setup(
            endpoint: endpoint, room: room, role: role, credential: credential, options: options)
        let thread = Thread {
            let worker = ConnectionWorker(setup: setup, shared: shared)
            worker.run()
        }
        thread.name = "relay connection"
        thread.start()
    }

    deinit { close() }

    /// Blocks until admission succeeded or failed.
    func waitForAdmission() throws(ConnectionError) {
        if case .failure(let error) = shared.waitForAdmission() { throw error }
    }

    /// The 24-byte registration token the relay gave a phone at admission (for `/register`).
    public var registrationToken: [UInt8]? {
        if case .success(let token) = shared.admissionResult { return token }
        return nil
    }

    // MARK: - Sending

    /// Sends one binary frame (at most 256 KiB): written to the socket at once when nothing waits
    /// before it, else queued for the connection's thread. Never blocks; thread-safe.
    ///
    /// Throws `frameTooLarge`, `backpressure` (queue full: nothing queued; see
    /// `waitUntilWritable`), or `closed` once the connection is closing or ended.
    public func send(_ bytes: [UInt8]) throws(ConnectionError) {
        guard bytes.count <= RelayLimits.frameSize else {
            throw ConnectionError(
                .frameTooLarge, "a relay frame carries at most \(RelayLimits.frameSize) bytes, not \(bytes.count)")
        }
        let frame = WebSocketFrameEncoder.frame(.binary, bytes, maskKey: ConnectionWorker.makeMaskKey())
        let shared = self.shared
        switch shared.io.writeDirectly(frame, allowed: { shared.takesDirectWrites }) {
        case .written: return
        case .buffered: shared.wake()
        case .notTaken: try shared.enqueue(frame, payloadCount: bytes.count, limit: options.maximumQueuedBytes)
        }
    }

    /// Blocks until the outgoing queue holds at most half of `maximumQueuedBytes` (true), or the
    /// connection ended or `timeout` passed (false).
    public func waitUntilWritable(timeout: Double?) -> Bool {
        shared.waitForSpace(limit: options.maximumQueuedBytes / 2, timeout: timeout)
    }

    /// Payload bytes queued and not yet handed to the socket.
    public var queuedByteCount: Int { shared.queuedBytes }

    public var socketEndpoints: SocketEndpoints? { shared.endpoints }

    // MARK: - Receiving

    /// The next event, blocking at most `timeout` seconds (nil: until one comes). Nil on timeout,
    /// or after the `ended` event was taken.
    public func receive(timeout: Double?) -> FramePipeEvent? {
        shared.events.next(timeout: timeout)
    }

    /// Hands every event from now on (and those already waiting, first) to `handler` on the
    /// connection's own thread instead of the queue: one thread handoff less per frame. The
    /// handler may block; the connection then stops reading the relay, as a slow consumer of the
    /// queue would. `ended` is the last call. Set it once; `receive` and `events` then get nothing.
    public func deliver(to handler: @escaping @Sendable (FramePipeEvent) -> Void) {
        shared.install(handler)
    }

    /// The events as an async sequence; it finishes after `ended`. Shares its queue with
    /// `receive`: each event goes to one consumer.
    public var events: AsyncStream<FramePipeEvent> {
        let queue = shared.events
        return AsyncStream(unfolding: { await queue.next() })
    }

    // MARK: - Ending

    /// Sends close 1000 (after what is queued) and ends within about `closeTimeout`. Returns at
    /// once; `waitUntilEnded` waits. Idempotent; also cancels a connection still being admitted.
    public func close() {
        shared.requestClose()
    }

    /// Ends the connection at once, without the closing handshake (`FramePipe.abandon`).
    public func abandon() {
        shared.requestClose(abandoning: true)
    }

    /// How the connection ended, or nil while it is open.
    public var end: FramePipeEnd? { shared.end }

    /// Blocks until the connection has ended (its thread is done with the socket), at most
    /// `timeout` seconds (nil: forever). Does not consume events.
    @discardableResult
    public func waitUntilEnded(timeout: Double?) -> FramePipeEnd? {
        shared.waitForEnd(timeout: timeout)
    }
}

/// The state the connection's thread and its callers share, under one lock.
final class ConnectionShared: @unchecked Sendable {
    private let condition = Condition()
    // Everything below is guarded by `condition`.
    private var outgoing: [[UInt8]] = []
    private var outgoingHead = 0
    private var queued = 0
    private var closeRequested = false
    /// The close is to skip the closing handshake (`abandon`).
    private var abandonRequested = false
    private var closing = false
    private var wakeFD: Int32
    private var admission: Result<[UInt8]?, ConnectionError>?
    private var admissionWaiters: [CheckedContinuation<Result<[UInt8]?, ConnectionError>, Never>] = []
    private var ending: FramePipeEnd?
    private var readPaused = false
    private var socketEnds: SocketEndpoints?

    let events: EventQueue<FramePipeEvent>
    /// Held while an event is handed over, so installing a handler (which drains the queue into
    /// it) and the thread's next event cannot pass each other.
    private let delivery = NSLock()
    nonisolated(unsafe) private var handler: (@Sendable (FramePipeEvent) -> Void)?

    init(wakeFD: Int32, maximumIncomingBytes: Int) {
        self.wakeFD = wakeFD
        let resume = ResumeHook()
        events = EventQueue(
            weight: { event in
                if case .message(let bytes) = event { return bytes.count }
                return 0
            },
            onTake: { remaining in
                if remaining <= maximumIncomingBytes / 2 { resume.fire() }
            })
        resume.target = self
    }

    /// Lets the event queue wake the thread without a reference cycle.
    private final class ResumeHook: @unchecked Sendable {
        weak var target: ConnectionShared?
        func fire() { target?.resumeReadingIfPaused() }
    }

    // MARK: Callers

    func enqueue(_ frame: [UInt8], payloadCount: Int, limit: Int) throws(ConnectionError) {
        try condition.withLock { () throws(ConnectionError) in
            guard admission != nil, !closeRequested, ending == nil else {
                throw ConnectionError(.closed, "the relay connection is closed")
            }
            guard queued == 0 || queued + payloadCount <= limit else {
                throw ConnectionError(.backpressure, "the relay connection's outgoing queue is full (\(queued) bytes)")
            }
            outgoing.append(frame)
            queued += payloadCount
            wakeLocked()
        }
    }

    var queuedBytes: Int { condition.withLock { queued } }

    /// The socket's ends, from when its connect was issued.
    var endpoints: SocketEndpoints? {
        get { condition.withLock { socketEnds } }
        set { condition.withLock { socketEnds = newValue } }
    }

    /// The socket, shared by the connection's thread and senders once admitted.
    let io = ConnectionIO()

    /// Whether a frame may go to the socket directly: admitted, not closing, nothing queued.
    var takesDirectWrites: Bool {
        condition.withLock {
            guard case .success? = admission else { return false }
            return !closeRequested && ending == nil && outgoingHead == outgoing.count
        }
    }

    /// Wakes the connection's thread (a frame left half-written needs it).
    func wake() {
        condition.withLock { wakeLocked() }
    }

    func waitForSpace(limit: Int, timeout: Double?) -> Bool {
        let deadline = timeout.map { Deadline(seconds: $0) } ?? .never
        return condition.withLock {
            while true {
                if ending != nil || closeRequested { return false }
                if queued <= limit { return true }
                if deadline.hasPassed { return false }
                condition.wait(until: deadline)
            }
        }
    }

    func requestClose(abandoning: Bool = false) {
        condition.withLock {
            if abandoning { abandonRequested = true }
            guard !closeRequested || abandoning, ending == nil else { return }
            closeRequested = true
            wakeLocked()
            condition.broadcast()
        }
    }

    var end: FramePipeEnd? { condition.withLock { ending } }

    func waitForEnd(timeout: Double?) -> FramePipeEnd? {
        let deadline = timeout.map { Deadline(seconds: $0) } ?? .never
        return condition.withLock {
            while ending == nil && !deadline.hasPassed { condition.wait(until: deadline) }
            return ending
        }
    }

    var admissionResult: Result<[UInt8]?, ConnectionError>? { condition.withLock { admission } }

    func waitForAdmission() -> Result<[UInt8]?, ConnectionError> {
        condition.withLock {
            while true {
                if let admission { return admission }
                condition.wait(until: .never)
            }
        }
    }

    func admissionOutcome() async -> Result<[UInt8]?, ConnectionError> {
        await withCheckedContinuation { continuation in
            let ready: Result<[UInt8]?, ConnectionError>? = condition.withLock {
                if let admission { return admission }
                admissionWaiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func resumeReadingIfPaused() {
        condition.withLock { if readPaused { wakeLocked() } }
    }

    private func wakeLocked() {
        guard wakeFD >= 0 else { return }
        var one: UInt64 = 1
        _ = Glibc.write(wakeFD, &one, 8)
    }

    // MARK: The connection's thread

    var isCloseRequested: Bool { condition.withLock { closeRequested } }
    var isAbandonRequested: Bool { condition.withLock { abandonRequested } }

    /// The wake descriptor the thread polls (valid until `finish`).
    var wakeDescriptor: Int32 { condition.withLock { wakeFD } }

    func setAdmission(_ result: Result<[UInt8]?, ConnectionError>) {
        let waiters = condition.withLock {
            admission = result
            condition.broadcast()
            defer { admissionWaiters = [] }
            return admissionWaiters
        }
        for waiter in waiters { waiter.resume(returning: result) }
    }

    /// Frames to write, about `budget` bytes (the last frame may pass it; none for a budget of 0),
    /// and whether a close was asked for. After a close request everything queued is taken.
    func takeOutgoing(budget: Int) -> (frames: [[UInt8]], close: Bool) {
        condition.withLock {
            var frames: [[UInt8]] = []
            var taken = 0
            let all = closeRequested
            while outgoingHead < outgoing.count && (all || taken < budget) {
                let frame = outgoing[outgoingHead]
                outgoingHead += 1
                frames.append(frame)
                taken += frame.count
            }
            if outgoingHead == outgoing.count {
                outgoing.removeAll(keepingCapacity: outgoing.count < 256)
                outgoingHead = 0
            }
            if !frames.isEmpty {
                // Frame overhead is at most 14 bytes; count payloads as `enqueue` did.
                queued = max(0, queued - frames.reduce(0) { $0 + ConnectionWorker.payloadCount(ofFrame: $1) })
                condition.broadcast()
            }
            if all { closing = true }
            return (frames, all)
        }
    }

    func setReadPaused(_ paused: Bool) {
        condition.withLock { readPaused = paused }
    }

    /// The end: recorded, delivered as the last event, the wake descriptor closed.
    func finish(_ end: FramePipeEnd) {
        condition.withLock {
            ending = end
            outgoing = []
            outgoingHead = 0
            queued = 0
            if wakeFD >= 0 {
                Glibc.close(wakeFD)
                wakeFD = -1
            }
            condition.broadcast()
        }
        deliver(.ended(end))
        events.finish()
    }

    /// An event from the connection's thread: to the handler if one is set, else the queue.
    func deliver(_ event: FramePipeEvent) {
        delivery.lock()
        defer { delivery.unlock() }
        if let handler { handler(event) } else { events.push(event) }
    }

    func install(_ handler: @escaping @Sendable (FramePipeEvent) -> Void) {
        delivery.lock()
        defer { delivery.unlock() }
        while let waiting = events.next(timeout: 0) { handler(waiting) }
        self.handler = handler
    }
}

extension RelayConnection: FramePipe {}
