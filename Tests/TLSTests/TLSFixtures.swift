import Foundation
import Glibc
import Plumbing
import TLS
import TestSupport

/// What a test expects to see within `seconds`, else a failure naming `what`.
struct Deadline {
    let end: Date
    let what: String
    init(_ seconds: Double, _ what: String) {
        end = Date().addingTimeInterval(seconds)
        self.what = what
    }

    /// Milliseconds left (at most 200, so loops recheck), or a thrown timeout.
    func remaining() throws -> Int32 {
        let left = end.timeIntervalSinceNow
        guard left > 0 else { throw FixtureError("timed out: \(what)") }
        return Int32(min(left, 0.2) * 1000) + 1
    }
}

/// Waits (bounded by `deadline`) until one of the descriptors is ready for what it asks.
func waitReady(_ interests: [(fd: Int32, events: Int16)], _ deadline: Deadline) throws {
    var fds = interests.filter { $0.events != 0 }.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
    let timeout = try deadline.remaining()
    _ = poll(&fds, nfds_t(fds.count), timeout)
}

func setNonBlocking(_ fd: Int32) {
    _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
}

/// A TCP listener on 127.0.0.1 at a port the kernel picks. Also makes the test process ignore
/// SIGPIPE, as the programs that use TLS do.
final class LoopbackListener {
    let fd: Int32
    let port: UInt16

    init() throws {
        signal(SIGPIPE, SIG_IGN)
        (fd, port) = try LoopbackSocket.listen()
        setNonBlocking(fd)
    }

    deinit { close(fd) }

    /// The next connection, as a non-blocking socket.
    func accept(timeout: Double = 10) throws -> Int32 {
        let deadline = Deadline(timeout, "a connection on port \(port)")
        while true {
            let client = Glibc.accept(fd, nil, nil)
            if client >= 0 {
                setNonBlocking(client)
                return client
            }
            guard errno == EAGAIN || errno == EINTR else {
                throw FixtureError("accept failed: \(String(cString: strerror(errno)))")
            }
            try waitReady([(fd, Int16(POLLIN))], deadline)
        }
    }

    /// A non-blocking socket connected to `port` on 127.0.0.1 (the connect itself blocks: it is loopback).
    static func connect(to port: UInt16) throws -> Int32 {
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
            throw FixtureError("connect to 127.0.0.1:\(port) failed: \(String(cString: strerror(errno)))")
        }
        setNonBlocking(fd)
        return fd
    }

    /// A connected pair of non-blocking sockets: (client end, server end).
    func pair() throws -> (client: Int32, server: Int32) {
        let client = try Self.connect(to: port)
        do {
            return (client, try accept())
        } catch {
            close(client)
            throw error
        }
    }
}

/// How a connection's handshake ended (nil while it is still going).
enum HandshakeOutcome {
    case done
    case failed(TLSError)

    var error: TLSError? {
        if case .failed(let error) = self { return error }
        return nil
    }
}

/// Drives the handshakes of `connections` (each on its own socket) from this thread until every
/// one has finished or failed.
func handshakeAll(_ connections: [TLSConnection], timeout: Double = 10) throws -> [HandshakeOutcome] {
    var outcomes = [HandshakeOutcome?](repeating: nil, count: connections.count)
    let deadline = Deadline(timeout, "TLS handshakes")
    while true {
        var interests: [(fd: Int32, events: Int16)] = []
        for (index, connection) in connections.enumerated() where outcomes[index] == nil {
            switch connection.handshake() {
            case .done: outcomes[index] = .done
            case .failed(let error): outcomes[index] = .failed(error)
            case .wantRead: interests.append((connection.fd, Int16(POLLIN)))
            case .wantWrite: interests.append((connection.fd, Int16(POLLOUT)))
            }
        }
        if interests.isEmpty { return outcomes.map { $0! } }
        try waitReady(interests, deadline)
    }
}

/// One side of a test stream: sends `outgoing`, keeps what it receives, notices the peer's close.
final class Endpoint {
    let connection: TLSConnection
    let outgoing: [UInt8]
    private(set) var sent = 0
    private(set) var received: [UInt8] = []
    private(set) var peerClosed = false
    /// The poll events the last `pump()` ended waiting for.
    private(set) var events: Int16 = 0
    /// Smaller than a TLS record, so reads leave plaintext buffered inside OpenSSL.
    private var scratch = [UInt8](repeating: 0, count: 5000)

    init(_ connection: TLSConnection, sending outgoing: [UInt8] = []) {
        self.connection = connection
        self.outgoing = outgoing
    }

