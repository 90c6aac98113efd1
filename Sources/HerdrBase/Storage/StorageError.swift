import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure reading or writing herdr-remote's files.
///
/// `kind` is stable and meant for code; `message` is for people and names the file and the system's reason.
public struct StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, independent of the wording.
    public enum Kind: String, Sendable {
        /// A directory could not be created or is not a directory.
        case directory
        /// A file could not be opened or created.
        case open
        /// A file could not be read.
        case read
        /// A file is larger than its limit.
        case tooLarge
        /// Writing file contents failed.
        case write
        /// `fsync` failed, so the data may not be durable.
        case sync
        /// Moving a file into place (or aside) failed.
        case rename
        /// Removing a file failed.
        case remove
        /// Taking a file lock failed.
        case lock
        /// A file exists but its contents are not what it should hold.
        case corrupt
        /// Data could not be encoded for writing.
        case encode
        /// An argument cannot be stored in the file's format.
        case invalidArgument
    }

    /// What went wrong.
    public let kind: Kind
    /// The file or directory involved.
    public let path: String
    /// A sentence naming the path and the reason.
    public let message: String
    /// The `errno` value, when a system call failed.
    public let errno: Int32?

    /// Creates an error; `message` should name `path`.
    public init(_ kind: Kind, path: String, message: String, errno: Int32? = nil) {
        self.kind = kind
        self.path = path
        self.message = message
        self.errno = errno
    }

    /// An error for a failed system call, worded from the current `errno`.
    static func posix(_ kind: Kind, _ action: String, path: String, errno code: Int32 = currentErrno()) -> StorageError
    {
        let reason = String(cString: strerror(code))
        return StorageError(kind, path: path, message: "Could not \(action) \(path): \(reason)", errno: code)
    }

    public var description: String { message }
}

/// The calling thread's `errno` (a name the error's own `errno` property does not shadow).
func currentErrno() -> Int32 {
    errno
}
