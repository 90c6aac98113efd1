import Glibc

/// `tcgetattr`/`tcsetattr` with `EINTR` retried and failures as ``SystemError``.
enum TerminalAttributes {
    static func get(_ fd: Int32) throws(SystemError) -> termios {
        var attributes = termios()
        while tcgetattr(fd, &attributes) != 0 {
            if errno != EINTR { throw SystemError.fromErrno("tcgetattr") }
        }
        return attributes
    }

    static func set(_ fd: Int32, _ attributes: termios, when: Int32 = TCSADRAIN) throws(SystemError) {
        var attributes = attributes
        while tcsetattr(fd, when, &attributes) != 0 {
            if errno != EINTR { throw SystemError.fromErrno("tcsetattr") }
        }
    }

    /// Sets one control character (`VMIN`, `VTIME`, ...); `c_cc` imports as a tuple.
    static func setControlCharacter(_ attributes: inout termios, _ index: Int32, _ value: UInt8) {
        withUnsafeMutableBytes(of: &attributes.c_cc) { $0[Int(index)] = value }
    }

    static func controlCharacter(_ attributes: termios, _ index: Int32) -> UInt8 {
        withUnsafeBytes(of: attributes.c_cc) { $0[Int(index)] }
    }
}
