import CLibSSH2
import Glibc
import NetworkPath
import Synchronization

/// The data phase of a connection: stdin, window changes, EOF, keepalives and output over one
/// libssh2 channel, driven by `poll` on the connection's thread. Returns when the remote sends EOF.
///
/// libssh2 rules it follows:
/// - A packet libssh2 could only partly send must be completed by calling the same function
///   again before any other call that sends (anything else gets BAD_USE). Reads send too
///   (WINDOW_ADJUST). So an operation that returns EAGAIN while the socket blocks outbound
///   becomes `halfSent`, and only it runs until it completes.
/// - Reading one stream drains the socket into libssh2's queue, so after reading both streams
///   the pump checks `read_avail` before it sleeps.
/// - Output is handed over one chunk at a time; nothing more is read until it is acknowledged,
///   so unread output waits in the server's SSH window.
///
/// Liveness as on the other roads (`PathLiveness`), keepalives as its pings: one follows a
/// keystroke within 0.25 s and one goes after `keepaliveInterval` of quiet; one out with nothing
/// at all heard for max(1 s, 4 × the smoothed round trip) ends the connection as lost (the
/// session then reattaches), as does the kernel saying the socket's address or route went away.
final class ChannelPump {
    /// The channel request used as a keepalive. Once the command runs, sshd answers any `env`
    /// request with a failure, and libssh2 consumes that reply. (libssh2's own keepalive leaves
    /// every reply queued forever, a slow leak on a session that lives for days.)
    static let keepaliveVariable = "HERDR_REMOTE_KEEPALIVE"

    enum Operation { case write, resize, endOfInput, keepalive, read }

    private let session: SSHSessionHandle
    private let channel: SSHChannelHandle
    private let socket: TCPSocket
    private let control: ConnectionControl
    private let callbacks: SSHCallbackContext
    private let configuration: SSHConnectionConfiguration
    private let endpoint: String
    private let emit: (SSHEvent) -> Void
    private let interval: Double
    private var liveness: PathLiveness
    /// The keepalive out (the ping `liveness` counts) and when it left.
    private var keepaliveID: UInt32?
    /// Set by the route monitor's thread: how the network moved away from under the socket.
    private final class NetworkChange: Sendable {
        let text = Mutex<String?>(nil)
    }
    private let networkChange = NetworkChange()

    private var input: [UInt8] = []
    private var inputOffset = 0
    private var endOfInputRequested = false
    private var endOfInputSent = false
    /// A window-change to send once the input queued before it (`afterInput` bytes of `input`)
    /// is written, so the host sees resizes and keystrokes in the order they happened.
    private var pendingResize: (cols: Int, rows: Int, afterInput: Int)?
    private var outputOutstanding = false
    private var keepaliveInFlight = false
    private var halfSent: Operation?
    private var waitingForWindow = false
    private var readWouldBlock = false
    /// Output read while completing a half-sent WINDOW_ADJUST with a chunk still outstanding
    /// (at most one read buffer); it leads the next chunk.
    private var heldStdout: [UInt8] = []
    private var heldStderr: [UInt8] = []
    private var readBuffer: [UInt8]

    init(
        session: SSHSessionHandle, channel: SSHChannelHandle, socket: TCPSocket, control: ConnectionControl,
        callbacks: SSHCallbackContext, configuration: SSHConnectionConfiguration, endpoint: String,
        emit: @escaping (SSHEvent) -> Void
    ) {
        self.session = session
        self.channel = channel
        self.socket = socket
        self.control = control
        self.callbacks = callbacks
        self.configuration = configuration
        self.endpoint = endpoint
        self.emit = emit
        interval = Double(max(configuration.keepaliveInterval, 1))
        var settings = PathLiveness.Settings()
        settings.idlePing = interval
        liveness = PathLiveness(settings: settings, now: Monotonic.now)
        readBuffer = [UInt8](repeating: 0, count: SSHConnectionWorker.readBufferSize)
    }

