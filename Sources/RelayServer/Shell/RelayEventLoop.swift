import CSystem
import Foundation
import Glibc
import PeerGate
import PeerGateListener
import RelayProtocol
import Synchronization
import TLS
import WebWire

/// Set once to stop the loop; read by the loop every turn.
final class RelayStopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    /// Sets the flag; true if this call set it.
    func set() -> Bool { !value.exchange(true, ordering: .acquiringAndReleasing) }
}

/// Sockets handed from the accept thread to the loop thread.
final class RelayInbox: Sendable {
    struct Arrival: Sendable {
        let fd: Int32
        let peer: String
        let peerIsLoopback: Bool
    }

    private let arrivals = Mutex<[Arrival]>([])
    let wakeFD: Int32

    init() throws(RelayServerError) {
        wakeFD = csystem_eventfd_nonblocking()
        guard wakeFD >= 0 else { throw RelayServerError.posix("eventfd") }
    }

    deinit {
        for arrival in arrivals.withLock({ $0 }) { Glibc.close(arrival.fd) }
        Glibc.close(wakeFD)
    }

    func post(_ arrival: Arrival) {
        arrivals.withLock { $0.append(arrival) }
        wake()
    }

    func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    func take() -> [Arrival] {
        var counter: UInt64 = 0
        _ = read(wakeFD, &counter, 8)
        return arrivals.withLock { list in
            defer { list.removeAll() }
            return list
        }
    }
}

/// The relay's I/O shell: one thread, one epoll set, every socket non-blocking. It parses HTTP and
/// WebSocket framing, feeds `RelayCore` and carries out its actions; spliced payloads go from one
/// socket's decoder straight to the peer's output without passing through the core.
final class RelayEventLoop {
    struct Settings {
        var tls: TLSContext?
        var clientAddress: ClientAddressSource
        var status: @Sendable () -> PeerGateStatus
    }

    /// Bytes queued to one socket beyond which the sockets feeding it stop reading.
    static let highWater = 4 * 1024 * 1024
    static let lowWater = 1024 * 1024
    /// Sockets one peer address may hold before they are WebSockets (TLS handshake, HTTP request,
    /// closing): slow or idle connections cannot pile up.
    static let preliminaryPerAddress = 64
    /// Time for a TLS handshake plus a complete HTTP request, and for a closing socket's EOF.
    static let requestTimeout: Int64 = 10_000
    /// Requests one kept-alive connection may carry (the web client's files): then it closes.
    static let requestsPerConnection = 1000
    static let closingTimeout: Int64 = 2_000
    /// One read takes up to this much: large reads mean fewer wake-ups per spliced megabyte.
    static let readBufferSize = 1024 * 1024
    /// A drained output buffer keeps its memory up to this size for the next burst.
    static let retainedOutputCapacity = 256 * 1024

