import CSystem
import Foundation
import Glibc
import NetworkPath
import PeerGate
import PeerGateListener
import Plumbing
import Synchronization

/// One home-road connection: a TCP socket carrying Noise messages, each after its 16-bit
/// big-endian length (`HomeFrameDecoder`), on a thread of its own that polls the socket.
///
/// Sending writes straight to the socket when nothing waits before the frame (a keystroke costs
/// no thread wake-up) and queues the rest for the thread; the queue is bounded
/// (`maximumQueuedBytes`, `backpressure` beyond). Receiving: events in order through `receive`
/// or, once `deliver` is set, on the connection's thread; while more than
/// `maximumIncomingBytes` wait unconsumed the thread stops reading, so a stalled reader holds
/// the writer back through TCP. A home link that dies is noticed by the kernel: keepalive probes
/// after `keepaliveIdle` seconds of silence, and `TCP_USER_TIMEOUT` for data left unacknowledged.
public final class HomeConnection: FramePipe {
    public struct Options: Sendable {
        public var maximumQueuedBytes = 4 * 1024 * 1024
        public var maximumIncomingBytes = 4 * 1024 * 1024
        /// Seconds of silence before the first keepalive probe; probes then go every second and
        /// three unanswered end the connection.
        public var keepaliveIdle: Int32 = 2
        /// Milliseconds sent data may stay unacknowledged before the connection ends.
        public var userTimeout: UInt32 = 5000
        /// Seconds `close()` lets queued frames drain before the socket goes.
        public var closeTimeout: Double = 1
        public init() {}
    }

    /// The peer's address in canonical text (a mapped IPv4 address as IPv4, the scope kept).
    public let peer: String
    public let options: Options
    private let fd: Int32
    private let wakeFD: Int32
    private let state: Mutex<State>
    private let incoming: EventQueue<FramePipeEvent>
    private let ended = DispatchSemaphore(value: 0)

    private struct State {
        var pending: [UInt8] = []
        var pendingOffset = 0
        var closing = false
        /// Closing without waiting for what is queued to go (`abandon`).
        var abandoned = false
        var end: FramePipeEnd?
        var handler: EventHandler?
        /// The connection's thread is done: whoever sets the handler now drains the queue.
        var threadDone = false
        /// A handler was set: what the queue holds goes to it first (once).
        var drainPending = false
        var pendingCount: Int { pending.count - pendingOffset }
    }

    /// Takes a connected socket (it is made non-blocking; this object closes it) and starts the
    /// connection's thread.
    public init(socket fd: Int32, options: Options = Options()) throws(ConnectionError) {
        let wakeFD = csystem_eventfd_nonblocking()
        guard wakeFD >= 0 else {
            Glibc.close(fd)
            throw ConnectionError(.connectionLost, "eventfd failed: \(String(cString: strerror(errno)))")
        }
        self.fd = fd
        self.wakeFD = wakeFD
        self.options = options
        // As PeerGate judges it: an IPv4 peer on a dual-stack socket shows as IPv4, not ::ffff:….
        let raw = SocketAddress.peer(of: fd)?.numericHost ?? "?"
        self.peer = PeerClassification(raw).address?.description ?? PeerDecision.displayText(raw)
        self.socketEndpoints = SocketEndpoints(connected: fd)
        self.state = Mutex(State())
        let wake = wakeFD
        self.incoming = EventQueue(
            weight: { event in if case .message(let bytes) = event { bytes.count } else { 0 } },
            onTake: { _ in
                var one: UInt64 = 1
                _ = write(wake, &one, 8)
            })
        Self.configure(fd, options)
        let thread = Thread { [self] in run() }
        thread.name = "home connection"
        thread.start()
    }

    deinit {
        Glibc.close(wakeFD)
    }

