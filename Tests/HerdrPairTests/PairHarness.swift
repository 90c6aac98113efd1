import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import SSHPairingHost
import Synchronization
import TestSupport

/// A real sshd whose authorized_keys belongs to the test user, and `herdr-pair` helpers run as that
/// user (through `setpriv`, which execs, so the child's PID is the helper's own) with HOME set to the
/// fixture's home, as sshd's session for the forced command will have it.
final class PairFixture: @unchecked Sendable {
    /// What the file holds before any pairing: lines people and other tools wrote.
    static let baseline = """
        # keys of this account, written by hand
        ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl someone@laptop
        restrict,command="/usr/bin/true" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHFz0yWvXH7K0Bq3m4N9xGk0tqJ0q3pWq0Y6m6L0pZ1x backup

        """

    let server: SSHServer
    let user: TestUser
    let scratch: TemporaryDirectory

    var authorizedKeys: URL { server.authorizedKeysFile }
    var hostKeyFile: String { server.directory.appending("keys/ssh_host_ed25519_key.pub").path }
    var stateBase: String { server.homeDirectory.path + "/.local/state/herdr-pair" }

    init(baseline: String = PairFixture.baseline) throws {
        server = try SSHServer()
        user = server.user
        scratch = try TemporaryDirectory(prefix: "herdr-pair-test-")
        // The helper runs as the test user and rewrites authorized_keys through a temporary file in its
        // directory: both belong to that user (sshd runs with StrictModes no).
        try writeText(baseline, to: authorizedKeys)
        for path in [server.directory.path, authorizedKeys.path] {
            guard chown(path, user.uid, user.gid) == 0 else { throw FixtureError("chown \(path) failed") }
        }
    }

    deinit { server.destroy() }

    func contents() throws -> String { try readText(authorizedKeys) }

    /// The names left in the state base (the helper's per-pairing directories).
    func stateEntries() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: stateBase)) ?? []).sorted()
    }

    /// Starts `herdr-pair --test-mode` as the test user.
    func startHelper(_ extra: [String] = [], hosts: [String] = ["testhost"], path: String? = nil) throws -> Helper {
        var arguments = [
            "--test-mode", "--port", String(server.port), "--authorized-keys", authorizedKeys.path, "--host-key",
            hostKeyFile,
        ]
        for host in hosts { arguments += ["--host", host] }
        return try Helper(fixture: self, arguments: arguments + extra, path: path)
    }

    /// The environment of a helper run as the test user.
    func environment(path: String? = nil) -> [String: String] {
        [
            "HOME": server.homeDirectory.path, "PATH": path ?? "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
            "HERDR_PAIR_TEST_MODE": "1", "USER": user.name, "LOGNAME": user.name,
        ]
    }

    /// Runs the helper program to its end as the test user (for usage errors and enroll mode).
    func runProgram(
        _ arguments: [String], input: String = "", environment: [String: String]? = nil, timeout: Double = 30
    ) throws
        -> ProcessResult
    {
        try ProcessRunner.run(
            "/usr/bin/setpriv", Self.setprivArguments(user) + [Self.executable] + arguments,
            environment: environment ?? self.environment(), input: Array(input.utf8), timeout: timeout)
    }

    static func setprivArguments(_ user: TestUser) -> [String] {
        ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups", "--"]
    }

    /// The herdr-pair binary built beside this test bundle, copied where the test user can run it
    /// (see `UserRunnableCopy`).
    static var executable: String {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let built = URL(fileURLWithPath: me).deletingLastPathComponent().appendingPathComponent("herdr-pair").path
        return (try? UserRunnableCopy.of(built)) ?? built
    }

    // MARK: The phone's side, through OpenSSH

    /// What `ssh … herdr-pair` printed and how it ended.
    struct EnrollResult: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
        /// The last non-empty stdout line, which is what the phone reads.
        var token: String {
            stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.last { !$0.isEmpty } ?? ""
        }
    }

    /// Connects with the code's one-time key, as the phone does, and writes the two request lines.
    func enroll(_ payload: PairingPayload, input: String, timeout: Double = 60) throws -> EnrollResult {
        let key = try Ed25519PrivateKey(seed: payload.oneTimeKeySeed)
        let file = try writeKey(key, name: "one-time-\(payload.pairingIDText)-\(UUID().uuidString.prefix(8))")
        return try ssh(identity: file, command: "herdr-pair", input: input, timeout: timeout)
    }

    /// Runs `command` over SSH with the identity in `identity`.
    func ssh(identity: String, command: String, input: String = "", timeout: Double = 60) throws -> EnrollResult {
        let result = try ProcessRunner.run(
            "/usr/bin/ssh",
            [
                "-F", "/dev/null", "-i", identity, "-o", "IdentitiesOnly=yes", "-o", "StrictHostKeyChecking=no", "-o",
                "UserKnownHostsFile=/dev/null", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o",
                "ConnectTimeout=20",
                "-p", String(server.port), "-T", "\(user.name)@127.0.0.1", command,
            ], input: Array(input.utf8), timeout: timeout)
        return EnrollResult(status: result.status, stdout: result.stdout, stderr: result.stderr)
    }

    /// Writes `key` as an OpenSSH private key file (0600) for `ssh -i`.
    func writeKey(_ key: Ed25519PrivateKey, name: String) throws -> String {
        let url = scratch.file(name)
        try writeText(OpenSSHPrivateKey(privateKey: key, comment: name).pemText, to: url)
        chmod(url.path, 0o600)
        return url.path
    }

    /// `enroll` on a thread of its own; `wait()` returns its result.
    func enrollInBackground(_ payload: PairingPayload, input: String) -> Background<EnrollResult> {
        Background { try self.enroll(payload, input: input) }
    }
}

