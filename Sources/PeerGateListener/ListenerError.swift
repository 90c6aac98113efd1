import Glibc

/// Why a gated listener could not start. `kind` is stable; `message` names the address and the
/// system's reason.
public struct ListenerError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// The bind address is not a numeric IPv4 or IPv6 address.
        case address
        /// socket(), setsockopt() or eventfd() failed.
        case socket
        /// bind() failed (e.g. the port is taken: `errno` is EADDRINUSE).
        case bind
        /// listen() or getsockname() failed.
        case listen
    }

    public let kind: Kind
    public let message: String
    /// The `errno` value when a system call failed.
    public let errno: Int32?

    init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    static func posix(_ kind: Kind, _ action: String, errno code: Int32 = Glibc.errno) -> ListenerError {
        ListenerError(kind, "\(action) failed: \(String(cString: strerror(code)))", errno: code)
    }

    public var description: String { message }
}
