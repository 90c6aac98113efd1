import CSystem
import Glibc
import Testing

/// This test binary, started again to play a part in a test (a program in raw mode that gets killed,
/// a prompt interrupted by Ctrl+C): the only way to watch a process die of a signal is from outside.
///
/// The child runs only ``ChildProcessEntryPoint/childProcessEntryPoint()``, with its role in the
/// environment; it runs in a session of its own with the pty slave as stdin and controlling
/// terminal, fd 3 is a pipe back to the parent for progress lines, and stdout/stderr go to /dev/null.
struct ChildProcess {
    static let roleVariable = "CLISUPPORT_TEST_CHILD_ROLE"
    static let reportDescriptor: Int32 = 3

    enum Ending: Equatable {
        case exited(Int32)
        case signaled(Int32)
    }

    let pid: pid_t
    let reports: Int32

    static func start(role: String, stdin: Int32) throws -> ChildProcess {
        var path = [CChar](repeating: 0, count: 4096)
        let length = readlink("/proc/self/exe", &path, path.count - 1)
        try #require(length > 0)
        let executable = String(decoding: path.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let (reportRead, reportWrite) = try makePipe()
        defer { close(reportWrite) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, reportWrite, reportDescriptor)
        // Belt and braces: close anything else another test left inheritable.
        try #require(csystem_spawn_closefrom(&actions, reportDescriptor + 1) == 0)

        let arguments = [executable, "--testing-library", "swift-testing", "--filter", "childProcessEntryPoint"]
        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            environment.append(String(cString: pointer))
            entry += 1
        }
        environment.append("\(roleVariable)=\(role)")
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        // A session of its own, so the child can make the pty its controlling terminal and keys
        // like Ctrl+C typed on the master reach it as signals, as in a real terminal.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // A terminal's child, as herdr-host spawns one: every signal back to its default and
        // unblocked too (other suites in this test process ignore SIGPIPE, and an ignored signal is
        // inherited across exec, so the child would survive the SIGPIPE it is meant to die of).
        try #require(csystem_spawn_terminal_attributes(&attributes) == 0)
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
        try #require(result == 0, "posix_spawn failed: \(result)")
        return ChildProcess(pid: pid, reports: reportRead)
    }

    /// The next progress line from the child, or `nil` on timeout or when it closed fd 3.
    func nextReport(timeout: Double = 20) -> String? {
        var line: [UInt8] = []
        let deadline = monotonicSeconds() + timeout
        while monotonicSeconds() < deadline {
            var entry = pollfd(fd: reports, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 100) >= 0 else { return nil }
            guard entry.revents != 0 else { continue }
            var byte: UInt8 = 0
            guard read(reports, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    func send(_ signal: Int32) {
        kill(pid, signal)
    }

    /// Waits for the child to end; kills it (and reports that as SIGKILL) after `timeout` seconds.
    func wait(timeout: Double = 30) -> Ending {
        defer { close(reports) }
        let deadline = monotonicSeconds() + timeout
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 && errno != EINTR { return .exited(-1) }
            if monotonicSeconds() > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                break
            }
            usleep(5_000)
        }
        // WIFSIGNALED/WTERMSIG/WEXITSTATUS are macros that do not import.
        let signal = status & 0x7f
        return signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
    }
}
