import CSystem
import Foundation
import Glibc
import RelayProtocol
import RelayServer
import RelayStorage

/// The processes the relay benchmark measures, each in a process of its own so its memory and
/// CPU are its own: our relay (`relay-child`) and the anchor, a plain TCP splice (`splice-child`).
/// Each prints `port N` on stdout and runs until its stdin closes.
enum RelayBenchChildren {
    /// The origin bench clients sign for.
    static let origin = "https://relay.bench"

    /// The roomSecret of established bench room `index` (deterministic, so driver and relay agree).
    static func roomSecret(_ index: Int) -> [UInt8] {
        var secret = [UInt8](repeating: 0x5a, count: 32)
        withUnsafeBytes(of: UInt64(index).bigEndian) { for (offset, byte) in $0.enumerated() { secret[offset] = byte } }
        return secret
    }

    /// The first line on stdout, which the parent waits for.
    static func announce(port: UInt16) {
        let line = Array("port \(port)\n".utf8)
        _ = line.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
    }

    static func roomName(_ index: Int) -> String {
        RoomName.derive(staticPublicKey: roomSecret(index), pid: "bench")
    }

    /// Raises the open-files limit as far as allowed; returns the limit now in force.
    @discardableResult
    static func raiseDescriptorLimit() -> rlim_t {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let wanted: rlim_t = 400_000
        limit.rlim_max = max(limit.rlim_max, wanted)
        limit.rlim_cur = limit.rlim_max
        if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = limit.rlim_max
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return limit.rlim_cur
    }

    /// The store a child uses: a Redis URL (`redis://…`, `unix://…`) or an SQLite path.
    static func openStore(_ spec: String) throws -> any RelayStore {
        if spec.hasPrefix("redis://") || spec.hasPrefix("unix://") {
            return try RedisRelayStore(address: RedisAddress(url: spec))
        }
        return try SQLiteRelayStore(path: spec)
    }

    /// `relay-child STORE ESTABLISHED [proxied]`: the relay with the protocol's limits, except the
    /// daily byte quota (the splice run moves more than 512 MiB per room), over SQLite or Redis
    /// (`STORE` is a path or a Redis URL), with `ESTABLISHED` rooms registered up front for the
    /// signed-join run; `proxied` takes client addresses from X-Forwarded-For (behind HAProxy).
    static func runRelay(database: String, established: Int, proxied: Bool = false) -> Int32 {
        raiseDescriptorLimit()
        do {
            let store = try openStore(database)
            let now = Int64(time(nil))
            for index in 0..<established {
                let key = try RelayJoinKey(roomSecret: roomSecret(index))
                _ = try store.registerVerifier(key.verifier.raw, room: roomName(index), now: now)
            }
        } catch {
            FileHandle.standardError.write(Data("relay-child: \(error)\n".utf8))
            return 1
        }
        var configuration = RelayConfiguration(origin: origin, attestationRequired: false)
        configuration.bytesPerDay = .max
        let frozen = configuration
        let server: RelayServer
        do {
            var options = RelayServer.Options(bindAddress: "127.0.0.1")
            if proxied { options.clientAddress = .forwardedFor(hops: 1) }
            server = try RelayServer(options: options) {
                RelayCore(configuration: frozen, store: try openStore(database), clock: SystemRelayClock())
            }
        } catch {
            FileHandle.standardError.write(Data("relay-child: \(error)\n".utf8))
            return 1
        }
        announce(port: server.port)
        var byte: UInt8 = 0
        while read(0, &byte, 1) > 0 {}
        server.shutdown()
        return 0
    }