    /// Pumps until the remote sends EOF (then returns) or the connection fails or is cancelled.
    func run() throws(SSHConnectionStop) {
        callbacks.lastReceive = Monotonic.now
        let endpoints = SocketEndpoints(connected: socket.fd)
        let (change, wake) = (networkChange, control.wake)
        let monitor = try? RouteMonitor {
            guard let moved = endpoints?.change() else { return }
            change.text.withLock { $0 = $0 ?? moved.description }
            wake.signal()
        }
        defer { monitor?.stop() }
        while true {
            if control.isCancelled { throw .cancelled }
            if let moved = networkChange.text.withLock({ $0 }) {
                throw .failure(
                    SSHFailure(.connectionLost, "Connection to \(endpoint) lost: the network changed (\(moved))"))
            }
            takeRequests()
            waitingForWindow = false
            readWouldBlock = false

            if let operation = halfSent {
                halfSent = nil
                try perform(operation)
            }
            if halfSent == nil { try perform(.write) }
            if halfSent == nil, let resize = pendingResize, inputOffset >= resize.afterInput {
                try perform(.resize)
                if halfSent == nil { try perform(.write) }
            }
            if halfSent == nil && endOfInputRequested && !endOfInputSent && input.isEmpty { try perform(.endOfInput) }
            liveness.heard(now: callbacks.lastReceive)
            if halfSent == nil && !outputOutstanding {
                if keepaliveInFlight {
                    try perform(.keepalive)
                } else if let id = liveness.pingIfDue(now: Monotonic.now) {
                    keepaliveID = id
                    try perform(.keepalive)
                }
            }
            if halfSent == nil && !outputOutstanding {
                try perform(.read)
                if try deliverHeldOutput() { continue }
                // Reading one stream drains the socket into libssh2's queue: data for the other
                // stream may be waiting there while the socket is empty. Read again; don't sleep.
                var available: UInt = 0
                _ = libssh2_channel_window_read_ex(channel.raw, &available, nil)
                if available > 0 && halfSent == nil { continue }
                if libssh2_channel_eof(channel.raw) == 1 { return }
            }

            liveness.heard(now: callbacks.lastReceive)
            if !outputOutstanding, let silence = liveness.suspicion(now: Monotonic.now) {
                throw .failure(
                    SSHFailure(
                        .connectionLost,
                        "Connection to \(endpoint) lost: nothing heard for \(String(format: "%.1f", silence)) s with a keepalive out"
                    ))
            }
            try sleep()
        }
    }

    /// `HERDR_TRACE=1` prints each pump decision (sizes and states, never data) to stderr.
    private static let tracing = getenv("HERDR_TRACE") != nil

    private func trace(_ text: @autoclosure () -> String) {
        guard Self.tracing else { return }
        let line =
            "[pump \(UInt(bitPattern: ObjectIdentifier(self).hashValue) % 1000) \(String(format: "%.3f", Monotonic.now))] \(text())\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
    }

    private func takeRequests() {
        for request in control.takeRequests() {
            trace("request \(request)")
            switch request {
            case .send(let bytes):
                if inputOffset == input.count {
                    input = bytes
                    inputOffset = 0
                    // Everything before a pending resize was written: it now comes first.
                    if let resize = pendingResize { pendingResize = (resize.cols, resize.rows, 0) }
                } else {
                    input.append(contentsOf: bytes)
                }
            case .sendEOF:
                endOfInputRequested = true
            case .resize(let cols, let rows):
                // A newer size replaces an unsent one but keeps its place in the input.
                pendingResize = (cols, rows, pendingResize?.afterInput ?? input.count)
            case .acknowledgeOutput:
                outputOutstanding = false
                // Silence while the consumer held us back is not the peer's fault.
                liveness.heard(now: Monotonic.now)
            }
        }
    }

