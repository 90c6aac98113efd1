import Foundation
import Glibc
import PeerGate
import PeerGateListener
import Synchronization
import TestSupport
import Testing

/// What a test listener saw: the admitted connections it kept, and the bytes each refused socket
/// still held unread when the gate closed it.
final class ListenerRecorder: Sendable {
    let admitted = Mutex<[GatedConnection]>([])
    let unreadAtRefusal = Mutex<[[UInt8]]>([])

    /// Keeps admitted connections for the test to inspect.
    var keep: @Sendable (GatedConnection) -> Void { { connection in self.admitted.withLock { $0.append(connection) } } }

    /// Serves `GET /status` on a thread of its own for each admitted connection.
    static let serveStatus: @Sendable (GatedConnection) -> Void = { connection in
        Thread { StatusHTTPResponder.serve(connection) }.start()
    }

    /// The refusal hook: waits for `expected` bytes to be queued on the refused socket, then records
    /// what is queued, peeking so that nothing is consumed, before the gate closes it. The bound is
    /// generous: a client thread stalled for seconds between its connect and its send (a loaded
    /// machine) must not find the socket reset. Only a test that sends less than it said reaches it.
    func peekBeforeClose(expecting expected: Int) -> @Sendable (Int32) -> Void {
        { fd in
            var buffer = [UInt8](repeating: 0, count: 4096)
            var queued = 0
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                queued = max(0, recv(fd, &buffer, buffer.count, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)))
                if queued >= expected { break }
                usleep(5_000)
            }
            let seen = Array(buffer[0..<queued])
            self.unreadAtRefusal.withLock { $0.append(seen) }
        }
    }
}

func makeListener(
    _ bindAddress: String = "127.0.0.1", port: UInt16 = 0, rules: PeerGateRules,
    hook: (@Sendable (Int32) -> Void)? = nil, onAdmitted: @escaping @Sendable (GatedConnection) -> Void
) throws -> GatedListener {
    var configuration = GatedListener.Configuration(bindAddress: bindAddress, port: port, rules: rules)
    configuration.testingOnlyBeforeRefusedClose = hook
    return try GatedListener(configuration, onAdmitted: onAdmitted)
}

/// Reads everything from a blocking socket until EOF (with a receive timeout).
func readAll(_ fd: Int32, timeout: Int = 5) -> [UInt8] {
    var time = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    var all: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = recv(fd, &buffer, buffer.count, 0)
        if count <= 0 { return all }
        all += buffer[0..<count]
    }
}

/// One HTTP exchange with a listener that serves /status.
func httpExchange(port: UInt16, host: String = "127.0.0.1", _ request: String) throws -> ParsedHTTPResponse {
    let client = try SocketClient(host: host, port: port)
    #expect(client.send(request))
    let (bytes, end) = client.readToEnd()
    #expect(end == .endOfFile, "the responder closes after its one response")
    return try ParsedHTTPResponse(bytes)
}

