import CSystem
import Foundation
import Glibc
import Synchronization

/// A command in a pseudo-terminal of its own, as sshd runs a session's command: `/bin/sh -c
/// COMMAND` as the leader of a new session whose controlling terminal is the PTY. One instance per
/// child and master descriptor.
///
/// One thread polls the master: it reads output while the reader allows it (`allowReading`, an
/// absolute byte count, so a reader that stops allowing stops the writer in the PTY), and writes
/// queued input. A second thread waits for the child. `onEvent` gets the output in order, then
/// `exited` once: after the child ended and the output it left was read (or the PTY hung up).
public final class PTYProcess: Sendable {
    public enum Event: Sendable, Equatable {
        case output([UInt8])
        /// The child's exit status, or the signal that killed it.
        case exited(status: Int32?, signal: Int32?)
    }

    /// What a spawn needs.
    public struct Launch: Sendable {
        public var command: String
        public var environment: [String: String]
        public var directory: String
        public var cols: Int
        public var rows: Int

        public init(command: String, environment: [String: String], directory: String, cols: Int, rows: Int) {
            self.command = command
            self.environment = environment
            self.directory = directory
            self.cols = cols
            self.rows = rows
        }
    }

    /// Input queued beyond this is refused (`write` returns false): the program is not reading.
    public static let maximumPendingInput = 8 * 1024 * 1024
    /// How long a hung-up session has to end before its process group is killed.
    public static let hangUpGrace: Double = 5

    public let pid: pid_t
    private let master: Int32
    private let wake: Int32
    private let state = Mutex(SharedState())
    private let onEvent: @Sendable (Event) -> Void

    private struct SharedState {
        var readLimit: UInt64 = 0
        var readTotal: UInt64 = 0
        var input: [UInt8] = []
        var inputHead = 0
        var hangingUp = false
        /// The I/O thread closed the master: nobody may write to it any more.
        var masterClosed = false
        /// A `write` is writing to the master outside the lock: later input queues behind it,
        /// and the I/O thread neither writes nor closes the master until it is done.
        var directWriter = false
        /// The I/O thread ended during a direct write: the writer closes the master.
        var closeAfterWrite = false
        /// The child ended (it is a zombie until the waiter reaps it, so its pid stays its own).
        var exit: (status: Int32?, signal: Int32?)?
        var reaped = false
        /// Threads writing to the wake eventfd now, outside the lock.
        var signallers = 0
        /// The I/O thread is done with the wake eventfd: nobody writes to it any more (its number
        /// may soon be another file's), and the last signaller closes it.
        var wakeRetired = false
    }

    /// Starts `launch.command`. Throws with the failing call and its reason.
    public init(_ launch: Launch, onEvent: @escaping @Sendable (Event) -> Void) throws(PTYError) {
        var master: Int32 = -1
        var path = [CChar](repeating: 0, count: 128)
        let cols = UInt16(clamping: max(1, launch.cols))
        let rows = UInt16(clamping: max(1, launch.rows))
        guard csystem_openpty(&master, &path, UInt(path.count), cols, rows) == 0 else {
            throw PTYError("open a pseudo-terminal", errno: errno)
        }
        let flags = fcntl(master, F_GETFL)
        guard flags >= 0, fcntl(master, F_SETFL, flags | csystem_o_nonblock()) == 0 else {
            let code = errno
            close(master)
            throw PTYError("make the pseudo-terminal non-blocking", errno: code)
        }
        let wake = csystem_eventfd_nonblocking()
        guard wake >= 0 else {
            let code = errno
            close(master)
            throw PTYError("create an eventfd", errno: code)
        }
        let pid: pid_t
        do throws(PTYError) {
            pid = try Self.spawn(
                launch,
                slavePath: String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        } catch {
            close(master)
            close(wake)
            throw error
        }
        self.pid = pid
        self.master = master
        self.wake = wake
        self.onEvent = onEvent
        let io = Thread { [self] in runIO() }
        io.name = "pty \(pid)"
        io.start()
        let waiter = Thread { [self] in waitForChild() }
        waiter.name = "pty wait \(pid)"
        waiter.start()
    }

    private static func spawn(_ launch: Launch, slavePath: String) throws(PTYError) -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // After setsid, the first terminal the leader opens becomes its controlling terminal.
        var result = posix_spawn_file_actions_addopen(&actions, 0, slavePath, O_RDWR, 0)
        if result == 0 { result = posix_spawn_file_actions_adddup2(&actions, 0, 1) }
        if result == 0 { result = posix_spawn_file_actions_adddup2(&actions, 0, 2) }
        if result == 0 { result = csystem_spawn_closefrom(&actions, 3) }
        if result == 0 { result = csystem_spawn_chdir(&actions, launch.directory) }
        if result == 0 { result = csystem_spawn_terminal_attributes(&attributes) }
        guard result == 0 else { throw PTYError("prepare the spawn", errno: result) }
        let arguments = ["sh", "-c", launch.command]
        let environment = launch.environment.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        var cArguments = arguments.map { strdup($0) } + [nil]
        var cEnvironment = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        result = posix_spawn(&pid, "/bin/sh", &actions, &attributes, &cArguments, &cEnvironment)
        guard result == 0 else { throw PTYError("start /bin/sh", errno: result) }
        return pid
    }

