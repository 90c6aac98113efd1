import Foundation
import Glibc
import HerdrCrypto
import RelayProtocol

/// The load driver of the relay benchmark. It is not the relay's code: it writes the client side
/// of RFC 6455 by hand (fixed mask key, pre-built frames) and speaks the admission JSON as text,
/// so whatever it measures is the relay, not a shared codec.
enum RelayBenchDriver {
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    static let maskKey: [UInt8] = [0x37, 0xfa, 0x21, 0x3d]

    /// A masked client frame.
    static func frame(opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            out.append(0x80 | UInt8(payload.count))
        } else if payload.count <= 0xFFFF {
            out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                out.append(UInt8(truncatingIfNeeded: payload.count >> shift))
            }
        }
        out += maskKey
        out.reserveCapacity(out.count + payload.count)
        for (index, byte) in payload.enumerated() { out.append(byte ^ maskKey[index & 3]) }
        return out
    }

    static func upgradeRequest(room: String) -> [UInt8] {
        Array(
            ("GET / HTTP/1.1\r\nHost: relay.bench\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "User-Agent: iTerm2Companion\r\nx-relay-room: \(room)\r\n\r\n").utf8)
    }

    static func hello(_ role: RelayRole) -> [UInt8] {
        frame(opcode: 1, Array("{\"v\":1,\"role\":\"\(role.rawValue)\"}".utf8))
    }

    /// A blocking TCP connection from `source` (any 127.x address) to the bench server.
    static func connect(port: UInt16, source: String, blocking: Bool = true) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | (blocking ? 0 : Int32(SOCK_NONBLOCK.rawValue)), 0)
        guard fd >= 0 else { throw Failure("socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // IP_BIND_ADDRESS_NO_PORT (24): pick the port at connect time, knowing the destination,
        // instead of searching every bound port at bind time (slow with 100,000 sockets).
        setsockopt(fd, Int32(IPPROTO_IP), 24, &one, socklen_t(MemoryLayout<Int32>.size))
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure("bind \(source): \(String(cString: strerror(errno)))")
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, size) }
        }
        guard connected == 0 || (!blocking && errno == EINPROGRESS) else {
            close(fd)
            throw Failure("connect from \(source): \(String(cString: strerror(errno)))")
        }
        return fd
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure("send: \(String(cString: strerror(errno)))") }
            offset += count
        }
    }

    static func readExactly(_ fd: Int32, _ count: Int, into buffer: inout [UInt8]) throws {
        if buffer.count < count { buffer = [UInt8](repeating: 0, count: count) }
        var offset = 0
        while offset < count {
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + offset, count - offset, 0) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { throw Failure("recv: connection ended") }
            offset += got
        }
    }

    /// Reads one unmasked server frame (blocking): opcode and payload.
    static func readFrame(_ fd: Int32) throws -> (UInt8, [UInt8]) {
        var head: [UInt8] = []
        try readExactly(fd, 2, into: &head)
        let opcode = head[0] & 0x0F
        var length = Int(head[1] & 0x7F)
        if length == 126 {
            var extended: [UInt8] = []
            try readExactly(fd, 2, into: &extended)
            length = Int(extended[0]) << 8 | Int(extended[1])
        } else if length == 127 {
            var extended: [UInt8] = []
            try readExactly(fd, 8, into: &extended)
            length = extended.prefix(8).reduce(0) { $0 << 8 | Int($1) }
        }
        var payload: [UInt8] = []
        if length > 0 { try readExactly(fd, length, into: &payload) }
        return (opcode, Array(payload.prefix(length)))
    }

    /// Reads the 101 response head (blocking).
    static func readUpgradeResponse(_ fd: Int32) throws {
        var head: [UInt8] = []
        var byte: [UInt8] = [0]
        while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
            try readExactly(fd, 1, into: &byte)
            head.append(byte[0])
            guard head.count < 8192 else { throw Failure("upgrade response head too long") }
        }
        guard head.starts(with: Array("HTTP/1.1 101".utf8)) else {
            throw Failure("upgrade refused: \(String(decoding: head.prefix(60), as: UTF8.self))")
        }
    }

    /// Opens a socket and runs admission (blocking). `sign` turns the nonce into a proof JSON.
    static func admit(
        port: UInt16, source: String, room: String, role: RelayRole, proof: ([UInt8]) -> String = { _ in "{}" }
    ) throws -> Int32 {
        let fd = try connect(port: port, source: source)
        do {
            try writeAll(fd, upgradeRequest(room: room) + hello(role))
            try readUpgradeResponse(fd)
            let (_, challengeText) = try readFrame(fd)
            guard let challenge = RelayChallenge.parse(String(decoding: challengeText, as: UTF8.self)) else {
                throw Failure("no challenge: \(String(decoding: challengeText, as: UTF8.self))")
            }
            try writeAll(fd, frame(opcode: 1, Array(proof(challenge.nonce).utf8)))
            let (_, resultText) = try readFrame(fd)
            guard case .admitted = RelayResult.parse(String(decoding: resultText, as: UTF8.self)) else {
                throw Failure("not admitted as \(role.rawValue): \(String(decoding: resultText, as: UTF8.self))")
            }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    /// The source address of client `index` when each address takes at most `perAddress` clients:
    /// 127.1.0.1, 127.1.0.2, … (the whole 127/8 routes to loopback on Linux).
    static func sourceAddress(_ index: Int, perAddress: Int, block: Int = 1) -> String {
        let address = index / perAddress
        return "127.\(block).\(address / 250).\(address % 250 + 1)"
    }
}
