import Foundation
import HerdrCrypto
import Plumbing
import RelayClient
import RelayProtocol
import Synchronization
import TLS
import TestSupport
import Testing

@Suite("WebSocket connections to a real relay", .serialized)
struct RelayConnectionTests {
    @Test("open mode: a Mac parks, a phone joins, 1-byte and 256 KiB frames cross both ways")
    func spliceOpenMode() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try connect(relay, room: room, role: .computer)
        let phone = try connect(relay, room: room, role: .device)
        defer {
            mac.close()
            phone.close()
        }
        #expect(mac.registrationToken == nil)
        #expect(phone.registrationToken?.count == 24)
        try checkSplice(mac, phone)
    }

    @Test("an established room admits both sides signing with the join key, and splices")
    func establishedRoom() throws {
        let relay = try TestRelay()
        let established = try EstablishedRoom(relay)
        established.close()
        // Now {} no longer admits a Mac.
        let unsigned = try #require(throws: ConnectionError.self) {
            try connect(relay, room: established.room, role: .computer)
        }
        #expect(unsigned.serverError == "signature required")
        let mac = try connect(relay, room: established.room, role: .computer, credential: .joinKey(established.joinKey))
        let phone = try connect(relay, room: established.room, role: .device, credential: .joinKey(established.joinKey))
        defer {
            mac.close()
            phone.close()
        }
        try checkSplice(mac, phone)
    }

    @Test("a wrong join key is refused with bad signature and the close that follows")
    func wrongJoinKey() throws {
        let relay = try TestRelay()
        let established = try EstablishedRoom(relay)
        defer { established.close() }
        let stranger = try RelayJoinKey(roomSecret: RelayJoinKey.makeRoomSecret())
        let error = try #require(throws: ConnectionError.self) {
            try connect(relay, room: established.room, role: .device, credential: .joinKey(stranger))
        }
        #expect(error.kind == .refused)
        #expect(error.serverError == "bad signature")
        #expect(error.close == RelayClose(code: 1008, reason: "bad signature"))
        #expect(error.message.contains("bad signature"))
        // The holders were not disturbed.
        #expect(established.mac.end == nil)
        #expect(established.phone.end == nil)
    }

    @Test("nonDisplacing is refused with slot occupied; a plain second Mac displaces the first")
    func displacement() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let first = try connect(relay, room: room, role: .computer)
        var options = quickOptions()
        options.nonDisplacing = true
        let error = try #require(throws: ConnectionError.self) {
            try connect(relay, room: room, role: .computer, options: options)
        }
        #expect(error.serverError == "slot occupied")
        #expect(error.close == RelayClose(code: 1008, reason: "slot occupied"))
        #expect(first.end == nil)
        let second = try connect(relay, room: room, role: .computer)
        defer { second.close() }
        #expect(try expectEnd(first) == .closedByRelay(.displaced))
    }

    @Test("a phone with no Mac parked is refused with mac offline")
    func macOffline() throws {
        let relay = try TestRelay()
        let error = try #require(throws: ConnectionError.self) {
            try connect(relay, room: randomRoom(), role: .device)
        }
        #expect(error.serverError == "mac offline")
    }

    @Test("upgrade refusals carry the status and the relay's error")
    func upgradeRefused() throws {
        let relay = try TestRelay()
        let error = try #require(throws: ConnectionError.self) {
            try connect(relay, room: "not-a-room", role: .computer)
        }
        #expect(error.kind == .httpStatus)
        #expect(error.status == 400)
        #expect(error.serverError == "bad room")
    }

    @Test("close() sends 1000 and ends within about a second; the peer sees the Mac go")
    func closing() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try connect(relay, room: room, role: .computer)
        let phone = try connect(relay, room: room, role: .device)
        defer { phone.close() }
        let start = Date()
        mac.close()
        #expect(mac.waitUntilEnded(timeout: 3) == .closedLocally)
        #expect(Date().timeIntervalSince(start) < 1.5)
        #expect(try expectEnd(mac) == .closedLocally)
        #expect(mac.receive(timeout: 0.1) == nil)
        #expect(try expectEnd(phone) == .closedByRelay(.peerGone))
        // Sending on an ended connection fails clearly.
        let error = try #require(throws: ConnectionError.self) { try mac.send([1]) }
        #expect(error.kind == .closed)
    }

    @Test("frames over 256 KiB are refused before sending")
    func frameTooLarge() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try connect(relay, room: room, role: .computer)
        defer { mac.close() }
        let error = try #require(throws: ConnectionError.self) {
            try mac.send([UInt8](repeating: 0, count: RelayLimits.frameSize + 1))
        }
        #expect(error.kind == .frameTooLarge)
        try mac.send([UInt8](repeating: 0, count: RelayLimits.frameSize))
    }

    @Test("server shutdown ends connections with 1001 server shutting down")
    func serverShutdown() throws {
        let relay = try TestRelay()
        let mac = try connect(relay, room: randomRoom(), role: .computer)
        relay.shutdown()
        #expect(try expectEnd(mac) == .closedByRelay(.serverShuttingDown))
    }

    @Test("async: connect and read events from the AsyncStream")
    func asyncEvents() async throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try await RelayConnection.connect(
            to: relay.endpoint, room: room, role: .computer, credential: .none, options: quickOptions())
        let phone = try await RelayConnection.connect(
            to: relay.endpoint, room: room, role: .device, credential: .none, options: quickOptions())
        for index in 0..<10 { try mac.send([UInt8(index)]) }
        mac.close()
        var received: [[UInt8]] = []
        var end: FramePipeEnd?
        for await event in phone.events {
            switch event {
            case .message(let bytes): received.append(bytes)
            case .ended(let how): end = how
            }
        }
        #expect(received == (0..<10).map { [UInt8($0)] })
        #expect(end == .closedByRelay(.peerGone))
    }

    @Test("a slow consumer loses nothing: reading pauses and resumes")
    func slowConsumer() throws {
        let relay = try TestRelay()
        let room = randomRoom()
        let mac = try connect(relay, room: room, role: .computer)
        var options = quickOptions()
        options.maximumIncomingBytes = 512 * 1024
        let phone = try connect(relay, room: room, role: .device, options: options)
        defer {
            mac.close()
            phone.close()
        }
        let count = 40
        let frameSize = 200 * 1024
        let sender = Thread {
            for index in 0..<count {
                var frame = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: frameSize)
                frame[0] = UInt8(index)
                while true {
                    do {
                        try mac.send(frame)
                        break
                    } catch let error as ConnectionError {
                        guard error.kind == .backpressure, mac.waitUntilWritable(timeout: 10) else { return }
                    } catch {
                        return
                    }
                }
            }
        }
        sender.start()
        Thread.sleep(forTimeInterval: 0.5)
        for index in 0..<count {
            let frame = try expectMessage(phone, timeout: 10)
            #expect(frame.count == frameSize)
            #expect(frame.first == UInt8(index))
        }
    }

    @Test("the outgoing queue is bounded: send fails with backpressure when the path is stuck")
    func backpressure() throws {
        let relay = try TestRelay()
        let proxy = try BlackholeProxy(targetPort: relay.port)
        defer { proxy.shutdown() }
        var options = quickOptions()
        options.maximumQueuedBytes = 512 * 1024
        let endpoint = relay.endpoint.connecting(toHost: "127.0.0.1", port: proxy.port, tls: false)
        let mac = try RelayConnection.connect(
            to: endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
        defer { mac.close() }
        proxy.freeze()
        let frame = [UInt8](repeating: 7, count: 256 * 1024)
        // The kernel's socket buffers on the frozen path absorb a few MiB, and may grow while we
        // fill them, so the queue may drain a few times before nothing moves. Fill until `send`
        // refuses, wait for room; repeat until the queue stays full. Buffers are finite: past
        // 64 MiB accepted the path is not stuck at all.
        let cap = 64 * 1024 * 1024
        var accepted = 0
        var refusal: ConnectionError?
        var stuck = false
        while !stuck && accepted < cap {
            refusal = nil
            while refusal == nil && accepted < cap {
                do {
                    try mac.send(frame)
                    accepted += frame.count
                } catch {
                    refusal = error
                }
            }
            stuck = !mac.waitUntilWritable(timeout: 0.5)
        }
        #expect(refusal?.kind == .backpressure)
        #expect(stuck, "the queue drained with the path frozen, \(accepted) bytes accepted")
        #expect(accepted < cap)
        #expect(mac.queuedByteCount > options.maximumQueuedBytes / 2)
        #expect(mac.end == nil)
    }

    @Test("abandon ends a connection on a silent path at once; close waits for the relay's answer")
    func abandonSkipsTheClosingHandshake() throws {
        let relay = try TestRelay()
        let proxy = try BlackholeProxy(targetPort: relay.port)
        defer { proxy.shutdown() }
        var options = quickOptions()
        options.closeTimeout = 120
        options.pingInterval = 3600
        let endpoint = relay.endpoint.connecting(toHost: "127.0.0.1", port: proxy.port, tls: false)
        let closed = try RelayConnection.connect(
            to: endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
        let abandoned = try RelayConnection.connect(
            to: endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
        proxy.freeze()
        closed.close()
        abandoned.abandon()
        // 20 s is far beyond an abandon's few microseconds and far short of the close's 120 s.
        #expect(abandoned.waitUntilEnded(timeout: 20) == .closedLocally)
        #expect(closed.end == nil, "close still waits for the relay's closing handshake")
        closed.abandon()
        #expect(closed.waitUntilEnded(timeout: 20) == .closedLocally, "and abandon cuts that wait short")
    }

    @Test("keepalive: answered pings keep the connection; a silent path ends it in bounded time")
    func keepalive() throws {
        let relay = try TestRelay()
        let proxy = try BlackholeProxy(targetPort: relay.port)
        defer { proxy.shutdown() }
        var options = quickOptions()
        options.pingInterval = 0.1
        options.pongTimeout = 0.4
        let endpoint = relay.endpoint.connecting(toHost: "127.0.0.1", port: proxy.port, tls: false)
        let mac = try RelayConnection.connect(
            to: endpoint, room: randomRoom(), role: .computer, credential: .none, options: options)
        defer { mac.close() }
        // Several ping rounds, all answered by the relay.
        #expect(mac.waitUntilEnded(timeout: 1) == nil)
        proxy.freeze()
        let start = Date()
        let end = mac.waitUntilEnded(timeout: 3)
        guard case .failed(let error)? = end else {
            Issue.record("expected a keepalive failure, got \(String(describing: end))")
            return
        }
        #expect(error.kind == .keepaliveTimeout)
        #expect(Date().timeIntervalSince(start) < 1.5)
    }

    @Test("the relay's pings are answered: a client that never pings itself stays admitted")
    func answersRelayPings() throws {
        // Rounds of half a second: short enough for several in the test, long enough that a
        // loaded 2-core machine answers each in time (one unanswered ping gets a socket dropped).
        let relay = try TestRelay { $0.pingInterval = 500 }
        var options = quickOptions()
        options.pingInterval = 3600
        let mac = try connect(relay, room: randomRoom(), role: .computer, options: options)
        defer { mac.close() }
        // Five of the relay's ping rounds.
        #expect(mac.waitUntilEnded(timeout: 2.6) == nil)
        let phone = try connect(relay, room: mac.room, role: .device)
        defer { phone.close() }
        try phone.send([42])
        #expect(try expectMessage(mac) == [42])
    }

    @Test("TLS: the relay's certificate is checked against the origin's host, then everything works")
    func tls() throws {
        let directory = try TemporaryDirectory(prefix: "relay-client-tls-")
        let (relay, endpoint, certificate) = try tlsTestRelay(in: directory)
        try RelayHTTPClient(endpoint: endpoint, timeout: 5).healthz()
        let (mac, phone) = try connectPair(to: endpoint)
        defer {
            mac.close()
            phone.close()
        }
        try checkSplice(mac, phone)
        // Without the certificate in the trust store: refused, as TLS.
        let untrusted = try #require(throws: ConnectionError.self) {
            try RelayHTTPClient(endpoint: relay.endpoint, timeout: 5).healthz()
        }
        #expect(untrusted.kind == .tls)
        // A certificate for another name.
        let wrongName = try RelayEndpoint(parsing: "https://other.test")
            .connecting(toHost: "127.0.0.1", port: relay.port).trusting(certificatesFile: certificate.certificate)
        let mismatch = try #require(throws: ConnectionError.self) {
            try RelayHTTPClient(endpoint: wrongName, timeout: 5).healthz()
        }
        #expect(mismatch.kind == .tls)
    }

    @Test(
        "frames sent from several threads at once, small and large, arrive whole and in each sender's order",
        arguments: [false, true])
    func concurrentSenders(tls: Bool) throws {
        let directory = try TemporaryDirectory(prefix: "relay-client-senders-")
        let secure = tls ? try tlsTestRelay(in: directory) : nil
        let relay = try secure?.relay ?? TestRelay()
        let endpoint = secure?.endpoint ?? relay.endpoint
        let (mac, phone) = try connectPair(to: endpoint)
        defer {
            mac.close()
            phone.close()
        }
        // 4 × 100 frames stay under the room's 500 frames a second. Small ones go straight from
        // `send` to the socket while nothing waits; 128 KiB ones, four senders at once, fill it,
        // so part of a frame is left to the connection's thread and the next ones queue.
        let senders = 4
        let perSender = 100
        @Sendable func frame(_ sender: Int, _ index: Int) -> [UInt8] {
            let size = index % 10 == 9 ? 128 * 1024 : 3 + (index * 37) % 2000
            var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: sender &* 31 &+ index), count: size)
            bytes[0] = UInt8(sender)
            bytes[1] = UInt8(index)
            return bytes
        }
        let failures = Mutex(0)
        let threads = (0..<senders).map { sender in
            Thread {
                for index in 0..<perSender {
                    while true {
                        do {
                            try mac.send(frame(sender, index))
                            break
                        } catch let error as ConnectionError where error.kind == .backpressure {
                            if mac.waitUntilWritable(timeout: 10) { continue }
                        } catch {}
                        failures.withLock { $0 += 1 }
                        return
                    }
                }
            }
        }
        for thread in threads { thread.start() }
        var next = [Int](repeating: 0, count: senders)
        for _ in 0..<(senders * perSender) {
            let received = try expectMessage(phone, timeout: 10)
            let sender = Int(received.first ?? 255)
            try #require(sender < senders, "a frame from sender \(sender), \(received.count) bytes")
            #expect(received == frame(sender, next[sender]), "sender \(sender)'s frame \(next[sender])")
            next[sender] += 1
        }
        #expect(next == [Int](repeating: perSender, count: senders))
        #expect(failures.withLock { $0 } == 0)
    }
}
