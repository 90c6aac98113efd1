import Foundation
import Glibc
import Synchronization
import TestSupport

/// A relay on the path that misbehaves once: a TCP proxy in front of the relay that passes the
/// HTTP upgrade through, then reads the WebSocket frames of each direction and, on the phone's
/// connection, alters or replays one binary frame (the `index`-th of its direction, counted from 1).
/// Everything else passes unchanged. Test-only frame parsing: headers, lengths, masks.
final class TamperingProxy: @unchecked Sendable {
    enum Fault: Sendable {
        /// Flip a bit of the frame's last payload byte.
        case alter
        /// Send the frame twice.
        case replay
    }

    enum Direction: Sendable {
        /// Device → relay → computer.
        case fromPhone
        /// Computer → relay → device.
        case toPhone
    }

    let port: UInt16
    private let listenFD: Int32
    private let target = Mutex<UInt16>(0)
    private let fault: Fault
    private let direction: Direction
    private let index: Int
    private let done = Mutex(false)
    /// Whether the fault was applied.
    var applied: Bool { done.withLock { $0 } }

    init(fault: Fault, direction: Direction, index: Int) throws {
        self.fault = fault
        self.direction = direction
        self.index = index
        (listenFD, port) = try LoopbackSocket.listen()
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { close(listenFD) }

    /// Where the relay listens (set once it is started).
    func forward(to port: UInt16) { target.withLock { $0 = port } }

    private func acceptLoop() {
        while true {
            let client = accept(listenFD, nil, nil)
            guard client >= 0 else { return }
            guard let upstream = try? Self.connectLoopback(target.withLock { $0 }) else {
                close(client)
                continue
            }
            let connection = Connection()
            for (from, to, clientSide) in [(client, upstream, true), (upstream, client, false)] {
                let thread = Thread { [self] in
                    pump(from: from, to: to, fromClient: clientSide, connection)
                    shutdown(to, Int32(SHUT_WR))
                }
                thread.start()
            }
        }
    }

    /// What the two directions of one connection share.
    private final class Connection: @unchecked Sendable {
        let lock = NSLock()
        var isPhone = false
    }

    private func pump(from: Int32, to: Int32, fromClient: Bool, _ connection: Connection) {
        var reader = Reader(fd: from)
        // The HTTP head, verbatim.
        guard let head = reader.readHead(), Self.writeAll(to, head) else { return }
        let text = String(decoding: head, as: UTF8.self).lowercased()
        let isWebSocket = fromClient ? text.contains("upgrade: websocket") : text.hasPrefix("http/1.1 101")
        guard isWebSocket else {
            // Plain HTTP (/register, /attest/challenge…): passed through untouched.
            guard Self.writeAll(to, reader.buffer) else { return }
            var chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let got = read(from, &chunk, chunk.count)
                if got < 0 && errno == EINTR { continue }
                guard got > 0, Self.writeAll(to, Array(chunk[0..<got])) else { return }
            }
        }
        var binaryFrames = 0
        while let frame = reader.readFrame() {
            var bytes = frame.bytes
            if frame.opcode == 1 && fromClient, let text = String(bytes: frame.payload, encoding: .utf8),
                text.contains("\"role\":\"phone\"")
            {
                connection.lock.withLock { connection.isPhone = true }
            }
            var copies = 1
            if frame.opcode == 2 || (frame.opcode == 0 && frame.isBinaryContinuation) {
                binaryFrames += 1
                let phone = connection.lock.withLock { connection.isPhone }
                let wanted = direction == .fromPhone ? fromClient : !fromClient
                if phone && wanted && binaryFrames == index && !done.withLock({ $0 }) {
                    done.withLock { $0 = true }
                    switch fault {
                    case .alter: bytes[bytes.count - 1] ^= 0x01
                    case .replay: copies = 2
                    }
                }
            }
            for _ in 0..<copies { guard Self.writeAll(to, bytes) else { return } }
        }
    }

    /// A frame as it came: the raw bytes, and the opcode and unmasked payload for looking at.
    struct Frame {
        var bytes: [UInt8]
        var opcode: UInt8
        var payload: [UInt8]
        var isBinaryContinuation = false
    }

    struct Reader {
        let fd: Int32
        var buffer: [UInt8] = []

        mutating func fill(_ count: Int) -> Bool {
            var chunk = [UInt8](repeating: 0, count: 65536)
            while buffer.count < count {
                let got = read(fd, &chunk, chunk.count)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return false }
                buffer += chunk[0..<got]
            }
            return true
        }

        mutating func readHead() -> [UInt8]? {
            while true {
                if let end = buffer.indices.dropLast(3).first(where: { buffer[$0..<($0 + 4)] == [13, 10, 13, 10] }) {
                    let head = Array(buffer[0..<(end + 4)])
                    buffer.removeFirst(end + 4)
                    return head
                }
                guard fill(buffer.count + 1) else { return nil }
            }
        }

        mutating func readFrame() -> Frame? {
            guard fill(2) else { return nil }
            let opcode = buffer[0] & 0x0F
            let masked = buffer[1] & 0x80 != 0
            var length = Int(buffer[1] & 0x7F)
            var headerSize = 2
            if length == 126 {
                guard fill(4) else { return nil }
                length = Int(buffer[2]) << 8 | Int(buffer[3])
                headerSize = 4
            } else if length == 127 {
                guard fill(10) else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(buffer[$1]) }
                headerSize = 10
            }
            let maskSize = masked ? 4 : 0
            let total = headerSize + maskSize + length
            guard fill(total) else { return nil }
            let bytes = Array(buffer[0..<total])
            var payload = Array(bytes[(headerSize + maskSize)...])
            if masked {
                let key = Array(bytes[headerSize..<(headerSize + 4)])
                for index in payload.indices { payload[index] ^= key[index % 4] }
            }
            buffer.removeFirst(total)
            return Frame(bytes: bytes, opcode: opcode, payload: payload)
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    static func connectLoopback(_ port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            throw FixtureError("the proxy could not reach the relay")
        }
        return fd
    }
}
