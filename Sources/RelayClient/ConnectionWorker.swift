import Glibc
import NetworkPath
import Plumbing
import RelayProtocol
import WebWire

/// The connection's thread: connect, upgrade, admission, then the poll loop until the end.
/// Everything here belongs to that one thread.
final class ConnectionWorker {
    struct Setup: Sendable {
        let endpoint: RelayEndpoint
        let room: String
        let role: RelayRole
        let credential: RelayCredential
        let options: RelayConnection.Options
    }

    private let setup: Setup
    private let shared: ConnectionShared
    private let wakeFD: Int32
    private var transport: RelayTransport?
    private var decoder = WebSocketMessageReader(role: .client, maximumMessageSize: RelayLimits.frameSize)
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    /// The socket once admitted, shared with senders.
    private let io: ConnectionIO

    /// Payload bytes taken from the shared queue per turn, so writing and reading interleave.
    static let writeBatch = 256 * 1024

    init(setup: Setup, shared: ConnectionShared) {
        self.setup = setup
        self.shared = shared
        self.wakeFD = shared.wakeDescriptor
        self.io = shared.io
    }

    deinit { readBuffer.deallocate() }

    func run() {
        let token: [UInt8]?
        do {
            token = try establish()
        } catch {
            shared.setAdmission(.failure(error))
            transport = nil
            shared.finish(error.kind == .cancelled ? .closedLocally : .failed(error))
            return
        }
        if let transport { io.attach(transport) }
        shared.setAdmission(.success(token))
        let end = loop()
        io.detach()
        transport = nil
        shared.finish(end)
    }

    // MARK: - Establishing

    private func establish() throws(ConnectionError) -> [UInt8]? {
        let shared = self.shared
        let transport = try RelayTransport.open(
            setup.endpoint, timeout: setup.options.connectTimeout, wakeFD: wakeFD,
            isCancelled: { shared.isCloseRequested }, connecting: { shared.endpoints = $0 })
        self.transport = transport
        shared.endpoints = SocketEndpoints(connected: transport.fd)
        let deadline = Deadline(seconds: setup.options.admissionTimeout)
        let key = WebSocketHandshake.makeKey()
        let headers =
            [("User-Agent", RelayLimits.userAgent), (RelayLimits.roomHeader, setup.room)] + setup.options.extraHeaders
        guard
            headers.allSatisfy({
                !$0.0.utf8.contains(where: { $0 < 0x20 }) && !$0.1.utf8.contains(where: { $0 < 0x20 })
            })
        else { throw ConnectionError(.protocolViolation, "an upgrade header may not contain control characters") }
        let request = WebSocketHandshake.clientRequest(
            host: setup.endpoint.authority, path: "/", key: key, extraHeaders: headers)
        try transport.writeAll(request, deadline: deadline, what: "the WebSocket upgrade")
        try readUpgradeResponse(key: key, deadline: deadline)

        try sendText(RelayHello(role: setup.role, nonDisplacing: setup.options.nonDisplacing).json, deadline: deadline)
        let challengeText = try readAdmissionText(deadline: deadline, what: "the challenge")
        guard let challenge = RelayChallenge.parse(challengeText) else {
            throw ConnectionError(
                .protocolViolation, "the relay's challenge is not {\"nonce\":<32 bytes>}: \(challengeText.prefix(200))")
        }
        let proof: RelayProof
        switch setup.credential {
        case .none: proof = .empty
        case .ticket(let ticket): proof = .ticket(ticket)
        case .joinKey(let key):
            do {
                proof = .signature(
                    try key.signJoin(
                        role: setup.role, nonce: challenge.nonce, room: setup.room, origin: setup.endpoint.origin))
            } catch {
                throw ConnectionError(.protocolViolation, "signing the join failed: \(error)")
            }
        }
        try sendText(proof.json, deadline: deadline)
        let resultText = try readAdmissionText(deadline: deadline, what: "the admission result")
        switch RelayResult.parse(resultText) {
        case .admitted(let token)?:
            if setup.role == .device, let token, token.count != RelayLimits.tokenSize {
                throw ConnectionError(.protocolViolation, "the registration token is \(token.count) bytes, not 24")
            }
            return token
        case .refused(let reason)?:
            // The close that follows carries the same reason; wait a little for it.
            let close = awaitClose(deadline: Deadline(seconds: 1).earlier(deadline))
            let closeText = close.map { " (close \($0))" } ?? ""
            throw ConnectionError(
                .refused, "relay refused admission as \(setup.role.rawValue): \(reason)\(closeText)",
                serverError: reason, close: close)
        case nil:
            throw ConnectionError(
                .protocolViolation, "the relay's admission result is not {\"ok\":…}: \(resultText.prefix(200))")
        }
    }