    /// Connects to `address` within `timeout` seconds, on the calling thread (a thread of its
    /// own, never Swift's pool). `isCancelled` is asked every 50 ms.
    public static func connect(
        to address: HomeAddress, timeout: Double, options: Options = Options(),
        isCancelled: @Sendable () -> Bool = { false }
    ) throws(ConnectionError) -> HomeConnection {
        let target = SocketAddress(ip: address.address, port: address.port)
        let fd = socket(
            target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0
        )
        guard fd >= 0 else { throw ConnectionError(.unreachable, "socket(): \(String(cString: strerror(errno)))") }
        var owned: Int32? = fd
        defer { if let owned { Glibc.close(owned) } }
        if target.withSockaddr({ Glibc.connect(fd, $0, $1) }) != 0 {
            guard errno == EINPROGRESS else {
                throw ConnectionError(
                    .unreachable, "cannot connect to \(address): \(String(cString: strerror(errno)))")
            }
            if let stranded = target.withSockaddr({ pointer, _ in StrandedConnect.reason(fd: fd, toward: pointer) }) {
                throw ConnectionError(.unreachable, "cannot connect to \(address): \(stranded)")
            }
            let deadline = MonotonicClock.now + timeout
            while true {
                if isCancelled() { throw ConnectionError(.cancelled, "connecting to \(address) was abandoned") }
                let left = deadline - MonotonicClock.now
                guard left > 0 else { throw ConnectionError(.unreachable, "\(address) did not answer in time") }
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                let rc = poll(&poller, 1, Int32(min(50, max(1, left * 1000))))
                if rc < 0 && errno != EINTR {
                    throw ConnectionError(.unreachable, "poll: \(String(cString: strerror(errno)))")
                }
                if rc > 0 { break }
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error == 0 else {
                throw ConnectionError(
                    .unreachable, "cannot connect to \(address): \(String(cString: strerror(error)))")
            }
        }
        owned = nil
        return try HomeConnection(socket: fd, options: options)
    }

    private static func configure(_ fd: Int32, _ options: Options) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | csystem_o_nonblock()) }
        var one: Int32 = 1
        var idle = options.keepaliveIdle
        var interval: Int32 = 1
        var count: Int32 = 3
        var userTimeout = options.userTimeout
        let intSize = socklen_t(MemoryLayout<Int32>.size)
        // Best effort: a socket without them still works, it only notices a dead link later.
        _ = csystem_tcp_interactive(fd)
        _ = setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, intSize)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, &idle, intSize)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, &interval, intSize)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, &count, intSize)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, &userTimeout, socklen_t(MemoryLayout<UInt32>.size))
    }

    // MARK: - FramePipe

    public func send(_ frame: [UInt8]) throws(ConnectionError) {
        guard let prefix = HomeFrameDecoder.prefix(for: frame.count) else {
            throw ConnectionError(
                .frameTooLarge, "a home frame carries 1 to \(HomeFrameDecoder.maximumFrame) bytes, not \(frame.count)")
        }
        let wake = try state.withLock { state throws(ConnectionError) -> Bool in
            guard !state.closing, state.end == nil else {
                throw ConnectionError(.closed, "the home connection is closed")
            }
            if state.pendingCount > 0 {
                guard state.pendingCount <= options.maximumQueuedBytes else {
                    throw ConnectionError(.backpressure, "the home connection's outgoing queue is full")
                }
                state.pending.append(prefix.high)
                state.pending.append(prefix.low)
                state.pending += frame
                return false
            }
            let taken = max(0, Self.send(prefix, frame, on: fd))
            guard taken < 2 + frame.count else { return false }
            state.pending.removeAll(keepingCapacity: true)
            state.pendingOffset = 0
            if taken < 2 { state.pending += [prefix.high, prefix.low][taken...] }
            state.pending += frame[max(0, taken - 2)...]
            return true
        }
        if wake { self.wake() }
    }

    /// The prefix and the frame in one `sendmsg`, neither copied; the bytes taken, or -1.
    private static func send(_ prefix: (high: UInt8, low: UInt8), _ frame: [UInt8], on fd: Int32) -> Int {
        var prefix = prefix
        return withUnsafeMutableBytes(of: &prefix) { head in
            frame.withUnsafeBytes { body in
                var vectors = (
                    iovec(iov_base: head.baseAddress, iov_len: 2),
                    iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count)
                )
                return withUnsafeMutableBytes(of: &vectors) { vectors in
                    var message = msghdr()
                    message.msg_iov = vectors.baseAddress?.assumingMemoryBound(to: iovec.self)
                    message.msg_iovlen = 2
                    return sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                }
            }
        }
    }

    public func receive(timeout: Double?) -> FramePipeEvent? { incoming.next(timeout: timeout) }

    /// Every event from now on, and those already waiting first, to `handler` on the connection's
    /// thread (on the caller's, when the connection had already ended).
    public func deliver(to handler: @escaping @Sendable (FramePipeEvent) -> Void) {
        // Exactly one thread drains what waits: this one once the connection's thread is done.
        let ended = state.withLock { state in
            state.handler = EventHandler(handler)
            if !state.threadDone { state.drainPending = true }
            return state.threadDone
        }
        if ended {
            while let event = incoming.next(timeout: 0) { handler(event) }
        } else {
            wake()  // the thread hands over what already waits
        }
    }

    public var queuedByteCount: Int { state.withLock { $0.pendingCount } }

    public let socketEndpoints: SocketEndpoints?

    public func close() {
        state.withLock { $0.closing = true }
        wake()
    }

    /// Ends the connection at once, what is queued dropped (`FramePipe.abandon`).
    public func abandon() {
        state.withLock {
            $0.closing = true
            $0.abandoned = true
        }
        wake()
    }

    @discardableResult
    public func waitUntilEnded(timeout: Double?) -> FramePipeEnd? {
        if let end = state.withLock({ $0.end }) { return end }
        let result =
            timeout.map { ended.wait(timeout: .now() + $0) }
            ?? {
                ended.wait()
                return .success
            }()
        if result == .success { ended.signal() }
        return state.withLock { $0.end }
    }

    /// How the connection ended, or nil while open.
    public var end: FramePipeEnd? { state.withLock { $0.end } }

    // MARK: - The connection's thread

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    private func run() {
        var decoder = HomeFrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 65536)
        // Made once: an array built per wake-up is an allocation per keystroke.
        var fds = [pollfd](repeating: pollfd(fd: -1, events: 0, revents: 0), count: 2)
        var closeDeadline: Double?
        let end: FramePipeEnd = {
            while true {
                handOver()
                let (pending, closing, delivering, abandoned) = state.withLock {
                    ($0.pendingCount > 0, $0.closing, $0.handler != nil, $0.abandoned)
                }
                if abandoned { return .closedLocally }
                if closing {
                    let deadline = closeDeadline ?? (MonotonicClock.now + options.closeTimeout)
                    closeDeadline = deadline
                    if !pending || MonotonicClock.now >= deadline { return .closedLocally }
                }
                // A handler takes each frame as it comes (and blocks us if it must); a queue is bounded.
                let reading = !closing && (delivering || incoming.weight <= options.maximumIncomingBytes)
                fds[0] = pollfd(
                    fd: fd, events: Int16(reading ? POLLIN : 0) | Int16(pending ? POLLOUT : 0), revents: 0)
                fds[1] = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
                let rc = poll(&fds, 2, closing ? 50 : -1)
                if rc < 0 {
                    if errno == EINTR { continue }
                    return .failed(ConnectionError(.connectionLost, "poll: \(String(cString: strerror(errno)))"))
                }
                if fds[1].revents != 0 {
                    var value: UInt64 = 0
                    _ = read(wakeFD, &value, 8)
                }
                if fds[0].revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0, pending, let failure = flush() {
                    return .failed(failure)
                }
                if reading, fds[0].revents & Int16(POLLIN | POLLERR | POLLHUP) != 0 {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if count == 0 {
                        return .failed(ConnectionError(.connectionLost, "the peer closed the home connection"))
                    }
                    if count < 0 {
                        if errno == EAGAIN || errno == EINTR { continue }
                        return .failed(
                            ConnectionError(
                                .connectionLost, "the home connection broke: \(String(cString: strerror(errno)))"))
                    }
                    let framing = buffer.withUnsafeBytes { received in
                        Result { () throws(HomeFrameDecoder.Malformed) in
                            try decoder.append(UnsafeRawBufferPointer(rebasing: received[0..<count])) {
                                emit(.message($0))
                            }
                        }
                    }
                    if case .failure(let error) = framing {
                        return .failed(ConnectionError(.protocolViolation, "the peer broke home framing: \(error)"))
                    }
                }
            }
        }()
        _ = shutdown(fd, Int32(SHUT_RDWR))
        Glibc.close(fd)
        state.withLock {
            $0.end = end
            $0.closing = true
        }
        emit(.ended(end))
        incoming.finish()
        state.withLock { $0.threadDone = true }
        handOver()
        ended.signal()
    }

    /// Writes what waits; the failure, if the socket failed.
    private func flush() -> ConnectionError? {
        state.withLock { state in
            while state.pendingCount > 0 {
                let written = state.pending.withUnsafeBytes { all in
                    Glibc.send(fd, all.baseAddress! + state.pendingOffset, state.pendingCount, Int32(MSG_NOSIGNAL))
                }
                if written < 0 {
                    if errno == EAGAIN || errno == EINTR { return nil }
                    return ConnectionError(
                        .connectionLost, "the home connection broke: \(String(cString: strerror(errno)))")
                }
                state.pendingOffset += written
            }
            state.pending.removeAll(keepingCapacity: state.pending.capacity <= 512 * 1024)
            state.pendingOffset = 0
            return nil
        }
    }

    /// Events queued before `deliver` was set go to the handler first, on this thread (once).
    private func handOver() {
        let handler = state.withLock { state -> EventHandler? in
            guard state.drainPending, let handler = state.handler else { return nil }
            state.drainPending = false
            return handler
        }
        guard let handler else { return }
        while let event = incoming.next(timeout: 0) { handler.deliver(event) }
    }

    private func emit(_ event: FramePipeEvent) {
        let (handler, drain) = state.withLock { state -> (EventHandler?, Bool) in
            let drain = state.drainPending && state.handler != nil
            if drain { state.drainPending = false }
            return (state.handler, drain)
        }
        guard let handler else { return incoming.push(event) }
        if drain { while let queued = incoming.next(timeout: 0) { handler.deliver(queued) } }
        handler.deliver(event)
    }

    /// The handler in a box: a closure passed out of the lock's generic closure would be wrapped
    /// in a reabstraction thunk, an allocation per frame.
    private final class EventHandler: Sendable {
        let deliver: @Sendable (FramePipeEvent) -> Void
        init(_ deliver: @escaping @Sendable (FramePipeEvent) -> Void) { self.deliver = deliver }
    }
}
