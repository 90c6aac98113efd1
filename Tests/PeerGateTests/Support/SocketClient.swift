import Foundation
import Glibc
import PeerGate
import TestSupport

/// A plain blocking TCP client for the listener tests, with bounded waits.
final class SocketClient {
    let fd: Int32

    /// What a read saw.
    enum ReadOutcome: Equatable {
        case data([UInt8])
        case endOfFile
        case reset
        case timedOut
        case failed(Int32)
    }

    /// Connects to `host`:`port`, optionally from `source` (e.g. 127.0.0.2).
    init(host: String, port: UInt16, source: String? = nil, timeout: Int = 5) throws {
        guard let ip = IPAddress(numeric: host) else { throw FixtureError("\(host) is not numeric") }
        let family = ip.family == .ipv4 ? AF_INET : AF_INET6
        fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        var time = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            guard Self.withAddress(source, 0, { bind(fd, $0, $1) }) == 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw FixtureError("bind \(source): \(reason)")
            }
        }
        guard Self.withAddress(host, port, { connect(fd, $0, $1) }) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw FixtureError("connect \(host) port \(port): \(reason)")
        }
    }

    deinit { close(fd) }

    @discardableResult
    func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// One read.
    func readOnce() -> ReadOutcome {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count > 0 { return .data(Array(buffer[0..<count])) }
        if count == 0 { return .endOfFile }
        switch errno {
        case ECONNRESET: return .reset
        case EAGAIN: return .timedOut
        default: return .failed(errno)
        }
    }

    /// Reads until end of file, a reset or the timeout; returns what was read and how it ended.
    func readToEnd() -> (bytes: [UInt8], end: ReadOutcome) {
        var all: [UInt8] = []
        while true {
            let outcome = readOnce()
            guard case .data(let bytes) = outcome else { return (all, outcome) }
            all += bytes
        }
    }

    private static func withAddress<Result>(
        _ host: String, _ port: UInt16, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Result
    ) -> Result {
        let ip = IPAddress(numeric: host)!
        if ip.family == .ipv4 {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            withUnsafeMutableBytes(of: &address.sin_addr) { $0.copyBytes(from: ip.bytes) }
            return withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_port = port.bigEndian
        withUnsafeMutableBytes(of: &address.sin6_addr) { $0.copyBytes(from: ip.bytes) }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body($0, socklen_t(MemoryLayout<sockaddr_in6>.size))
            }
        }
    }
}

/// Waits (polling) until `condition` holds or `timeout` seconds pass; true if it held.
func eventually(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

/// An HTTP response split into its parts, for checking Content-Length against the body.
struct ParsedHTTPResponse {
    let statusLine: String
    let headers: [String: String]
    let body: [UInt8]

    init(_ bytes: [UInt8]) throws {
        let separator: [UInt8] = [0x0d, 0x0a, 0x0d, 0x0a]
        guard bytes.count >= 4,
            let end = (0...(bytes.count - 4)).first(where: { Array(bytes[$0..<($0 + 4)]) == separator })
        else { throw FixtureError("no header end in \(String(decoding: bytes, as: UTF8.self).debugDescription)") }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        statusLine = lines[0]
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw FixtureError("bad header \(line)") }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        self.headers = headers
        body = Array(bytes[(end + 4)...])
    }
}