    private func readUpgradeResponse(key: String, deadline: Deadline) throws(ConnectionError) {
        guard let transport else { return }
        var parser = HTTPResponseHeadParser()
        while true {
            let count = try transport.readSome(into: readBuffer, deadline: deadline, what: "the WebSocket upgrade")
            guard count > 0 else {
                throw ConnectionError(.connectionLost, "the relay closed the connection during the WebSocket upgrade")
            }
            parser.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
            let parsed: (head: HTTPResponseHead, leftover: [UInt8])?
            do {
                parsed = try parser.next()
            } catch {
                throw ConnectionError(.protocolViolation, "the relay's upgrade answer is not HTTP: \(error.reason)")
            }
            guard let (head, leftover) = parsed else { continue }
            if head.status != 101 {
                // An HTTP refusal ({"ok":false,"error":X}); read its body for the reason.
                var body = leftover
                let length = head.headers.first { $0.name.lowercased() == "content-length" }.flatMap { Int($0.value) }
                while body.count < min(length ?? 4096, 4096) {
                    let more =
                        (try? transport.readSome(
                            into: readBuffer, deadline: Deadline(seconds: 1).earlier(deadline), what: "the refusal"))
                        ?? 0
                    if more == 0 { break }
                    body.append(contentsOf: UnsafeRawBufferPointer(rebasing: readBuffer[0..<more]))
                }
                let response = RelayHTTPResponse(status: head.status, reason: head.reason, body: body)
                throw ConnectionError(
                    .httpStatus, "relay refused the WebSocket upgrade: \(response.summary)", status: head.status,
                    serverError: response.errorText)
            }
            if case .failure(let error) = WebSocketHandshake.validateResponse(head, key: key) {
                throw ConnectionError(
                    .protocolViolation, "bad WebSocket upgrade answer: \(error.reason)", status: head.status)
            }
            decoder.maximumMessageSize = RelayLimits.frameSize
            leftover.withUnsafeBytes { decoder.append($0) }
            return
        }
    }

    private func sendText(_ text: String, deadline: Deadline) throws(ConnectionError) {
        try transport?.writeAll(
            WebSocketFrameEncoder.text(text, maskKey: Self.makeMaskKey()), deadline: deadline, what: "admission")
    }

    /// The next text message during admission; answers pings, fails on a close or binary.
    private func readAdmissionText(deadline: Deadline, what: String) throws(ConnectionError) -> String {
        while true {
            switch try nextMessage(deadline: deadline, what: what) {
            case .text(let text): return text
            case .binary: throw ConnectionError(.protocolViolation, "the relay sent a binary frame instead of \(what)")
            case .ping(let payload):
                try transport?.writeAll(
                    WebSocketFrameEncoder.frame(.pong, payload, maskKey: Self.makeMaskKey()), deadline: deadline,
                    what: "admission")
            case .pong: continue
            case .close(let code, let reason):
                let close = RelayClose(code: code ?? 1005, reason: reason)
                try? transport?.writeAll(
                    WebSocketFrameEncoder.closeFrame(code: code ?? 1000, reason: "", maskKey: Self.makeMaskKey()),
                    deadline: Deadline(seconds: 0.2), what: "closing")
                throw ConnectionError(.closed, "relay closed the connection before \(what): \(close)", close: close)
            }
        }
    }