    /// Runs one operation; on EAGAIN with the socket blocking outbound it becomes `halfSent`.
    private func perform(_ operation: Operation) throws(SSHConnectionStop) {
        switch operation {
        case .write:
            let end = pendingResize.map { min($0.afterInput, input.count) } ?? input.count
            while inputOffset < end {
                let written = input.withUnsafeBufferPointer { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        libssh2_channel_write_ex(channel.raw, 0, chars.baseAddress! + inputOffset, end - inputOffset)
                    }
                }
                trace("write \(end - inputOffset) -> \(written)")
                if written > 0 {
                    inputOffset += written
                    liveness.sentSessionMessage()
                } else if written == Int(LIBSSH2_ERROR_EAGAIN) {
                    blocked(.write)
                    break
                } else if written == Int(LIBSSH2_ERROR_CHANNEL_EOF_SENT) || written == Int(LIBSSH2_ERROR_CHANNEL_CLOSED)
                {
                    inputOffset = input.count  // the command no longer reads; drop what is left
                } else if written < 0 {
                    throw .failure(lost())
                }
            }
            if inputOffset == input.count && !input.isEmpty {
                input.removeAll(keepingCapacity: true)
                inputOffset = 0
                if let resize = pendingResize { pendingResize = (resize.cols, resize.rows, 0) }
            }
        case .resize:
            guard let size = pendingResize else { return }
            let resized = libssh2_channel_request_pty_size_ex(channel.raw, Int32(size.cols), Int32(size.rows), 0, 0)
            trace("resize -> \(resized)")
            switch LibSSH2Status(resized) {
            case .done: pendingResize = nil
            case .wouldBlock: blocked(.resize)
            case .error: throw .failure(lost())
            }
        case .endOfInput:
            switch LibSSH2Status(libssh2_channel_send_eof(channel.raw)) {
            case .done: endOfInputSent = true
            case .wouldBlock: blocked(.endOfInput)
            case .error: endOfInputSent = true  // the peer already closed its side
            }
        case .keepalive:
            let name = Self.keepaliveVariable
            let rc = libssh2_channel_setenv_ex(channel.raw, name, UInt32(name.utf8.count), "1", 1)
            trace("keepalive -> \(rc)")
            switch rc {
            case LIBSSH2_ERROR_EAGAIN:
                keepaliveInFlight = true  // sent, or partly sent; waiting for the answer
                blocked(.keepalive)
            case 0, LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED:
                keepaliveInFlight = false  // answered: the peer is alive
                if let id = keepaliveID.take() { liveness.pong(id, now: Monotonic.now) }
            default:
                throw .failure(lost())
            }
        case .read:
            try readBurst()
        }
    }

    private func blocked(_ operation: Operation) {
        let directions = session.blockDirections
        if directions.outbound {
            halfSent = operation
        } else if operation == .write {
            waitingForWindow = true
        }
    }

    /// Reads what is there from both streams, up to one chunk, into the held buffers.
    private func readBurst() throws(SSHConnectionStop) {
        let limit = outputOutstanding ? readBuffer.count : configuration.maximumChunk
        read: for stream in [Int32(0), Int32(SSH_EXTENDED_DATA_STDERR)] {
            while heldStdout.count + heldStderr.count < limit {
                let room = min(readBuffer.count, limit - heldStdout.count - heldStderr.count)
                let n = readBuffer.withUnsafeMutableBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        libssh2_channel_read_ex(channel.raw, stream, $0.baseAddress, room)
                    }
                }
                trace("read stream \(stream) -> \(n) outbound=\(session.blockDirections.outbound)")
                if n > 0 {
                    if stream == 0 {
                        heldStdout.append(contentsOf: readBuffer[0..<n])
                    } else {
                        heldStderr.append(contentsOf: readBuffer[0..<n])
                    }
                } else if n == 0 {
                    break
                } else if n == Int(LIBSSH2_ERROR_EAGAIN) {
                    readWouldBlock = true
                    blocked(.read)
                    if halfSent == .read { break read }
                    break
                } else {
                    throw .failure(lost())
                }
            }
        }
    }

    /// Hands held output to the consumer if it may take it; true if a chunk went out.
    private func deliverHeldOutput() throws(SSHConnectionStop) -> Bool {
        guard !outputOutstanding, !heldStdout.isEmpty || !heldStderr.isEmpty else { return false }
        if let sink = configuration.outputSink {
            let delivered = sink(heldStdout, heldStderr)
            heldStdout.removeAll(keepingCapacity: true)
            heldStderr.removeAll(keepingCapacity: true)
            guard delivered else { throw .cancelled }
            // The sink returned: the consumer took it, as an acknowledgement would say.
            liveness.heard(now: Monotonic.now)
            return true
        }
        outputOutstanding = true
        emit(.output(stdout: heldStdout, stderr: heldStderr))
        heldStdout = []
        heldStderr = []
        return true
    }

    /// Sleeps in `poll` until the socket, a request, or the next keepalive deadline needs attention.
    private func sleep() throws(SSHConnectionStop) {
        let directions = session.blockDirections
        var events: Int16 = 0
        if halfSent != nil {
            events |= Int16(POLLOUT)
            if directions.inbound { events |= Int16(POLLIN) }
        }
        if readWouldBlock || waitingForWindow || (keepaliveInFlight && !outputOutstanding) { events |= Int16(POLLIN) }
        var fds = [
            pollfd(fd: socket.fd, events: events, revents: 0),
            pollfd(fd: control.wake.fd, events: Int16(POLLIN), revents: 0),
        ]
        let untilNext = liveness.nextDeadline() - Monotonic.now
        let timeout = Int32(max(0.01, min(untilNext, interval)) * 1000)
        trace(
            "poll events=\(events) timeout=\(timeout) halfSent=\(String(describing: halfSent)) outstanding=\(outputOutstanding) keepalive=\(keepaliveInFlight)"
        )
        let rc = poll(&fds, 2, timeout)
        trace("poll -> \(rc) socket=\(fds[0].revents) wake=\(fds[1].revents)")
        if rc < 0 && errno != EINTR {
            throw .failure(SSHFailure(.internalError, "poll failed: \(errnoText())"))
        }
        if fds[1].revents != 0 { control.wake.drain() }
    }

    private func lost() -> SSHFailure {
        SSHFailure(.connectionLost, "Connection to \(endpoint) lost: \(session.lastErrorMessage)")
    }
}