@Suite("Gated listener on loopback")
struct ListenerTests {
    static let ipv6Loopback: Bool = {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr.__in6_u.__u6_addr8.15 = 1
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        } == 0
    }()

    @Test("a loopback peer is admitted as local, and its bytes are left for the server")
    func admitsLoopback() throws {
        let recorder = ListenerRecorder()
        let listener = try makeListener(rules: PeerGateRules(policy: .homeOnly), onAdmitted: recorder.keep)
        defer { listener.close() }
        let client = try SocketClient(host: "127.0.0.1", port: listener.port)
        #expect(client.send("hello gate"))
        #expect(eventually { recorder.admitted.withLock { $0.count } == 1 })
        let connection = try #require(recorder.admitted.withLock { $0.first })
        #expect(connection.decision.link == .local)
        #expect(connection.decision.peer == "127.0.0.1")
        #expect(connection.localInterface == nil, "not looked up when no interface is refused")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(connection.fd, &buffer, buffer.count)
        #expect(count == 10)
        #expect(Array(buffer[0..<max(count, 0)]) == Array("hello gate".utf8))

        let status = listener.status
        #expect(status.admittedCount == 1)
        #expect(status.refusedCount == 0)
        #expect(status.lastRefusedPeer == nil)
        #expect(status.currentLink?.peer == "127.0.0.1")
        #expect(status.currentLink?.link == .local)
        #expect(status.currentLink?.kind == .loopback)
        #expect(status.policy == "home-only")
        #expect(connection.status == status)
    }

    @Test("all of 127/8 is this machine: 127.0.0.2 is admitted")
    func admitsAllOfLoopback() throws {
        let recorder = ListenerRecorder()
        let listener = try makeListener(rules: PeerGateRules(policy: .homeOnly), onAdmitted: recorder.keep)
        defer { listener.close() }
        let client = try SocketClient(host: "127.0.0.1", port: listener.port, source: "127.0.0.2")
        _ = client
        #expect(eventually { listener.status.admittedCount == 1 })
        #expect(listener.status.currentLink?.peer == "127.0.0.2")
        #expect(listener.status.currentLink?.link == .local)
    }

    @Test("::1 is admitted as local", .enabled(if: ipv6Loopback))
    func admitsIPv6Loopback() throws {
        let recorder = ListenerRecorder()
        let listener = try makeListener("::1", rules: PeerGateRules(policy: .homeOnly), onAdmitted: recorder.keep)
        defer { listener.close() }
        let client = try SocketClient(host: "::1", port: listener.port)
        _ = client
        #expect(eventually { listener.status.admittedCount == 1 })
        #expect(listener.status.currentLink?.peer == "::1")
    }

    @Test("the pairing gate refuses loopback: closed at once, nothing read, counted")
    func tailnetOnlyRefusesLoopback() throws {
        let recorder = ListenerRecorder()
        let payload = "SSH-2.0-not-for-you\r\n"
        let listener = try makeListener(
            rules: PeerGateRules(policy: .tailnetOnly), hook: recorder.peekBeforeClose(expecting: payload.utf8.count),
            onAdmitted: recorder.keep)
        defer { listener.close() }
        let client = try SocketClient(host: "127.0.0.1", port: listener.port)
        #expect(client.send(payload))
        let outcome = client.readOnce()
        #expect(outcome == .reset, "SO_LINGER 0: the refused client reads a reset, not an answer: \(outcome)")
        #expect(recorder.admitted.withLock { $0.isEmpty })
        #expect(
            recorder.unreadAtRefusal.withLock { $0 } == [Array(payload.utf8)], "every byte still unread at the close")
        let status = listener.status
        #expect(status.refusedCount == 1)
        #expect(status.admittedCount == 0)
        #expect(status.currentLink == nil)
        #expect(status.lastRefusedPeer?.peer == "127.0.0.1")
        #expect(status.lastRefusedPeer?.kind == .loopback)
        #expect(status.lastRefusedPeer?.reason == .outsidePolicy)
        #expect(status.lastRefusedPeer?.message.contains("only tailnet peers") == true)
    }

    @Test("interfaces refused by name; the interface is recorded when looked up")
    func interfaceByName() throws {
        let recorder = ListenerRecorder()
        // The hook holds the close until the client's byte is queued, so the reset cannot race its connect().
        let refusing = try makeListener(
            rules: PeerGateRules(policy: .homeOnly, refusedInterfaces: ["lo"]),
            hook: recorder.peekBeforeClose(expecting: 1), onAdmitted: recorder.keep)
        defer { refusing.close() }
        let refused = try SocketClient(host: "127.0.0.1", port: refusing.port)
        #expect(refused.send("x"))
        let outcome = refused.readOnce()
        #expect(outcome == .reset)
        #expect(refusing.status.lastRefusedPeer?.reason == .refusedInterface)
        #expect(refusing.status.lastRefusedPeer?.interface == "lo")
        #expect(refusing.status.lastRefusedPeer?.message == "the connection arrived on lo, which this listener refuses")

        let admitting = try makeListener(
            rules: PeerGateRules(policy: .homeOnly, refusedInterfaces: ["wwan*", "rmnet*"]), onAdmitted: recorder.keep)
        defer { admitting.close() }
        let admitted = try SocketClient(host: "127.0.0.1", port: admitting.port, source: "127.0.0.3")
        _ = admitted
        // The hand-over comes after the record: waiting for it, both are there.
        #expect(eventually { recorder.admitted.withLock { $0.count } == 1 })
        #expect(admitting.status.currentLink?.interface == "lo", "127.0.0.3 lies in lo's 127.0.0.0/8")
        #expect(recorder.admitted.withLock { $0.first?.localInterface } == "lo")
    }

    @Test("GET /status: the document with a correct Content-Length, then close")
    func statusOverHTTP() throws {
        let listener = try makeListener(
            rules: PeerGateRules(policy: .homeOnly), onAdmitted: ListenerRecorder.serveStatus)
        defer { listener.close() }
        let response = try httpExchange(port: listener.port, "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(response.statusLine == "HTTP/1.1 200 OK")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["connection"] == "close")
        #expect(response.headers["content-length"] == String(response.body.count))
        let document = try PeerGateStatus.decode(response.body)
        #expect(document.admittedCount == 1, "the status request itself was admitted first")
        #expect(document.currentLink?.peer == "127.0.0.1")
        #expect(document.refusedCount == 0)
        #expect(document.lastRefusedPeer == nil)
        #expect(String(decoding: response.body, as: UTF8.self).contains(#""lastRefusedPeer":null"#))

        let head = try httpExchange(port: listener.port, "HEAD /status HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(head.statusLine == "HTTP/1.1 200 OK")
        #expect(head.body.isEmpty)
        #expect(Int(head.headers["content-length"] ?? "") ?? 0 > 0)

        let missing = try httpExchange(port: listener.port, "GET /other HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(missing.statusLine == "HTTP/1.1 404 Not Found")
        #expect(missing.headers["content-length"] == String(missing.body.count))

        let huge = "GET /status HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "b", count: 10_000) + "\r\n\r\n"
        #expect(
            try httpExchange(port: listener.port, huge).statusLine == "HTTP/1.1 431 Request Header Fields Too Large")
        #expect(
            try httpExchange(port: listener.port, "BREW /status HTCPCP/1.0\r\n\r\n").statusLine
                == "HTTP/1.1 400 Bad Request")
        #expect(eventually { listener.status.admittedCount == 5 })
    }

    @Test("a restarted listener takes its port back at once (SO_REUSEADDR), even with TIME_WAIT on it")
    func reusesPort() throws {
        let first = try makeListener(rules: PeerGateRules(policy: .homeOnly)) { connection in connection.close() }
        let port = first.port
        // The server closes first, then the client: the server's side sits in TIME_WAIT on `port`.
        do {
            let client = try SocketClient(host: "127.0.0.1", port: port)
            #expect(client.readOnce() == .endOfFile)
        }
        first.close()
        #expect(
            eventually {
                let sockets =
                    (try? ProcessRunner.run("ss", ["-Htan", "state", "time-wait", "sport", "= :\(port)"]))?.stdout ?? ""
                return !sockets.isEmpty
            }, "a TIME_WAIT socket holds the port")
        // Without SO_REUSEADDR the port is not free.
        let plain = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(plain) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(plain, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(rc != 0 && errno == EADDRINUSE)

        let second = try makeListener(port: port, rules: PeerGateRules(policy: .homeOnly)) { $0.close() }
        defer { second.close() }
        #expect(second.port == port)
        let again = try SocketClient(host: "127.0.0.1", port: port)
        #expect(again.readOnce() == .endOfFile)
    }

    @Test("close() frees the port and stops accepting")
    func closeStops() throws {
        let listener = try makeListener(rules: PeerGateRules(policy: .homeOnly)) { $0.close() }
        let port = listener.port
        listener.close()
        listener.close()
        #expect(throws: FixtureError.self) { try SocketClient(host: "127.0.0.1", port: port) }
    }

    @Test("close() from inside onAdmitted does not deadlock")
    func closeFromHandler() throws {
        let holder = Mutex<GatedListener?>(nil)
        let listener = try makeListener(rules: PeerGateRules(policy: .homeOnly)) { connection in
            connection.close()
            holder.withLock { $0?.close() }
        }
        holder.withLock { $0 = listener }
        let client = try SocketClient(host: "127.0.0.1", port: listener.port)
        #expect(client.readOnce() == .endOfFile)
        #expect(eventually { (try? SocketClient(host: "127.0.0.1", port: listener.port, timeout: 1)) == nil })
        holder.withLock { $0 = nil }
    }

    @Test("start-up errors are typed")
    func startErrors() throws {
        #expect {
            try makeListener("localhost", rules: PeerGateRules(policy: .homeOnly)) { _ in }
        } throws: { error in
            (error as? ListenerError)?.kind == .address
        }
        let holder = try makeListener(rules: PeerGateRules(policy: .homeOnly)) { _ in }
        defer { holder.close() }
        #expect {
            try makeListener(port: holder.port, rules: PeerGateRules(policy: .homeOnly)) { _ in }
        } throws: { error in
            (error as? ListenerError)?.kind == .bind && (error as? ListenerError)?.errno == EADDRINUSE
        }
    }
}
