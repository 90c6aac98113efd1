import Glibc

/// A process named so that a recycled PID is never mistaken for it: the PID, its start time in clock
/// ticks since boot (`/proc/<pid>/stat` field 22), and the boot id (`/proc/sys/kernel/random/boot_id`).
public struct ProcessIdentity: Sendable, Equatable, CustomStringConvertible {
    public var pid: Int32
    public var startTime: UInt64
    public var bootID: String

    public init(pid: Int32, startTime: UInt64, bootID: String) {
        self.pid = pid
        self.startTime = startTime
        self.bootID = bootID
    }

    /// This process.
    public static func current() -> ProcessIdentity? {
        of(pid: getpid())
    }

    /// The process that has `pid` now, or nil when there is none (or /proc cannot tell).
    public static func of(pid: Int32) -> ProcessIdentity? {
        guard pid > 0, let start = startTime(of: pid), let boot = currentBootID() else { return nil }
        return ProcessIdentity(pid: pid, startTime: start, bootID: boot)
    }

    /// Whether this very process still runs: same boot, and the PID belongs to a process started at
    /// the same tick. A zombie counts as gone.
    public var isAlive: Bool {
        guard let now = Self.of(pid: pid) else { return false }
        return now == self && !Self.isZombie(pid)
    }

    public var description: String { "pid \(pid) (start \(startTime), boot \(bootID))" }

    public static func currentBootID() -> String? {
        readSmallFile("/proc/sys/kernel/random/boot_id").map { String($0.filter { !$0.isWhitespace }) }
    }

    /// Field 22 of /proc/<pid>/stat. The command name (field 2) may hold spaces and parentheses, so
    /// fields are counted after its last `)`.
    public static func startTime(of pid: Int32) -> UInt64? {
        guard let fields = statFields(pid), fields.count > 19 else { return nil }
        return UInt64(fields[19])
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        statFields(pid)?.first == "Z"
    }

    /// The fields of /proc/<pid>/stat after the command name: state is [0], start time [19].
    private static func statFields(_ pid: Int32) -> [Substring]? {
        guard let text = readSmallFile("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    /// A /proc file of at most 8 KiB, or nil.
    private static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 8192 {
            let count = read(fd, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += buffer[0..<count]
        }
        return bytes.count <= 8192 ? String(decoding: bytes, as: UTF8.self) : nil
    }
}
