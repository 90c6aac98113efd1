import Foundation
import Glibc
import HomeRoad
import Plumbing
import Synchronization
import Testing

/// `HomeConnection` over real TCP sockets on 127.0.0.1 (the home road's options need TCP).
@Suite struct HomeConnectionTests {
    /// A listening socket on 127.0.0.1 and a connected pair: (ours as a HomeConnection, the raw peer fd).
    static func connectedPair(options: HomeConnection.Options = .init()) throws -> (HomeConnection, Int32) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        #expect(ok)
        let port = UInt16(bigEndian: address.sin_port)
        let ownFD = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(ownFD, $0, length) == 0 }
        }
        #expect(connected, "connect to port \(port)")
        let peer = accept(listener, nil, nil)
        #expect(peer >= 0)
        return (try HomeConnection(socket: ownFD, options: options), peer)
    }

    static func readExactly(_ fd: Int32, _ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while out.count < count {
            let n = read(fd, &buffer, min(buffer.count, count - out.count))
            guard n > 0 else { break }
            out += buffer[0..<n]
        }
        return out
    }

    @Test func framesGoOutLengthPrefixedAndComeInWhole() throws {
        let (connection, peer) = try Self.connectedPair()
        defer { close(peer) }
        try connection.send([1, 2, 3])
        #expect(Self.readExactly(peer, 5) == [0, 3, 1, 2, 3])
        let big = [UInt8](repeating: 0xab, count: 65535)
        let wire = [0, 2, 9, 9] + [0xff, 0xff] + big
        #expect(wire.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) } == wire.count)
        #expect(connection.receive(timeout: 5) == .message([9, 9]))
        #expect(connection.receive(timeout: 5) == .message(big))
        #expect(throws: ConnectionError.self) { try connection.send([]) }
        #expect(throws: ConnectionError.self) { try connection.send([UInt8](repeating: 0, count: 65536)) }
        connection.close()
        #expect(connection.waitUntilEnded(timeout: 5) == .closedLocally)
        #expect(throws: ConnectionError.self) { try connection.send([1]) }
    }

    @Test func aPeerBreakingTheFramingEndsTheConnectionAsAProtocolViolation() throws {
        let (connection, peer) = try Self.connectedPair()
        defer { close(peer) }
        let bad: [UInt8] = [0, 0]
        _ = bad.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
        guard case .ended(.failed(let error)) = connection.receive(timeout: 5) else {
            Issue.record("the connection did not end")
            return
        }
        #expect(error.kind == .protocolViolation)
        #expect(Self.readExactly(peer, 1) == [], "our side closed")
    }

    @Test func thePeerClosingIsTheEndAndDeliverGetsWhatWaitedFirst() throws {
        let (connection, peer) = try Self.connectedPair()
        let wire: [UInt8] = [0, 1, 7, 0, 1, 8]
        _ = wire.withUnsafeBytes { write(peer, $0.baseAddress, $0.count) }
        close(peer)
        // Let the frames arrive in the queue before the handler is set.
        #expect(connection.waitUntilEnded(timeout: 5) != nil)
        let seen = Mutex<[FramePipeEvent]>([])
        let done = DispatchSemaphore(value: 0)
        connection.deliver { event in
            seen.withLock { $0.append(event) }
            if case .ended = event { done.signal() }
        }
        #expect(done.wait(timeout: .now() + 5) == .success)
        let events = seen.withLock { $0 }
        #expect(events.prefix(2) == [.message([7]), .message([8])])
        guard case .ended(.failed(let error)) = events.last else {
            Issue.record("no end: \(events)")
            return
        }
        #expect(error.kind == .connectionLost)
    }

    @Test func aStalledPeerFillsTheQueueToItsBoundAndSendFailsWithBackpressure() throws {
        var options = HomeConnection.Options()
        options.maximumQueuedBytes = 256 * 1024
        let (connection, peer) = try Self.connectedPair(options: options)
        defer { close(peer) }
        let frame = [UInt8](repeating: 1, count: 65535)
        var sent = 0
        var refused = false
        // The socket buffers take a few MiB at most; the queue then fills: bounded loop.
        for _ in 0..<4096 {
            do {
                try connection.send(frame)
                sent += 1
            } catch {
                #expect(error.kind == .backpressure)
                refused = true
                break
            }
        }
        #expect(refused, "sent \(sent) frames without backpressure")
        #expect(connection.queuedByteCount <= options.maximumQueuedBytes + frame.count + 2)
        // Reading drains it: every frame sent arrives whole.
        let total = sent * (frame.count + 2)
        let received = Self.readExactly(peer, total)
        #expect(received.count == total)
        connection.close()
    }

    /// A peer that reads nothing holds a close as long as output is queued (up to the close's
    /// time limit); an abandon ends at once, the queue dropped.
    @Test func abandonEndsAtOnceWhatCloseWouldWaitFor() throws {
        var options = HomeConnection.Options()
        options.closeTimeout = 120
        options.maximumQueuedBytes = 256 * 1024
        let (connection, peer) = try Self.connectedPair(options: options)
        defer { close(peer) }
        let frame = [UInt8](repeating: 1, count: 65535)
        for _ in 0..<4096 {
            guard (try? connection.send(frame)) != nil else { break }
        }
        #expect(connection.queuedByteCount > 0, "output waits for the peer")
        connection.close()
        #expect(connection.waitUntilEnded(timeout: 0.5) == nil, "close waits while output is queued")
        connection.abandon()
        #expect(connection.waitUntilEnded(timeout: 20) == .closedLocally)
    }

    @Test func anIPv4PeerOnADualStackSocketIsNamedAsIPv4() throws {
        let listener = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var zero: Int32 = 0
        _ = setsockopt(listener, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        var length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        #expect(bound, "a dual-stack listener on [::]")
        var target = sockaddr_in()
        target.sin_family = sa_family_t(AF_INET)
        target.sin_port = address.sin6_port
        target.sin_addr.s_addr = inet_addr("127.0.0.1")
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(client) }
        let connected = withUnsafeMutablePointer(to: &target) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        #expect(connected)
        let accepted = accept(listener, nil, nil)
        let connection = try HomeConnection(socket: accepted)
        defer { connection.close() }
        #expect(connection.peer == "127.0.0.1", "not ::ffff:127.0.0.1")
    }
}