    private func nextMessage(deadline: Deadline, what: String) throws(ConnectionError) -> WebSocketMessage {
        guard let transport else { throw ConnectionError(.connectionLost, "no connection") }
        while true {
            do {
                if let message = try decoder.next() { return message }
            } catch {
                throw ConnectionError(.protocolViolation, "the relay broke the WebSocket protocol: \(error.reason)")
            }
            let count = try transport.readSome(into: readBuffer, deadline: deadline, what: what)
            guard count > 0 else {
                throw ConnectionError(.connectionLost, "the relay closed the connection before \(what)")
            }
            decoder.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
        }
    }

    /// After a refusal: the relay's close frame, if it comes before `deadline`.
    private func awaitClose(deadline: Deadline) -> RelayClose? {
        while true {
            guard let message = try? nextMessage(deadline: deadline, what: "the close") else { return nil }
            if case .close(let code, let reason) = message {
                try? transport?.writeAll(
                    WebSocketFrameEncoder.closeFrame(code: code ?? 1000, reason: "", maskKey: Self.makeMaskKey()),
                    deadline: Deadline(seconds: 0.2), what: "closing")
                return RelayClose(code: code ?? 1005, reason: reason)
            }
        }
    }

    // MARK: - Admitted

    private func loop() -> FramePipeEnd {
        guard let transport else { return .failed(ConnectionError(.connectionLost, "no connection")) }
        let options = setup.options
        var nextPing = MonotonicClock.now + options.pingInterval
        var pongDeadline: Double?
        var closeDeadline: Double?
        var readPaused = false
        // Frames that arrived with the admission result.
        if let end = processDecoded() { return end }
        while true {
            if shared.isAbandonRequested { return .closedLocally }
            // Outgoing: new frames once the buffer has drained, and the close once asked.
            let closing = io.takeQueued(from: shared, budget: Self.writeBatch) {
                WebSocketFrameEncoder.closeFrame(code: 1000, reason: "", maskKey: Self.makeMaskKey())
            }
            if closing { closeDeadline = MonotonicClock.now + options.closeTimeout }
            if let end = flush() { return end }

            // Timers.
            let now = MonotonicClock.now
            let closeSent = io.isCloseSent
            if let closeDeadline, now >= closeDeadline { return .closedLocally }
            if !closeSent && !readPaused {
                if let deadline = pongDeadline, now >= deadline {
                    return .failed(
                        ConnectionError(
                            .keepaliveTimeout,
                            "the relay did not answer a ping within \(Self.seconds(options.pongTimeout))"))
                }
                if pongDeadline == nil && now >= nextPing {
                    io.append(WebSocketFrameEncoder.frame(.ping, [], maskKey: Self.makeMaskKey()))
                    pongDeadline = now + options.pongTimeout
                    nextPing = now + options.pingInterval
                    continue
                }
            }

            // Flow control: stop reading while the consumer is behind (not while closing).
            let wasPaused = readPaused
            let waiting = shared.events.weight
            readPaused =
                !closeSent
                && (readPaused ? waiting > options.maximumIncomingBytes / 2 : waiting > options.maximumIncomingBytes)
            if readPaused != wasPaused {
                shared.setReadPaused(readPaused)
                // Keepalive restarts from now when reading resumes.
                if !readPaused {
                    pongDeadline = nil
                    nextPing = MonotonicClock.now + options.pingInterval
                }
                if readPaused { continue }  // re-check the weight after publishing the flag
            }

            var wake = Deadline.never
            if let closeDeadline { wake = wake.earlier(Deadline(at: closeDeadline)) }
            if !closeSent && !readPaused {
                wake = wake.earlier(Deadline(at: pongDeadline ?? nextPing))
            }
            let readiness = io.readiness
            var events: Int16 = 0
            if !readPaused || readiness.writeWantsReadable { events |= Int16(POLLIN) }
            if (readiness.pendingWrite && !readiness.writeWantsReadable) || readiness.readWantsWritable {
                events |= Int16(POLLOUT)
            }
            var fds = [
                pollfd(fd: transport.fd, events: events, revents: 0),
                pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&fds, 2, wake.pollMilliseconds(cap: 1000))
            if ready < 0 {
                if errno == EINTR { continue }
                return .failed(ConnectionError(.connectionLost, "poll failed: \(RelayTransport.lastError)"))
            }
            if fds[1].revents != 0 { RelayTransport.drainWake(wakeFD) }
            let socketEvents = fds[0].revents
            io.socketBecame(
                readable: socketEvents & Int16(POLLIN) != 0, writable: socketEvents & Int16(POLLOUT) != 0)
            let canRead = !readPaused || closeSent
            if canRead && io.mayRead
                && socketEvents & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0
            {
                if let end = readAvailable(&pongDeadline) { return end }
            }
        }
    }

