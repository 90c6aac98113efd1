import Glibc

/// Printing to stderr, unbuffered and whole: a message appears at once, in one piece, and in order
/// with what the program writes to descriptors directly (Swift's `print` goes through stdio buffers).
public enum StandardError {
    /// Writes `text` to stderr as is. Errors are ignored: there is nowhere left to report them.
    public static func write(_ text: String) {
        try? FileDescriptorWriter.writeAll(fd: STDERR_FILENO, string: text)
    }
}

/// Prints to stderr like `print` prints to stdout.
public func printError(_ items: Any..., separator: String = " ", terminator: String = "\n") {
    StandardError.write(items.map { "\($0)" }.joined(separator: separator) + terminator)
}