/// A device key and the request lines it sends.
struct TestDevice {
    let key = Ed25519PrivateKey()
    let name: String

    init(name: String = "Test iPhone") {
        self.name = name
    }

    var publicKey: SSHPublicKey { SSHPublicKey(ed25519: key.publicKey) }
    var requestInput: String { "\(publicKey.openSSHString)\n\(name)\n" }

    /// The line an approval must append, dated today.
    var expectedLine: String { DeviceKeyLine.text(key: publicKey, deviceName: name, date: Date()) }
}

/// Work on a thread of its own.
final class Background<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let result = Mutex<Result<T, any Error>?>(nil)

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            let value = Result { try body() }
            result.withLock { $0 = value }
            done.signal()
        }.start()
    }

    func wait(timeout: Double = 120) throws -> T {
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw FixtureError("background work did not finish within \(timeout) s")
        }
        return try result.withLock { $0! }.get()
    }
}

/// One `herdr-pair --test-mode` process: its stdout read line by line, its stdin for answers, its
/// stderr in a file.
final class Helper: @unchecked Sendable {
    let process: ChildProcess
    let stderrFile: URL
    private let stdoutRead: Int32
    private var stdinWrite: Int32
    private var buffer: [UInt8] = []
    private(set) var lines: [String] = []
    private let lock = NSLock()

    init(fixture: PairFixture, arguments: [String], path: String?) throws {
        let input = try PipePair()
        let output = try PipePair()
        stderrFile = fixture.scratch.file("helper-\(UUID().uuidString.prefix(8)).stderr")
        let errorFD = open(stderrFile.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard errorFD >= 0 else { throw FixtureError("cannot create \(stderrFile.path)") }
        defer { close(errorFD) }
        do {
            process = try ChildProcess(
                "/usr/bin/setpriv", PairFixture.setprivArguments(fixture.user) + [PairFixture.executable] + arguments,
                environment: fixture.environment(path: path), stdin: input.read, stdout: output.write, stderr: errorFD)
        } catch {
            for fd in [input.read, input.write, output.read, output.write] { close(fd) }
            throw error
        }
        close(input.read)
        close(output.write)
        stdoutRead = output.read
        stdinWrite = input.write
    }

    deinit {
        if process.isRunning {
            process.signal(SIGKILL)
            process.wait()
        }
        close(stdoutRead)
        if stdinWrite >= 0 { close(stdinWrite) }
    }

    /// The next stdout line, waiting at most `timeout` seconds.
    func nextLine(timeout: Double = 30) throws -> String {
        try lock.withLock {
            let deadline = Date().addingTimeInterval(timeout)
            while true {
                if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<newline], as: UTF8.self)
                    buffer.removeSubrange(...newline)
                    lines.append(line)
                    return line
                }
                let remaining = deadline.timeIntervalSinceNow
                guard remaining > 0 else {
                    throw FixtureError(
                        "no line from herdr-pair within \(timeout) s; stderr: \(stderrText().suffix(1500))")
                }
                var entry = pollfd(fd: stdoutRead, events: Int16(POLLIN), revents: 0)
                guard poll(&entry, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = read(stdoutRead, &chunk, chunk.count)
                if count <= 0 {
                    throw FixtureError(
                        "herdr-pair closed stdout (status \(String(describing: process.status))); stderr: \(stderrText().suffix(1500))"
                    )
                }
                buffer += chunk[..<count]
            }
        }
    }

    /// Waits for `READY <url>` and parses the code.
    func ready(timeout: Double = 30) throws -> PairingPayload {
        let line = try nextLine(timeout: timeout)
        guard line.hasPrefix("READY ") else { throw FixtureError("expected READY, got: \(line)") }
        return try PairingPayload(parsing: String(line.dropFirst(6)))
    }

    /// Waits for `REQUEST <name> <fingerprint>`.
    func request(timeout: Double = 60) throws -> (name: String, fingerprint: String) {
        let line = try nextLine(timeout: timeout)
        guard line.hasPrefix("REQUEST "), let space = line.lastIndex(of: " ") else {
            throw FixtureError("expected REQUEST, got: \(line)")
        }
        return (
            String(line[line.index(line.startIndex, offsetBy: 8)..<space]), String(line[line.index(after: space)...])
        )
    }

    /// Writes an answer line on the helper's stdin.
    func answer(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(stdinWrite, $0.baseAddress, $0.count) }
    }

    /// Closes the helper's stdin (end of input).
    func closeInput() {
        if stdinWrite >= 0 { close(stdinWrite) }
        stdinWrite = -1
    }

    /// Waits for the exit status.
    func exitStatus(timeout: Double = 30) throws -> Int32 {
        guard let status = process.wait(timeout: timeout) else {
            throw FixtureError("herdr-pair did not exit within \(timeout) s; stderr: \(stderrText().suffix(1500))")
        }
        return status
    }

    func signal(_ number: Int32) {
        process.signal(number)
    }

    func stderrText() -> String {
        (try? readText(stderrFile)) ?? ""
    }
}