    /// `splice-child`: the anchor. Accepted connections are paired in arrival order (1st with 2nd,
    /// 3rd with 4th…) and every byte read from one is written to the other, with the same
    /// backpressure rule as the relay (stop reading a side while its peer has 4 MiB queued).
    /// `splice-child --forward PORT`: each accepted connection is paired with a fresh one to
    /// 127.0.0.1:PORT instead (a TCP forwarder: one relay hop on another program's path).
    static func runSplice(forwardPort: UInt16? = nil) -> Int32 {
        raiseDescriptorLimit()
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 4096) == 0 else { return 1 }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(listener, $0, &length) }
        }
        announce(port: UInt16(bigEndian: address.sin_port))
        let epoll = csystem_epoll_create()
        _ = csystem_epoll_ctl(epoll, 1, listener, csystem_epollin())
        _ = csystem_epoll_ctl(epoll, 1, 0, csystem_epollin())
        final class Side {
            let fd: Int32
            var peer: Side?
            var pending: [UInt8] = []
            var start = 0
            var paused = false
            init(fd: Int32) { self.fd = fd }
        }
        var sides: [Int32: Side] = [:]
        var waiting: Side?
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024 * 1024, alignment: 16)  // as the relay
        var fds = [Int32](repeating: 0, count: 256)
        var events = [UInt32](repeating: 0, count: 256)
        func interest(_ side: Side) {
            var mask: UInt32 = side.paused ? 0 : csystem_epollin()
            if side.pending.count > side.start { mask |= csystem_epollout() }
            _ = csystem_epoll_ctl(epoll, 3, side.fd, mask)
        }
        func flush(_ side: Side) {
            while side.start < side.pending.count {
                let count = side.pending.withUnsafeBytes {
                    send(side.fd, $0.baseAddress! + side.start, $0.count - side.start, Int32(MSG_NOSIGNAL))
                }
                if count <= 0 { break }
                side.start += count
            }
            if side.start == side.pending.count {
                side.pending.removeAll(keepingCapacity: true)
                side.start = 0
            }
            if let peer = side.peer, peer.paused, side.pending.count - side.start < 1024 * 1024 {
                peer.paused = false
                interest(peer)
            }
            interest(side)
        }
        while true {
            let count = fds.withUnsafeMutableBufferPointer { f in
                events.withUnsafeMutableBufferPointer { e in
                    csystem_epoll_wait(epoll, f.baseAddress, e.baseAddress, 256, 1000)
                }
            }
            for index in 0..<Int(max(count, 0)) {
                let fd = fds[index]
                if fd == 0 { return 0 }  // stdin closed: done
                if fd == listener {
                    while true {
                        let accepted = csystem_accept_cloexec(listener)
                        if accepted < 0 { break }
                        _ = fcntl(accepted, F_SETFL, fcntl(accepted, F_GETFL) | O_NONBLOCK)
                        setsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
                        let side = Side(fd: accepted)
                        sides[accepted] = side
                        if let forwardPort {
                            guard let outbound = try? RelayBenchDriver.connect(port: forwardPort, source: "127.0.0.1")
                            else {
                                close(accepted)
                                sides[accepted] = nil
                                continue
                            }
                            _ = fcntl(outbound, F_SETFL, fcntl(outbound, F_GETFL) | O_NONBLOCK)
                            let other = Side(fd: outbound)
                            sides[outbound] = other
                            other.peer = side
                            side.peer = other
                            _ = csystem_epoll_ctl(epoll, 1, outbound, csystem_epollin())
                        } else if let other = waiting {
                            other.peer = side
                            side.peer = other
                            waiting = nil
                        } else {
                            waiting = side
                        }
                        _ = csystem_epoll_ctl(epoll, 1, accepted, csystem_epollin())
                    }
                    continue
                }
                guard let side = sides[fd] else { continue }
                if events[index] & csystem_epollout() != 0 { flush(side) }
                if events[index] & (csystem_epollin() | csystem_epollhup() | csystem_epollerr()) != 0 && !side.paused {
                    let got = recv(fd, buffer.baseAddress, buffer.count, 0)
                    if got == 0 || (got < 0 && errno != EAGAIN) {
                        close(fd)
                        sides[fd] = nil
                        if let peer = side.peer {
                            close(peer.fd)
                            sides[peer.fd] = nil
                        }
                        continue
                    }
                    guard got > 0, let peer = side.peer else { continue }
                    var sent = 0
                    if peer.pending.isEmpty {
                        // Nothing queued: straight from the read buffer, as the relay does.
                        sent = max(0, send(peer.fd, buffer.baseAddress, got, Int32(MSG_NOSIGNAL)))
                    }
                    if sent < got {
                        peer.pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[sent..<got]))
                        flush(peer)
                    }
                    if peer.pending.count - peer.start > 4 * 1024 * 1024 {
                        side.paused = true
                        interest(side)
                    }
                }
            }
        }
    }
}
