import CSystem
import Foundation
import Glibc

/// Runs a helper program (`tailscale`, `sshd -T`) to completion with a bounded wait, capturing its
/// output. The child gets /dev/null as stdin and no other descriptor of ours (everything from 3 up is
/// closed at spawn).
public enum ExternalCommand {
    public struct Output: Sendable {
        /// The exit status, or 128 + the signal that ended it.
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: [UInt8]
    }

    /// The most output kept per stream.
    public static let maximumOutputBytes = 4 * 1024 * 1024

    /// The absolute path of `name` on `PATH` (plus `extraDirectories`), or nil.
    public static func find(
        _ name: String, extraDirectories: [String] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init) + extraDirectories
        for directory in directories where directory.hasPrefix("/") {
            let candidate = directory + "/" + name
            var info = stat()
            if stat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFREG, access(candidate, X_OK) == 0 {
                return candidate
            }
        }
        return nil
    }

    /// Runs `executable` with `arguments`; kills it (by PID) after `timeout` seconds.
    public static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 10) throws(HostError)
        -> Output
    {
        var outPipe: [Int32] = [-1, -1]
        var errPipe: [Int32] = [-1, -1]
        guard csystem_pipe_cloexec(&outPipe, 0) == 0 else {
            throw .posix(.command, "make a pipe for", path: executable)
        }
        guard csystem_pipe_cloexec(&errPipe, 0) == 0 else {
            close(outPipe[0])
            close(outPipe[1])
            throw .posix(.command, "make a pipe for", path: executable)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, outPipe[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errPipe[1], 2)
        csystem_spawn_closefrom(&actions, 3)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        close(outPipe[1])
        close(errPipe[1])
        guard spawned == 0 else {
            close(outPipe[0])
            close(errPipe[0])
            throw .posix(.command, "run", path: executable, errno: spawned)
        }

        var outputs: [[UInt8]] = [[], []]
        var open = [outPipe[0], errPipe[0]]
        let deadline = FileIO.monotonicNow() + timeout
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var timedOut = false
        while open.contains(where: { $0 >= 0 }) {
            let remaining = deadline - FileIO.monotonicNow()
            if remaining <= 0 {
                timedOut = true
                break
            }
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            _ = poll(&fds, nfds_t(fds.count), Int32(min(remaining, 1) * 1000) + 1)
            for index in 0..<2 where open[index] >= 0 && fds[index].revents != 0 {
                let count = read(open[index], &buffer, buffer.count)
                if count > 0 {
                    if outputs[index].count < maximumOutputBytes { outputs[index] += buffer[..<count] }
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    close(open[index])
                    open[index] = -1
                }
            }
        }
        for fd in open where fd >= 0 { close(fd) }
        if timedOut { kill(pid, SIGKILL) }
        var raw: Int32 = 0
        while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
        if timedOut {
            throw HostError(
                .command, "\(executable) \(arguments.joined(separator: " ")) did not finish within \(Int(timeout)) s")
        }
        let signal = raw & 0x7f
        let status = signal == 0 ? (raw >> 8) & 0xff : 128 + signal
        return Output(status: status, stdout: outputs[0], stderr: outputs[1])
    }
}
