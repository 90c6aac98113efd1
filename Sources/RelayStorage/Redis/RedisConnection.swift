import CHiredis
import Glibc

/// A Redis reply, copied out of hiredis' reply object.
enum RedisReply: Equatable {
    case string([UInt8])
    case status(String)
    case integer(Int64)
    case null
    case array([RedisReply])
    /// An error reply (`-ERR …`): the command ran and Redis refused it; the connection is fine.
    case error(String)

    /// Replies nest no deeper than this; the store's commands and scripts answer in two levels.
    static let maximumDepth = 4
}

/// One blocking hiredis connection (`redisContext *`) with a timeout on every read and write, so a
/// Redis that stops answering costs at most that long. Once an I/O error or a timeout happened
/// the context is unusable (`isBroken`) and the owner connects anew. Not thread-safe: one owner.
final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    let address: RedisAddress
    private(set) var isBroken = false
    /// Whether the process ignored SIGPIPE when the connection was made (herdr-relay does, first
    /// thing): then no signal needs blocking around each call.
    private let ignoresSIGPIPE: Bool

    /// Connects, authenticates and selects the database; each step's failure is thrown with
    /// what Redis or the socket said.
    init(address: RedisAddress, timeoutMilliseconds: Int) throws(RelayStoreError) {
        let timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
        let made: UnsafeMutablePointer<redisContext>?
        switch address.endpoint {
        case .tcp(let host, let port): made = redisConnectWithTimeout(host, Int32(port), timeout)
        case .unix(let path): made = redisConnectUnixWithTimeout(path, timeout)
        }
        guard let made else { throw RelayStoreError("Redis at \(address): cannot allocate a connection") }
        guard made.pointee.err == 0 else {
            let message = Self.errorText(made)
            redisFree(made)
            throw RelayStoreError("Redis at \(address) is unreachable: \(message)", unavailable: true)
        }
        guard redisSetTimeout(made, timeout) == REDIS_OK else {
            let message = Self.errorText(made)
            redisFree(made)
            throw RelayStoreError("Redis at \(address): setting the timeout failed: \(message)", unavailable: true)
        }
        context = made
        self.address = address
        var disposition = sigaction()
        ignoresSIGPIPE =
            sigaction(SIGPIPE, nil, &disposition) == 0
            && unsafeBitCast(disposition.__sigaction_handler.sa_handler, to: Int.self) == 1  // SIG_IGN
        if let password = address.password {
            let arguments = address.user.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            try expectOK(arguments.map { Array($0.utf8) }, "AUTH")
        }
        if address.database != 0 {
            try expectOK([Array("SELECT".utf8), Array(String(address.database).utf8)], "SELECT \(address.database)")
        }
    }

    deinit { redisFree(context) }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            return String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
        }
    }

    private func expectOK(_ arguments: [[UInt8]], _ what: String) throws(RelayStoreError) {
        let reply = try command(arguments)
        guard reply == .status("OK") else {
            // An error reply to AUTH names no secret; a wrong database number says so.
            throw RelayStoreError("Redis at \(address) refused \(what): \(reply.text)", unavailable: true)
        }
    }

    /// Sends one command (binary-safe arguments) and waits for its reply. An I/O error or a
    /// timeout breaks the connection and throws an `unavailable` error; an error reply is returned.
    func command(_ arguments: [[UInt8]]) throws(RelayStoreError) -> RedisReply {
        guard !isBroken else { throw RelayStoreError("Redis at \(address): connection lost", unavailable: true) }
        let raw = ignoresSIGPIPE ? send(arguments) : Self.withoutSIGPIPE { send(arguments) }
        guard let raw else {
            isBroken = true
            throw RelayStoreError(
                "Redis at \(address): connection lost: \(Self.errorText(context))", unavailable: true)
        }
        defer { freeReplyObject(raw) }
        return Self.copy(raw.assumingMemoryBound(to: redisReply.self), depth: 0)
    }

    /// True when Redis sent something not asked for, or closed the connection: for a connection
    /// that only waits (a subscription nobody publishes to), it is gone. Never blocks.
    var hasUnsolicitedInput: Bool {
        var ready = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
        let count = poll(&ready, 1, 0)
        // Readable, hung up, in error, or poll failing for another reason than a signal.
        return count > 0 || (count < 0 && errno != EINTR)
    }

    private func send(_ arguments: [[UInt8]]) -> UnsafeMutableRawPointer? {
        let lengths = arguments.map(\.count)
        // hiredis takes C arrays of pointers; keep every argument's storage alive for the call.
        let raw: UnsafeMutableRawPointer? = Self.withPointers(arguments) { pointers in
            var pointers = pointers
            return lengths.withUnsafeBufferPointer { lengthBuffer in
                pointers.withUnsafeMutableBufferPointer { pointerBuffer in
                    redisCommandArgv(
                        context, Int32(arguments.count), pointerBuffer.baseAddress, lengthBuffer.baseAddress)
                }
            }
        }
        return raw
    }

    /// hiredis writes with write(2): to a server that has gone, that raises SIGPIPE, which would
    /// end a process that does not ignore it. The signal is blocked on this thread for the call
    /// and one it raised is taken before the mask is restored; the write's EPIPE is the error.
    private static func withoutSIGPIPE<Result>(_ body: () -> Result) -> Result {
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        let result = body()
        var pending = sigset_t()
        if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1, sigismember(&previous, SIGPIPE) == 0 {
            var noWait = timespec()
            _ = sigtimedwait(&pipeOnly, nil, &noWait)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return result
    }

    private static func withPointers<Result>(
        _ arguments: [[UInt8]], _ body: ([UnsafePointer<CChar>?]) -> Result
    ) -> Result {
        var pointers: [UnsafePointer<CChar>?] = []
        pointers.reserveCapacity(arguments.count)
        func nest(_ index: Int) -> Result {
            guard index < arguments.count else { return body(pointers) }
            return arguments[index].withUnsafeBufferPointer { buffer in
                // A zero-length argument still needs a valid pointer.
                let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!
                pointers.append(UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self))
                return nest(index + 1)
            }
        }
        return nest(0)
    }

    private static func copy(_ reply: UnsafeMutablePointer<redisReply>, depth: Int) -> RedisReply {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING: return .string(bytes(value))
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(value), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(value), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(value.integer))
        case REDIS_REPLY_NIL: return .null
        case REDIS_REPLY_ARRAY:
            guard depth < RedisReply.maximumDepth else { return .error("reply nested too deep") }
            guard let elements = value.element else { return .array([]) }
            return .array(
                (0..<value.elements).map { index in
                    guard let element = elements[index] else { return .null }
                    return copy(element, depth: depth + 1)
                })
        default: return .error("reply of unknown type \(value.type)")
        }
    }

    private static func bytes(_ reply: redisReply) -> [UInt8] {
        guard let text = reply.str, reply.len > 0 else { return [] }
        return Array(UnsafeRawBufferPointer(start: text, count: reply.len))
    }
}

extension RedisReply {
    /// A reply for an error message.
    var text: String {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text), .error(let text): text
        case .integer(let value): String(value)
        case .null: "(nil)"
        case .array(let elements): "[\(elements.map(\.text).joined(separator: ", "))]"
        }
    }
}
