import Foundation
import Glibc
import Testing

/// Limits the I/O shell enforces before a socket is a WebSocket.
@Suite(.serialized) struct ShellLimitsTests {
    /// A TCP connection to the fixture that sends nothing.
    static func idleConnection(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw HarnessError("connect failed: \(String(cString: strerror(errno)))") }
        return fd
    }

    /// True when the relay ended the connection within `timeout` seconds.
    static func ended(_ fd: Int32, within timeout: Int32) -> Bool {
        var ready = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, timeout) > 0 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) <= 0
    }

    /// One address may hold 64 sockets that are not yet WebSockets; the 65th is closed at once,
    /// and a slot frees when one of the 64 goes.
    @Test func sixtyFifthIdleSocketFromOneAddressIsClosed() throws {
        let relay = try RelayFixture()
        var idle: [Int32] = []
        defer { for fd in idle { close(fd) } }
        for _ in 0..<64 { idle.append(try Self.idleConnection(port: relay.port)) }
        // Let the accept thread hand all 64 to the loop before the next one arrives.
        Thread.sleep(forTimeInterval: 0.3)
        let extra = try Self.idleConnection(port: relay.port)
        defer { close(extra) }
        #expect(Self.ended(extra, within: 2000))
        #expect(!Self.ended(idle[0], within: 100))
        close(idle.removeLast())
        Thread.sleep(forTimeInterval: 0.3)
        let again = try Self.idleConnection(port: relay.port)
        defer { close(again) }
        #expect(!Self.ended(again, within: 300))
    }
}
