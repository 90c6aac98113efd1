import Foundation
import Glibc
import Synchronization
import TestSupport

/// A TCP proxy in front of the relay whose `cut()` breaks every connection through it at once, as
/// a network dropping would: both sockets of each pair are shut down; new connections pass, unless
/// `refuse` says to close them at once (the device kept away). `freeze()` makes every connection
/// through it silent instead, without a reset, while new ones pass: a path that died unnoticed.
final class CuttingProxy: @unchecked Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let target = Mutex<UInt16>(0)
    private let refusing = Mutex(false)
    /// Client sockets of pairs whose bytes are dropped from now on.
    private let frozen = Mutex<Set<Int32>>([])
    private let live = Mutex<[(client: Int32, upstream: Int32, serial: Int)]>([])
    private let serial = Mutex(0)

    init() throws {
        (listenFD, port) = try LoopbackSocket.listen()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit {
        shutdown(listenFD, Int32(SHUT_RDWR))
        close(listenFD)
        cut()
    }

    func forward(to port: UInt16) { target.withLock { $0 = port } }

    /// Connections accepted so far.
    var accepted: Int { serial.withLock { $0 } }

    /// Drops every byte of the connections open now that came after the first `after` accepted,
    /// both ways, from now on (their sockets stay open); returns how many there were.
    @discardableResult
    func freeze(acceptedAfter after: Int = 0) -> Int {
        let clients = live.withLock { pairs in pairs.filter { $0.serial > after }.map(\.client) }
        frozen.withLock { $0.formUnion(clients) }
        return clients.count
    }

    /// While true, every new connection is closed as soon as it is accepted.
    func refuse(_ on: Bool) { refusing.withLock { $0 = on } }

    /// Breaks every connection now; returns how many there were.
    @discardableResult
    func cut() -> Int {
        // Under the lock: a pair leaves the list before its sockets close, so none is reused here.
        live.withLock { pairs in
            for (a, b, _) in pairs {
                shutdown(a, Int32(SHUT_RDWR))
                shutdown(b, Int32(SHUT_RDWR))
            }
            return pairs.count
        }
    }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { return }
            if refusing.withLock({ $0 }) {
                close(client)
                continue
            }
            guard let upstream = try? TamperingProxy.connectLoopback(target.withLock { $0 }) else {
                close(client)
                continue
            }
            let number = serial.withLock { count in
                count += 1
                return count
            }
            live.withLock { $0.append((client, upstream, number)) }
            let finished = Mutex(0)
            for (from, to) in [(client, upstream), (upstream, client)] {
                let thread = Thread {
                    var buffer = [UInt8](repeating: 0, count: 65536)
                    while true {
                        let count = read(from, &buffer, buffer.count)
                        guard count > 0 else { break }
                        if self.frozen.withLock({ $0.contains(client) }) { continue }
                        guard TamperingProxy.writeAll(to, Array(buffer[0..<count])) else { break }
                    }
                    shutdown(to, Int32(SHUT_WR))
                    // The second pump to end closes both sockets.
                    let last = finished.withLock { count in
                        count += 1
                        return count == 2
                    }
                    if last {
                        self.live.withLock { pairs in
                            pairs.removeAll { $0.0 == client }
                            self.frozen.withLock { _ = $0.remove(client) }
                            close(client)
                            close(upstream)
                        }
                    }
                }
                thread.start()
            }
        }
    }
}
