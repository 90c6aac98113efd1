import Glibc
import Testing

/// A real pseudo-terminal pair for tests.
final class PseudoTerminal {
    let master: Int32
    let slave: Int32

    init() throws {
        var master: Int32 = -1
        var slave: Int32 = -1
        // openpty is in libc since glibc 2.34 (no -lutil). Its descriptors are not close-on-exec;
        // set that at once (ChildProcess also closes every stray descriptor in its children).
        try #require(openpty(&master, &slave, nil, nil, nil) == 0, "openpty failed: errno \(errno)")
        _ = fcntl(master, F_SETFD, FD_CLOEXEC)
        _ = fcntl(slave, F_SETFD, FD_CLOEXEC)
        self.master = master
        self.slave = slave
    }

    deinit {
        close(slave)
        close(master)
    }

    /// The slave's attributes now.
    func snapshot() throws -> TermiosSnapshot {
        var attributes = termios()
        try #require(tcgetattr(slave, &attributes) == 0)
        return TermiosSnapshot(attributes)
    }

    /// Types `text` as if from the keyboard.
    func type(_ text: String) throws {
        let bytes = Array(text.utf8)
        try #require(write(master, bytes, bytes.count) == bytes.count)
    }

    /// Everything the terminal has shown so far (what was written to the slave, plus echo).
    func drainOutput() -> String {
        var collected: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var entry = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) > 0 else { break }
            let count = read(master, &buffer, buffer.count)
            guard count > 0 else { break }
            collected += buffer[..<count]
        }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Waits (up to `timeout` seconds) until the slave's attributes satisfy `condition`.
    func waitFor(timeout: Double = 10, _ condition: (TermiosSnapshot) -> Bool) throws -> Bool {
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            if condition(try snapshot()) { return true }
            usleep(2_000)
        }
        return false
    }
}

/// The attributes of a terminal, comparable field by field (`termios` has padding and a tuple).
struct TermiosSnapshot: Equatable, CustomStringConvertible {
    var iflag: tcflag_t
    var oflag: tcflag_t
    var cflag: tcflag_t
    var lflag: tcflag_t
    var line: cc_t
    var cc: [cc_t]
    var ispeed: speed_t
    var ospeed: speed_t

    init(_ attributes: termios) {
        iflag = attributes.c_iflag
        oflag = attributes.c_oflag
        cflag = attributes.c_cflag
        lflag = attributes.c_lflag
        line = attributes.c_line
        cc = withUnsafeBytes(of: attributes.c_cc) { Array($0) }
        ispeed = attributes.c_ispeed
        ospeed = attributes.c_ospeed
    }

    func has(lflag flag: Int32) -> Bool { lflag & tcflag_t(flag) != 0 }

    var description: String {
        "iflag=\(String(iflag, radix: 8)) oflag=\(String(oflag, radix: 8)) lflag=\(String(lflag, radix: 8))"
    }
}

func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// A real pipe as (read end, write end), close-on-exec from the start: `pipe2` does not import, so it
/// is looked up in libc (children spawned by other tests must not inherit our ends).
func makePipe(nonBlockingWrite: Bool = false) throws -> (read: Int32, write: Int32) {
    typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    let symbol = try #require(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pipe2"))
    let pipe2 = unsafeBitCast(symbol, to: Pipe2.self)
    var ends: [Int32] = [-1, -1]
    try #require(pipe2(&ends, O_CLOEXEC) == 0)
    if nonBlockingWrite {
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    }
    return (ends[0], ends[1])
}
