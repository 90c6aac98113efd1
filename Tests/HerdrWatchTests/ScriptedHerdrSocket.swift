import Foundation
import Glibc
import Synchronization
import TestSupport

/// A server on a Unix socket that answers each connection as the test says (herdr's good
/// answers, nothing, garbage, a line past every bound), to test the socket client's time limits
/// and bounds against a real socket. Each connection runs `behaviour` on a thread of its own,
/// with the request line it read.
final class ScriptedHerdrSocket: Sendable {
    let path: String
    private let listener: Int32
    private let shared = Shared()

    private final class Shared: Sendable {
        let connections = Mutex<[Int32]>([])
        let hungUp = Atomic<Int>(0)
    }

    /// Connections held open that the client closed.
    var clientHangUps: Int { shared.hungUp.load(ordering: .relaxed) }

    /// What a connection does after reading its first line (the request): the bytes to write,
    /// then whether to keep the connection open (a frozen server) or close it.
    struct Reply: Sendable {
        var bytes: [UInt8]
        var holdOpen = false

        static func lines(_ lines: String...) -> Reply { Reply(bytes: Array(lines.map { $0 + "\n" }.joined().utf8)) }
        static let silence = Reply(bytes: [], holdOpen: true)
    }

    init(path: String, behaviour: @escaping @Sendable (String) -> Reply) throws {
        self.path = path
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw FixtureError("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        listener = fd
        let accepting = Thread { [shared] in
            while true {
                let client = accept(fd, nil, nil)
                guard client >= 0 else { return }
                shared.connections.withLock { $0.append(client) }
                let serving = Thread {
                    var request: [UInt8] = []
                    var byte: UInt8 = 0
                    while read(client, &byte, 1) == 1, byte != 0x0A { request.append(byte) }
                    let reply = behaviour(String(decoding: request, as: UTF8.self))
                    var offset = 0
                    while offset < reply.bytes.count {
                        let written = reply.bytes[offset...].withUnsafeBytes {
                            send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                        }
                        guard written > 0 else { break }
                        offset += written
                    }
                    guard reply.holdOpen else {
                        shutdown(client, Int32(SHUT_RDWR))
                        return
                    }
                    // Held open: read (and drop) until the client hangs up.
                    while read(client, &byte, 1) == 1 {}
                    shared.hungUp.add(1, ordering: .relaxed)
                }
                serving.start()
            }
        }
        accepting.start()
    }

    /// Stops listening and hangs up every connection.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for client in shared.connections.withLock({ $0 }) { shutdown(client, Int32(SHUT_RDWR)) }
        unlink(path)
    }

    deinit { stop() }
}
