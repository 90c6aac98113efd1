import CSystem
import Foundation
import Glibc

/// A child process started with posix_spawn. Unlike Foundation's Process, the child inherits
/// only the descriptors given to it: everything from 3 up is closed, so a pipe made by one test
/// never leaks into a server another test starts at the same moment.
public final class ChildProcess: @unchecked Sendable {
    public let pid: pid_t
    private let lock = NSLock()
    private var exitStatus: Int32?

    /// Spawns `executable` with the given standard descriptors (-1 means /dev/null).
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdin: Int32 = -1, stdout: Int32 = -1, stderr: Int32 = -1, newSession: Bool = false,
        currentDirectory: URL? = nil
    ) throws {
        // A test writing to a child that already died (after a failed expectation) must get EPIPE,
        // not end the whole test process; the child gets every signal's default back below.
        _ = Glibc.signal(SIGPIPE, SIG_IGN)
        let path = executable.hasPrefix("/") ? executable : try ProcessRunner.which(executable)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (fd, target) in [(stdin, Int32(0)), (stdout, 1), (stderr, 2)] {
            if fd >= 0 {
                posix_spawn_file_actions_adddup2(&actions, fd, target)
            } else {
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            }
        }
        csystem_spawn_closefrom(&actions, 3)
        if let currentDirectory { csystem_spawn_chdir(&actions, currentDirectory.path) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var flags = Int32(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)
        if newSession { flags |= Int32(0x80) }  // POSIX_SPAWN_SETSID
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in env { free(pointer) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, &attributes, argv, env)
        guard rc == 0 else { throw FixtureError("posix_spawn \(path) failed: \(String(cString: strerror(rc)))") }
        self.pid = pid
    }

    /// The exit status if the child has ended (reaping it), else nil. Signals give 128 + n.
    public var status: Int32? {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var raw: Int32 = 0
            let rc = waitpid(pid, &raw, WNOHANG)
            guard rc == pid else { return nil }
            exitStatus = Self.decode(raw)
            return exitStatus
        }
    }

    public var isRunning: Bool { status == nil }

    /// Blocks until the child ends and returns its status.
    @discardableResult
    public func wait() -> Int32 {
        lock.withLock {
            if let exitStatus { return exitStatus }
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            exitStatus = Self.decode(raw)
            return exitStatus!
        }
    }

    /// Waits up to `timeout` seconds; nil if it is still running.
    public func wait(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status { return status }
            usleep(5_000)
        }
        return status
    }

    public func signal(_ number: Int32) {
        if isRunning { kill(pid, number) }
    }

    private static func decode(_ raw: Int32) -> Int32 {
        let signal = raw & 0x7f
        return signal == 0 ? (raw >> 8) & 0xff : 128 + signal
    }
}

/// A pipe whose both ends close on exec.
public struct PipePair {
    public let read: Int32
    public let write: Int32

    public init(nonBlockingRead: Bool = false) throws {
        var fds: [Int32] = [-1, -1]
        guard csystem_pipe_cloexec(&fds, 0) == 0 else {
            throw FixtureError("pipe2 failed: \(String(cString: strerror(errno)))")
        }
        if nonBlockingRead { _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK) }
        read = fds[0]
        write = fds[1]
    }
}