    /// Reads what the socket has (a bounded amount per turn) and handles every whole message.
    private func readAvailable(_ pongDeadline: inout Double?) -> FramePipeEnd? {
        var rounds = 0
        repeat {
            rounds += 1
            switch io.read(into: readBuffer) {
            case .bytes(let count):
                decoder.append(UnsafeRawBufferPointer(rebasing: readBuffer[0..<count]))
                if let end = processDecoded(&pongDeadline) { return end }
            case .wantRead, .wantWrite:
                return nil
            case .closed:
                if io.isCloseSent { return .closedLocally }
                return .failed(
                    ConnectionError(.connectionLost, "the relay closed the connection without a WebSocket close"))
            case .failed(let error):
                if io.isCloseSent { return .closedLocally }
                return .failed(error)
            }
        } while rounds < 16 && (io.hasBufferedInput || rounds < 4)
        return nil
    }

    private func processDecoded() -> FramePipeEnd? {
        var ignored: Double?
        return processDecoded(&ignored)
    }

    private func processDecoded(_ pongDeadline: inout Double?) -> FramePipeEnd? {
        while true {
            let message: WebSocketMessage?
            do {
                message = try decoder.next()
            } catch {
                io.append(
                    WebSocketFrameEncoder.closeFrame(
                        code: error.closeCode, reason: error.reason, maskKey: Self.makeMaskKey()))
                _ = flush()
                return .failed(
                    ConnectionError(.protocolViolation, "the relay broke the WebSocket protocol: \(error.reason)"))
            }
            guard let message else { return nil }
            switch message {
            case .binary(let payload):
                shared.deliver(.message(payload))
            case .text:
                continue  // nothing but binary is spliced after admission
            case .ping(let payload):
                io.appendUnlessClosing(WebSocketFrameEncoder.frame(.pong, payload, maskKey: Self.makeMaskKey()))
            case .pong:
                pongDeadline = nil
            case .close(let code, let reason):
                if io.isCloseSent { return .closedLocally }
                io.append(
                    WebSocketFrameEncoder.closeFrame(code: code ?? 1000, reason: "", maskKey: Self.makeMaskKey()),
                    closing: true)
                _ = flush()
                io.shutdownWrite()
                return .closedByRelay(RelayClose(code: code ?? 1005, reason: reason))
            }
        }
    }

    // MARK: - Writing

    /// Writes as much as the socket takes now; an end if the socket failed.
    private func flush() -> FramePipeEnd? {
        switch io.flush() {
        case .closed?:
            if io.isCloseSent { return .closedLocally }
            return .failed(ConnectionError(.connectionLost, "the relay closed the connection"))
        case .failed(let error)?:
            if io.isCloseSent { return .closedLocally }
            return .failed(error)
        default:
            return nil
        }
    }

    // MARK: - Helpers

    /// A fresh random mask key for each frame (RFC 6455 §5.3), from the system's CSPRNG.
    static func makeMaskKey() -> UInt32 {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }

    /// The payload length of a masked frame this side encoded.
    static func payloadCount(ofFrame frame: [UInt8]) -> Int {
        guard frame.count >= 2 else { return 0 }
        let masked = frame[1] & 0x80 != 0 ? 4 : 0
        switch frame[1] & 0x7F {
        case 126: return frame.count - 4 - masked
        case 127: return frame.count - 10 - masked
        default: return frame.count - 2 - masked
        }
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