    let core: RelayCore
    let settings: Settings
    let inbox: RelayInbox
    let stopping: RelayStopFlag
    private let epoll: Epoll
    private let clock = SystemRelayClock()
    private var sockets: [Int32: RelaySocket] = [:]
    private var byConnection: [ConnectionID: RelaySocket] = [:]
    /// Sockets with a deadline (not yet WebSocket, or closing).
    private var timed: Set<Int32> = []
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferSize, alignment: 16)
    private var lastTick: Int64 = 0
    private var preliminary: [String: Int] = [:]

    init(core: RelayCore, settings: Settings, inbox: RelayInbox, stopping: RelayStopFlag) throws(RelayServerError) {
        self.core = core
        self.settings = settings
        self.inbox = inbox
        self.stopping = stopping
        self.epoll = try Epoll()
        try epoll.add(inbox.wakeFD, events: Epoll.readable)
    }

    deinit { readBuffer.deallocate() }

    /// Serves until `stopping` is set, then shuts down gracefully (1001 to every WebSocket, up to
    /// a second to flush) and closes everything.
    func run() {
        while !stopping.isSet {
            let timeout = Int32(core.millisecondsUntilTick)
            epoll.wait(timeout: max(timeout, 1)) { fd, events in handle(fd, events) }
            let now = clock.milliseconds
            if now - lastTick >= 100 {
                lastTick = now
                core.tick()
                performActions()
                expireDeadlines(now: now)
            }
        }
        drainAndClose()
    }

    private func handle(_ fd: Int32, _ events: UInt32) {
        if fd == inbox.wakeFD {
            for arrival in inbox.take() { adopt(arrival) }
            return
        }
        guard let socket = sockets[fd] else { return }
        if events & (Epoll.writable | Epoll.error | Epoll.hangUp) != 0 {
            writable(socket)
            guard sockets[fd] === socket else { return }
        }
        if events & (Epoll.readable | Epoll.error | Epoll.hangUp) != 0 {
            readable(socket)
        }
    }

    // MARK: - Accepting

    private func adopt(_ arrival: RelayInbox.Arrival) {
        let fd = arrival.fd
        // Behind a proxy every peer is the proxy: its clients are counted after the head.
        let counted = !settings.clientAddress.isBehindProxy
        if counted && preliminary[arrival.peer, default: 0] >= Self.preliminaryPerAddress {
            var abortive = linger(l_onoff: 1, l_linger: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &abortive, socklen_t(MemoryLayout<linger>.size))
            Glibc.close(fd)
            return
        }
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0, csystem_tcp_interactive(fd) == 0 else {
            Glibc.close(fd)
            return
        }
        var tls: TLSConnection?
        if let context = settings.tls {
            guard let connection = try? TLSConnection(context: context, fd: fd, role: .server) else {
                Glibc.close(fd)
                return
            }
            tls = connection
        }
        let socket = RelaySocket(
            fd: fd, address: arrival.peer, peerIsLoopback: arrival.peerIsLoopback, tls: tls,
            deadline: clock.milliseconds + Self.requestTimeout, events: Epoll.readable)
        do {
            try epoll.add(fd, events: Epoll.readable)
        } catch {
            Glibc.close(fd)
            return
        }
        sockets[fd] = socket
        timed.insert(fd)
        if counted {
            socket.countedAsPreliminary = true
            preliminary[arrival.peer, default: 0] += 1
        }
    }

    /// The socket no longer counts as preliminary (it became a WebSocket, or it is gone).
    private func uncountPreliminary(_ socket: RelaySocket) {
        guard socket.countedAsPreliminary else { return }
        socket.countedAsPreliminary = false
        let left = preliminary[socket.tcpPeer, default: 1] - 1
        preliminary[socket.tcpPeer] = left > 0 ? left : nil
    }

    // MARK: - Reading

    private func readable(_ socket: RelaySocket) {
        if socket.stage == .tlsHandshake {
            continueHandshake(socket)
            guard socket.stage == .http else { return }
        }
        if socket.tlsReadWantsWritable { return }
        // Level-triggered: one read per wake-up keeps sockets fair; epoll reports the rest.
        let result = receive(socket)
        switch result {
        case .bytes(let count):
            consume(socket, UnsafeMutableRawBufferPointer(rebasing: readBuffer[0..<count]))
            // TLS may hold decrypted bytes the kernel no longer signals.
            if let tls = socket.tls, sockets[socket.fd] === socket, !socket.readPaused, tls.hasBufferedPlaintext {
                readable(socket)
            }
        case .wantRead:
            break
        case .wantWrite:
            socket.tlsReadWantsWritable = true
            updateInterest(socket)
        case .closed:
            destroy(socket)  // the peer ended the stream
        case .failed:
            destroy(socket)
        }
    }

    private func receive(_ socket: RelaySocket) -> TLSIOResult {
        if let tls = socket.tls { return tls.read(into: readBuffer) }
        let count = recv(socket.fd, readBuffer.baseAddress, readBuffer.count, 0)
        if count > 0 { return .bytes(count) }
        if count == 0 { return .closed }
        switch errno {
        case EAGAIN, EINTR: return .wantRead
        default: return .failed(TLSError(.io, "recv failed", errno: errno))
        }
    }

    private func continueHandshake(_ socket: RelaySocket) {
        guard let tls = socket.tls else { return }
        switch tls.handshake() {
        case .done:
            socket.stage = .http
            socket.tlsHandshakeWantsWritable = false
            updateInterest(socket)
        case .wantRead:
            socket.tlsHandshakeWantsWritable = false
            updateInterest(socket)
        case .wantWrite:
            socket.tlsHandshakeWantsWritable = true
            updateInterest(socket)
        case .failed:
            destroy(socket)
        }
    }

    private func consume(_ socket: RelaySocket, _ bytes: UnsafeMutableRawBufferPointer) {
        switch socket.stage {
        case .tlsHandshake, .closing:
            return  // a closing socket's late bytes are discarded
        case .http:
            socket.httpBytes.append(contentsOf: bytes)
            if socket.head == nil { socket.httpParser.append(bytes) }
            processHTTP(socket)
        case .webSocket:
            processFrames(socket, bytes)
        }
    }

    // MARK: - HTTP

    private func processHTTP(_ socket: RelaySocket) {
        if socket.head == nil {
            guard let result = socket.httpParser.next() else { return }
            switch result {
            case .head(let head):
                socket.head = head
                socket.headLength = socket.httpParser.headLength ?? 0
                socket.address = settings.clientAddress.clientAddress(head, peer: socket.tcpPeer)
                if !head.values(named: "upgrade").isEmpty { return upgrade(socket, head) }
                if head.path == StatusEndpoint.path {
                    // The status document names peer addresses: like /metrics, for this machine only.
                    guard RelayCore.isLocal(head, peerIsLoopback: socket.peerIsLoopback) else {
                        return respond(socket, RelayHTTP.plain(403, "forbidden"))
                    }
                    if let status = StatusEndpoint.response(to: head, status: settings.status()) {
                        return respond(socket, status)
                    }
                }
                // Upstream's order: the request gate and rate limits, then the body's framing.
                if let refusal = core.checkRequest(head, address: socket.address) { return respond(socket, refusal) }
                if !head.values(named: "transfer-encoding").isEmpty {
                    return respond(socket, RelayHTTP.plain(501, "transfer-encoding not supported"))
                }
                let lengths = head.values(named: "content-length")
                if !lengths.isEmpty {
                    guard Set(lengths).count == 1, let length = Int(lengths[0]), length >= 0,
                        lengths[0].utf8.count <= 12
                    else { return respond(socket, RelayHTTP.plain(400, "bad content-length")) }
                    guard length <= core.configuration.httpBodySize else {
                        return respond(socket, RelayHTTP.plain(413, "payload too large"))
                    }
                    socket.bodyLength = length
                }
            case .malformed: return respond(socket, RelayHTTP.plain(400, "bad request"))
            case .unsupportedVersion: return respond(socket, RelayHTTP.plain(505, "HTTP version not supported"))
            case .tooLarge: return respond(socket, RelayHTTP.plain(431, "request header fields too large"))
            }
        }
        guard let head = socket.head else { return }
        guard socket.httpBytes.count >= socket.headLength + socket.bodyLength else { return }
        let end = socket.headLength + socket.bodyLength
        let body = Array(socket.httpBytes[socket.headLength..<end])
        let response = core.respond(
            to: head, body: body, address: socket.address, peerIsLoopback: socket.peerIsLoopback)
        socket.requestsServed += 1
        guard response.keepsAlive, socket.requestsServed < Self.requestsPerConnection else {
            respond(socket, response)
            performActions()
            return
        }
        send(socket, response.bytes)
        performActions()
        // The next request on the same connection (the web client's files): what came after this
        // one is its start, and it has the time a new connection has.
        var next = Array(socket.httpBytes[end...])
        socket.httpBytes = []
        socket.head = nil
        socket.headLength = 0
        socket.bodyLength = 0
        socket.httpParser = HTTPRequestHeadParser()
        socket.deadline = clock.milliseconds + Self.requestTimeout
        timed.insert(socket.fd)
        guard socket.stage == .http, !next.isEmpty else { return }
        next.withUnsafeMutableBytes { consume(socket, $0) }
    }

    private func upgrade(_ socket: RelaySocket, _ head: HTTPRequestHead) {
        if let refusal = core.checkUpgrade(head, address: socket.address) { return respond(socket, refusal) }
        let accept: String
        switch WebSocketHandshake.validateUpgrade(head) {
        case .failure(let error): return respond(socket, error.response)
        case .success(let value): accept = value
        }
        guard let room = core.roomName(in: head) else { return respond(socket, RelayHTTP.plain(400, "bad room")) }
        send(socket, WebSocketHandshake.serverResponse(accept: accept))
        let id = core.open(room: room, address: socket.address)
        socket.connectionID = id
        byConnection[id] = socket
        socket.stage = .webSocket
        timed.remove(socket.fd)
        uncountPreliminary(socket)
        socket.stream = WebSocketDecoder(
            role: .server, maximumMessageSize: core.configuration.preAdmissionFrameSize, streaming: .binary)
        var leftover = Array(socket.httpBytes[socket.headLength...])
        socket.httpBytes = []
        socket.httpParser = HTTPRequestHeadParser()
        socket.head = nil
        performActions()
        if socket.stage == .webSocket && !leftover.isEmpty {
            leftover.withUnsafeMutableBytes { processFrames(socket, $0) }
        }
    }

    /// Sends a complete HTTP response, then closes.
    private func respond(_ socket: RelaySocket, _ response: HTTPResponse) {
        send(socket, response.bytes)
        beginClosing(socket)
    }

    // MARK: - WebSocket

    /// Decodes what arrived. Data frames after admission, text and binary, are cut through: the
    /// core decides at the frame header (rate, quota, peer) and the payload goes to the peer as
    /// it arrives, unmasked in place, with its opcode. Before admission text is assembled (the
    /// Hello and the Proof).
    private func processFrames(_ socket: RelaySocket, _ bytes: UnsafeMutableRawBufferPointer) {
        guard let stream = socket.stream, let id = socket.connectionID else { return }
        do {
            try stream.decode(bytes) { event in
                switch event {
                case .dataFrameStart(let opcode, let fin, let length):
                    socket.spliceTarget = nil
                    if let peerID = core.frame(byteCount: length, startsMessage: opcode != .continuation, from: id),
                        let peer = byConnection[peerID], peer.stage == .webSocket
                    {
                        beginSplice(from: socket, to: peer, opcode: opcode, fin: fin, length: length)
                    }
                    if core.hasActions { performActions() }
                case .dataPayload(let chunk):
                    if let peer = socket.spliceTarget { splice(chunk, from: socket, to: peer) }
                case .dataFrameEnd:
                    if let peer = socket.spliceTarget { endSplice(peer) }
                    socket.spliceTarget = nil
                case .message(.text(let text)):
                    core.text(text, from: id)
                    performActions()
                case .message(.binary):
                    break  // never: binary messages are streamed
                case .message(.ping(let payload)):
                    sendFrame(socket, .pong, payload)
                case .message(.pong):
                    core.pong(from: id)
                case .message(.close(let code, _)):
                    // Echo the peer's code (or 1000 for an empty close), then end.
                    closeWebSocket(socket, code: code ?? 1000, reason: "")
                    core.closed(id)
                    performActions()
                }
                return socket.stage == .webSocket
            }
        } catch {
            closeWebSocket(socket, code: error.closeCode, reason: error.reason)
            core.closed(id)
            performActions()
        }
    }

    /// A data frame from `source` starts its way to `peer`: the header waits to go out with the
    /// first payload bytes.
    private func beginSplice(
        from source: RelaySocket, to peer: RelaySocket, opcode: WebSocketOpcode, fin: Bool, length: Int
    ) {
        source.spliceTarget = peer
        source.lastSpliceTarget = peer
        peer.receivingSplice = true
        peer.inboundRemaining = length
        peer.inboundHeader.removeAll(keepingCapacity: true)
        Self.appendFrameHeader(opcode: opcode, fin: fin, length: length, to: &peer.inboundHeader)
        peer.inboundSource = source
        if opcode != .continuation {
            peer.inboundFragmentOpen = !fin
        } else if fin {
            peer.inboundFragmentOpen = false
        }
    }

    private func splice(_ chunk: UnsafeRawBufferPointer, from source: RelaySocket, to peer: RelaySocket) {
        guard peer.stage == .webSocket, peer.receivingSplice, peer.inboundRemaining >= chunk.count else { return }
        peer.inboundRemaining -= chunk.count
        // The header's buffer is emptied, not dropped: the next frame's header reuses it.
        write(peer.inboundHeader, chunk, to: peer)
        peer.inboundHeader.removeAll(keepingCapacity: true)
        if peer.pendingOutput > Self.highWater, sockets[peer.fd] === peer, !source.readPaused {
            source.readPaused = true
            peer.pausedSources.append(source)
            updateInterest(source)
        }
    }

    /// The spliced frame is complete: our own deferred frames may follow it.
    private func endSplice(_ peer: RelaySocket) {
        guard peer.stage == .webSocket, peer.receivingSplice else { return }
        if !peer.inboundHeader.isEmpty {  // an empty frame: the header alone
            peer.output += peer.inboundHeader
            peer.inboundHeader.removeAll(keepingCapacity: true)
        }
        peer.receivingSplice = false
        if !peer.deferred.isEmpty {
            peer.output += peer.deferred
            peer.deferred = []
        }
        flush(peer)
    }

    /// `source` ends with a frame of its half-way to its peer (or a fragmented message open):
    /// fill the frame with zeros and close the message, so the peer's WebSocket stream stays
    /// well-formed. (The end-to-end channel then fails its AEAD check, and starts over.)
    private func abandonSplice(from source: RelaySocket) {
        guard let peer = source.lastSpliceTarget, sockets[peer.fd] === peer, peer.stage == .webSocket,
            peer.inboundSource === source
        else { return }
        repairInbound(peer)
        flush(peer)
    }

    /// Completes a half-written spliced frame and open fragmented message on `peer`'s output.
    private func repairInbound(_ peer: RelaySocket) {
        if peer.receivingSplice {
            peer.output += peer.inboundHeader
            peer.inboundHeader.removeAll(keepingCapacity: true)
            peer.output += [UInt8](repeating: 0, count: peer.inboundRemaining)
            peer.inboundRemaining = 0
            peer.receivingSplice = false
            peer.output += peer.deferred
            peer.deferred = []
        }
        if peer.inboundFragmentOpen {
            Self.appendFrameHeader(opcode: .continuation, fin: true, length: 0, to: &peer.output)
            peer.inboundFragmentOpen = false
        }
        peer.inboundSource = nil
    }

    /// `header` then `payload` to `peer`: straight to the socket in one sendmsg when nothing is
    /// queued (no copy), else queued.
    private func write(_ header: [UInt8], _ payload: UnsafeRawBufferPointer, to peer: RelaySocket) {
        if peer.pendingOutput == 0 && peer.tls == nil {
            let written = writeVectored(peer.fd, header, payload)
            if written < 0 { return destroy(peer) }
            let total = header.count + payload.count
            if written == total { return }
            if written < header.count {
                peer.output.append(contentsOf: header[written...])
                peer.output.append(contentsOf: payload)
            } else {
                peer.output.append(contentsOf: payload[(written - header.count)...])
            }
            updateInterest(peer)
        } else {
            peer.output += header
            peer.output.append(contentsOf: payload)
            flush(peer)
        }
    }

    /// Appends an unmasked frame header (a server's) to `bytes`, in place: per spliced frame.
    static func appendFrameHeader(opcode: WebSocketOpcode, fin: Bool, length: Int, to bytes: inout [UInt8]) {
        bytes.append((fin ? 0x80 : 0) | opcode.rawValue)
        if length < 126 {
            bytes.append(UInt8(length))
        } else if length <= 0xFFFF {
            bytes.append(126)
            bytes.append(UInt8(length >> 8))
            bytes.append(UInt8(length & 0xFF))
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: length >> shift))
            }
        }
    }

    /// sendmsg of `header` (possibly empty) and `payload`: bytes written, 0 when the socket is
    /// full, -1 when it failed.
    private func writeVectored(_ fd: Int32, _ header: [UInt8], _ payload: UnsafeRawBufferPointer) -> Int {
        header.withUnsafeBytes { headerBytes in
            var vectors = [
                iovec(iov_base: UnsafeMutableRawPointer(mutating: headerBytes.baseAddress), iov_len: headerBytes.count),
                iovec(iov_base: UnsafeMutableRawPointer(mutating: payload.baseAddress), iov_len: payload.count),
            ]
            return vectors.withUnsafeMutableBufferPointer { buffer -> Int in
                var message = msghdr()
                let skip = headerBytes.isEmpty ? 1 : 0
                message.msg_iov = buffer.baseAddress! + skip
                message.msg_iovlen = 2 - skip
                while true {
                    let count = sendmsg(fd, &message, Int32(MSG_NOSIGNAL))
                    if count >= 0 { return count }
                    if errno == EINTR { continue }
                    return errno == EAGAIN ? 0 : -1
                }
            }
        }
    }

    /// A frame of the relay's own (a pong, a ping, text). While a spliced frame is half-way to
    /// `socket` it waits in `deferred` for that frame's end: inside the frame it would become
    /// payload and break the stream.
    private func sendFrame(_ socket: RelaySocket, _ opcode: WebSocketOpcode, _ payload: [UInt8]) {
        guard socket.stage == .webSocket else { return }
        payload.withUnsafeBytes {
            if socket.receivingSplice {
                WebSocketFrameEncoder.append(opcode: opcode, payload: $0, maskKey: nil, to: &socket.deferred)
            } else {
                WebSocketFrameEncoder.append(opcode: opcode, payload: $0, maskKey: nil, to: &socket.output)
            }
        }
        if !socket.receivingSplice { flush(socket) }
    }

    /// Sends a close frame and moves the socket to closing; the core already forgot it (or is
    /// told by the caller).
    private func closeWebSocket(_ socket: RelaySocket, code: UInt16, reason: String) {
        guard socket.stage == .webSocket else { return }
        repairInbound(socket)
        abandonSplice(from: socket)
        socket.output += WebSocketFrameEncoder.closeFrame(code: code, reason: reason, maskKey: nil)
        if let id = socket.connectionID { byConnection[id] = nil }
        socket.connectionID = nil
        socket.stream = nil
        beginClosing(socket)
    }

    // MARK: - Core actions

    private func performActions() {
        guard core.hasActions else { return }
        for action in core.takeActions() {
            switch action {
            case .sendText(let id, let text):
                if let socket = byConnection[id] { sendFrame(socket, .text, Array(text.utf8)) }
            case .admitted(let id, let frameLimit):
                byConnection[id]?.stream?.maximumMessageSize = frameLimit
                byConnection[id]?.stream?.streaming = .binaryAndText
            case .close(let id, let reason):
                if let socket = byConnection[id] { closeWebSocket(socket, code: reason.code, reason: reason.reason) }
            case .drop(let id):
                if let socket = byConnection[id] {
                    byConnection[id] = nil
                    socket.connectionID = nil
                    destroy(socket)
                }
            case .ping(let id):
                if let socket = byConnection[id] { sendFrame(socket, .ping, []) }
            }
        }
    }

    // MARK: - Writing

    private func send(_ socket: RelaySocket, _ bytes: [UInt8]) {
        socket.output += bytes
        flush(socket)
    }

    private func writable(_ socket: RelaySocket) {
        if socket.stage == .tlsHandshake {
            continueHandshake(socket)
            return
        }
        if socket.tlsReadWantsWritable {
            socket.tlsReadWantsWritable = false
            readable(socket)
            guard sockets[socket.fd] === socket else { return }
        }
        flush(socket)
    }

    /// Writes what is queued; on a full socket waits for writable. Resumes paused sources once
    /// drained below the low-water mark; shuts the write side of a drained closing socket.
    private func flush(_ socket: RelaySocket) {
        while socket.pendingOutput > 0 {
            let result: TLSIOResult = socket.output.withUnsafeBytes { all in
                let pending = UnsafeRawBufferPointer(rebasing: all[socket.outputStart...])
                if let tls = socket.tls { return tls.write(pending) }
                let count = Glibc.send(socket.fd, pending.baseAddress, pending.count, Int32(MSG_NOSIGNAL))
                if count >= 0 { return .bytes(count) }
                if errno == EAGAIN || errno == EINTR { return errno == EAGAIN ? .wantWrite : .bytes(0) }
                return .failed(TLSError(.io, "send failed", errno: errno))
            }
            switch result {
            case .bytes(let count):
                socket.outputStart += count
            case .wantWrite, .wantRead:
                compact(socket)
                updateInterest(socket)
                return
            case .closed, .failed:
                return destroy(socket)
            }
        }
        socket.output.removeAll(keepingCapacity: socket.output.capacity <= Self.retainedOutputCapacity)
        socket.outputStart = 0
        if !socket.pausedSources.isEmpty { resumeSources(of: socket) }
        if socket.stage == .closing && !socket.writeShut {
            socket.writeShut = true
            socket.tls?.shutdown()
            Glibc.shutdown(socket.fd, Int32(SHUT_WR))
        }
        updateInterest(socket)
    }

    private func compact(_ socket: RelaySocket) {
        if socket.outputStart > 64 * 1024 && socket.outputStart * 2 > socket.output.count {
            socket.output.removeFirst(socket.outputStart)
            socket.outputStart = 0
        }
        if socket.pendingOutput < Self.lowWater && !socket.pausedSources.isEmpty { resumeSources(of: socket) }
    }

    private func resumeSources(of socket: RelaySocket) {
        let sources = socket.pausedSources
        socket.pausedSources = []
        for source in sources where sockets[source.fd] === source && source.readPaused {
            source.readPaused = false
            updateInterest(source)
        }
    }

    private func updateInterest(_ socket: RelaySocket) {
        guard sockets[socket.fd] === socket else { return }
        let wanted = socket.wantedEvents
        guard wanted != socket.registeredEvents else { return }
        socket.registeredEvents = wanted
        do {
            try epoll.modify(socket.fd, events: wanted)
        } catch {
            destroy(socket)
        }
    }

    // MARK: - Ending

    private func beginClosing(_ socket: RelaySocket) {
        socket.stage = .closing
        socket.stream = nil
        socket.httpBytes = []
        socket.head = nil
        socket.deadline = clock.milliseconds + Self.closingTimeout
        timed.insert(socket.fd)
        if !socket.pausedSources.isEmpty { resumeSources(of: socket) }
        flush(socket)
    }

    /// Closes the socket now; tells the core if it still knew it.
    private func destroy(_ socket: RelaySocket) {
        guard sockets[socket.fd] === socket else { return }
        if socket.stage == .webSocket { abandonSplice(from: socket) }
        sockets[socket.fd] = nil
        timed.remove(socket.fd)
        uncountPreliminary(socket)
        socket.tls = nil
        Glibc.close(socket.fd)
        if !socket.pausedSources.isEmpty { resumeSources(of: socket) }
        if let id = socket.connectionID {
            socket.connectionID = nil
            byConnection[id] = nil
            core.closed(id)
            performActions()
        }
    }

    private func expireDeadlines(now: Int64) {
        for fd in timed {
            guard let socket = sockets[fd], now >= socket.deadline else { continue }
            destroy(socket)
        }
    }

    private func drainAndClose() {
        core.shutdown()
        performActions()
        for socket in Array(sockets.values) where socket.stage != .closing && socket.stage != .webSocket {
            destroy(socket)
        }
        let end = clock.milliseconds + 1000
        while clock.milliseconds < end && sockets.values.contains(where: { $0.pendingOutput > 0 }) {
            epoll.wait(timeout: 50) { fd, events in
                if let socket = sockets[fd], events & Epoll.writable != 0 { flush(socket) }
            }
        }
        for socket in Array(sockets.values) { destroy(socket) }
    }
}
