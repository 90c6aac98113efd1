import Glibc

/// A computer-side step that failed: a file that could not be read or rewritten, a path that is not
/// safe to use, a program whose output made no sense.
///
/// `kind` is stable and meant for code; `message` is for people and names the file or program and
/// the system's reason.
public struct HostError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// Opening, reading, writing, syncing or renaming a file failed.
        case io
        /// Taking the lock on a shared file failed.
        case lock
        /// A file or directory is not what it must be (type, owner, mode, a symlink where none may be).
        case unsafe
        /// A path cannot be used (relative, or characters a forced command cannot carry).
        case invalidPath
        /// A file or program output is larger than its limit.
        case tooLarge
        /// A file or program output is not in the expected format.
        case malformed
        /// Something needed is missing (a program, a host key, an account).
        case notFound
        /// A program could not be started, or failed.
        case command
    }

    public let kind: Kind
    public let message: String
    /// The `errno` value, when a system call failed.
    public let errno: Int32?

    public init(_ kind: Kind, _ message: String, errno: Int32? = nil) {
        self.kind = kind
        self.message = message
        self.errno = errno
    }

    /// An error for a failed system call, worded from `code` (the current `errno` by default).
    static func posix(_ kind: Kind, _ action: String, path: String, errno code: Int32 = currentErrno()) -> HostError {
        HostError(kind, "Could not \(action) \(path): \(String(cString: strerror(code)))", errno: code)
    }

    public var description: String { message }
}

/// The calling thread's `errno`, under a name the error's own `errno` property does not shadow.
func currentErrno() -> Int32 {
    errno
}