    // MARK: - Control (any thread)

    /// Lets the PTY be read until `total` bytes have been read since it started (lowering it
    /// stops reading sooner).
    public func allowReading(upTo total: UInt64) {
        let raised = state.withLock { shared in
            defer { shared.readLimit = total }
            return total > shared.readLimit
        }
        if raised { signal() }
    }

    /// Hands keystrokes to the program: written at once when nothing waits before them (one
    /// thread handoff less per keystroke), the rest queued for the I/O thread. False (nothing
    /// taken) when more than `maximumPendingInput` already waits, or the session is hanging up.
    public func write(_ bytes: [UInt8]) -> Bool {
        guard !bytes.isEmpty else { return true }
        let direct = state.withLock { shared -> Bool? in
            guard !shared.hangingUp, !shared.masterClosed,
                shared.input.count - shared.inputHead + bytes.count <= Self.maximumPendingInput
            else { return nil }
            if shared.inputHead == shared.input.count && !shared.directWriter {
                shared.directWriter = true
                return true
            }
            shared.input += bytes
            return false
        }
        guard let direct else { return false }
        guard direct else {
            signal()
            return true
        }
        // Outside the lock: the write wakes the terminal's reader, and a writer preempted by it
        // with the lock held would stall the I/O thread's read of the echo (found on a 2-core
        // machine: the reader spun for the lock, then blocked until the writer ran again).
        let written = bytes.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
        // EIO: nobody reads the terminal any more, the input has nowhere to go (see writeInput).
        let failed = written < 0 && errno != EAGAIN && errno != EINTR
        let queued = state.withLock { shared -> Bool in
            shared.directWriter = false
            if shared.closeAfterWrite {
                shared.closeAfterWrite = false
                close(master)
                return false
            }
            let start = max(0, written)
            if !failed && start < bytes.count {
                // Before whatever was queued behind this write meanwhile.
                shared.input.insert(contentsOf: bytes[start...], at: shared.inputHead)
            }
            return shared.inputHead < shared.input.count
        }
        if queued { signal() }
        return true
    }

    /// The window size; the program gets SIGWINCH.
    public func resize(cols: Int, rows: Int) {
        // Under the lock: once the I/O thread closed the master, its number may be another file's.
        state.withLock { shared in
            guard !shared.hangingUp, !shared.masterClosed else { return }
            _ = csystem_set_window_size(master, UInt16(clamping: max(1, cols)), UInt16(clamping: max(1, rows)))
        }
    }

    /// Ends the session as a terminal closing does: SIGHUP to its process group and the master
    /// closed; the group is killed if it has not ended after `hangUpGrace` seconds. `exited` still
    /// comes once the child is reaped.
    public func hangUp() {
        let first = state.withLock { shared in
            defer { shared.hangingUp = true }
            guard !shared.hangingUp else { return false }
            if !shared.reaped { kill(-pid, SIGHUP) }
            return true
        }
        guard first else { return }
        signal()
        let group = -pid
        DispatchQueue.global().asyncAfter(deadline: .now() + Self.hangUpGrace) { [self] in
            state.withLock { shared in
                // Still a zombie at worst, so the pid (and its group) cannot be another's yet.
                if !shared.reaped { kill(group, SIGKILL) }
            }
        }
    }

    /// The I/O thread's wake eventfd, for a test that checks nothing is written to its number
    /// once it is closed.
    package var wakeDescriptorForTesting: Int32 { wake }

    /// Wakes the I/O thread, unless it is done: after it, the descriptor's number may be
    /// another file's, and 8 bytes written there would land in it.
    private func signal() {
        let open = state.withLock { shared in
            guard !shared.wakeRetired else { return false }
            shared.signallers += 1
            return true
        }
        guard open else { return }
        // Outside the lock, as the keystroke's write: the thread it wakes takes the lock next.
        var one: UInt64 = 1
        _ = Glibc.write(wake, &one, 8)
        let closeNow = state.withLock { shared in
            shared.signallers -= 1
            return shared.wakeRetired && shared.signallers == 0
        }
        if closeNow { close(wake) }
    }

    // MARK: - Threads