    /// Writes and reads as far as the socket allows.
    func pump() throws {
        events = 0
        writing: while sent < outgoing.count {
            let result = outgoing.withUnsafeBytes { connection.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }
            switch result {
            case .bytes(let count): sent += count
            case .wantWrite:
                events |= Int16(POLLOUT)
                break writing
            case .wantRead:
                events |= Int16(POLLIN)
                break writing
            case .closed: throw FixtureError("write: peer closed after \(sent) bytes")
            case .failed(let error): throw error
            }
        }
        reading: while !peerClosed {
            let result = scratch.withUnsafeMutableBytes { connection.read(into: $0) }
            switch result {
            case .bytes(let count): received += scratch[..<count]
            case .wantRead:
                events |= Int16(POLLIN)
                break reading
            case .wantWrite:
                events |= Int16(POLLOUT)
                break reading
            case .closed: peerClosed = true
            case .failed(let error): throw error
            }
        }
    }
}

/// Pumps both endpoints until `done` holds.
func pump(_ endpoints: [Endpoint], timeout: Double = 30, _ what: String, until done: () -> Bool) throws {
    let deadline = Deadline(timeout, what)
    while true {
        for endpoint in endpoints { try endpoint.pump() }
        if done() { return }
        try waitReady(endpoints.map { ($0.connection.fd, $0.events) }, deadline)
    }
}

/// A child process with its standard input and output on pipes (stderr to a file), killed by its
/// PID when the test is done with it.
final class PipedChild {
    let process: ChildProcess
    let input: Int32
    let output: Int32
    let errorFile: URL
    private(set) var collected: [UInt8] = []
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], errorFile: URL) throws {
        let stdin = try PipePair()
        let stdout = try PipePair(nonBlockingRead: true)
        let stderr = open(errorFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(stdin.read)
            close(stdout.write)
            if stderr >= 0 { close(stderr) }
        }
        self.errorFile = errorFile
        do {
            process = try ChildProcess(
                executable, arguments, stdin: stdin.read, stdout: stdout.write, stderr: stderr)
        } catch {
            close(stdin.write)
            close(stdout.read)
            throw error
        }
        input = stdin.write
        output = stdout.read
    }

    var errors: String { (try? readText(errorFile)) ?? "" }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard Glibc.write(input, bytes, bytes.count) == bytes.count else {
            throw FixtureError("writing to child failed")
        }
    }

    /// Everything the child printed, once it includes `text`.
    func output(containing text: String, timeout: Double = 10) throws -> String {
        try output(until: { $0.contains(text) }, "child output containing \(text.debugDescription)", timeout: timeout)
    }

    /// The first whole line the child printed that starts with `prefix`, without its newline.
    func line(startingWith prefix: String, timeout: Double = 10) throws -> String {
        let match: (String) -> Substring? = { seen in
            seen.split(separator: "\n", omittingEmptySubsequences: false).dropLast().first { $0.hasPrefix(prefix) }
        }
        return String(
            match(try output(until: { match($0) != nil }, "a line starting with \(prefix)", timeout: timeout))!)
    }

    private func output(until done: (String) -> Bool, _ what: String, timeout: Double) throws -> String {
        let deadline = Deadline(timeout, what)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let seen = String(decoding: collected, as: UTF8.self)
            if done(seen) { return seen }
            let count = Glibc.read(output, &buffer, buffer.count)
            if count > 0 {
                collected += buffer[..<count]
                continue
            }
            if count == 0 { throw FixtureError("child closed its output before \(what): \(seen)\n\(errors)") }
            do {
                try waitReady([(output, Int16(POLLIN))], deadline)
            } catch {
                throw FixtureError("\(error); printed: \(seen)\nstderr: \(errors)")
            }
        }
    }

    deinit { finish(timeout: 0) }

    /// Closes its input and waits for it to exit, then terminates it by PID if it has not.
    @discardableResult
    func finish(timeout: Double = 5) -> Int32 {
        if let exitStatus { return exitStatus }
        close(input)
        close(output)
        var status = process.wait(timeout: timeout)
        if status == nil {
            process.signal(SIGTERM)
            status = process.wait(timeout: 5)
        }
        if status == nil {
            process.signal(SIGKILL)
            status = process.wait()
        }
        exitStatus = status
        return status!
    }
}

/// Random bytes, so a misplaced chunk cannot go unnoticed.
func randomBytes(_ count: Int) -> [UInt8] {
    var generator = SystemRandomNumberGenerator()
    return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
}
