import Glibc

/// A failed system call: which operation, and the `errno` it left.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call or step that failed, e.g. `write` or `tcsetattr`.
    public let operation: String
    /// The `errno` value (`EBADF`, `ENOTTY`, ...).
    public let code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// The error for `operation` from the current `errno`; call it right after the failing call.
    static func fromErrno(_ operation: String) -> SystemError {
        SystemError(operation, code: errno)
    }

    public var description: String {
        // glibc's strerror is thread-safe for known codes (it returns constant strings).
        "\(operation): \(String(cString: strerror(code))) (errno \(code))"
    }
}