    private func waitForChild() {
        var info = siginfo_t()
        while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0 {
            guard errno == EINTR else { break }
        }
        let exit: (Int32?, Int32?) =
            switch info.si_code {
            case Int32(CLD_EXITED): (info._sifields._sigchld.si_status, nil)
            case Int32(CLD_KILLED), Int32(CLD_DUMPED): (nil, info._sifields._sigchld.si_status)
            default: (nil, nil)
            }
        state.withLock { $0.exit = exit }
        signal()
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        state.withLock { $0.reaped = true }
    }

    /// How long output may still trickle in after the child ended while something else (a
    /// background job) keeps the terminal open; then the session's output is complete, as sshd has it.
    static let quietAfterExitMilliseconds: Int32 = 100

    private func runIO() {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        // Made once: an array built per wake-up is an allocation per keystroke.
        var descriptors = [pollfd](repeating: pollfd(fd: -1, events: 0, revents: 0), count: 2)
        while true {
            let (allowance, hasInput, hangingUp, exited) = state.withLock { shared in
                (
                    Int(clamping: shared.readLimit - min(shared.readLimit, shared.readTotal)),
                    shared.inputHead < shared.input.count && !shared.directWriter, shared.hangingUp,
                    shared.exit != nil
                )
            }
            if hangingUp { break }
            var events: Int32 = 0
            if allowance > 0 { events |= POLLIN }
            if hasInput { events |= POLLOUT }
            descriptors[0] = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            // The master is watched only for what can be done now (poll skips a negative fd): a
            // hung-up master reports POLLHUP whatever is asked, which would spin while reading is
            // not allowed.
            descriptors[1] = pollfd(fd: events != 0 ? master : -1, events: Int16(events), revents: 0)
            let timeout = exited && allowance > 0 ? Self.quietAfterExitMilliseconds : -1
            let ready = poll(&descriptors, 2, timeout)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if ready == 0 { break }  // the child ended and the terminal stayed quiet
            if descriptors[0].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
            }
            guard events != 0 else { continue }
            let revents = Int32(descriptors[1].revents)
            if revents & (POLLOUT | POLLERR | POLLHUP) != 0, hasInput { writeInput() }
            if allowance > 0, revents & (POLLIN | POLLHUP | POLLERR) != 0 {
                let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, min(allowance, $0.count)) }
                if count > 0 {
                    state.withLock { $0.readTotal += UInt64(count) }
                    onEvent(.output(Array(buffer[0..<count])))
                } else if count == 0 || (errno != EAGAIN && errno != EINTR) {
                    break  // EIO: no process has the terminal open any more
                }
            }
        }
        // The terminal is done (EIO, or quiet after the exit) or hung up. A program that closed its
        // end may still be exiting (coreutils close stdout and stderr in an exit handler): closing
        // the master under it would hang the terminal up and kill it with SIGHUP, so the master
        // is closed once the child has ended, unless this is a hang-up, which is that SIGHUP.
        let hungUp = state.withLock { $0.hangingUp }
        let exit = hungUp ? nil : waitForExit()
        state.withLock { shared in
            shared.masterClosed = true
            if shared.directWriter { shared.closeAfterWrite = true } else { close(master) }
        }
        // The exit is reported once the child is known to have ended.
        let ended = exit ?? waitForExit()
        onEvent(.exited(status: ended.status, signal: ended.signal))
        let closeNow = state.withLock { shared in
            shared.wakeRetired = true
            return shared.signallers == 0
        }
        if closeNow { close(wake) }
    }

    /// The child's exit, once `waitForChild` has seen it (woken through the eventfd).
    private func waitForExit() -> (status: Int32?, signal: Int32?) {
        while true {
            if let exit = state.withLock({ $0.exit }) { return (exit.0, exit.1) }
            var descriptor = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
            _ = poll(&descriptor, 1, -1)
            var count: UInt64 = 0
            _ = read(wake, &count, 8)
        }
    }

    /// Writes what is queued, under the lock and never during a direct `write`, so input keeps
    /// its order.
    private func writeInput() {
        state.withLock { shared in
            guard shared.inputHead < shared.input.count, !shared.directWriter else { return }
            let written = shared.input[shared.inputHead...].withUnsafeBytes {
                Glibc.write(master, $0.baseAddress, $0.count)
            }
            if written < 0, errno != EAGAIN, errno != EINTR {
                // Nobody reads the terminal any more (EIO): the input has nowhere to go.
                shared.input = []
                shared.inputHead = 0
                return
            }
            guard written > 0 else { return }
            shared.inputHead += written
            if shared.inputHead == shared.input.count {
                shared.input = []
                shared.inputHead = 0
            }
        }
    }
}

/// A PTY session could not be started.
public struct PTYError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ action: String, errno code: Int32) {
        description = "cannot \(action): \(String(cString: strerror(code)))"
    }
}
