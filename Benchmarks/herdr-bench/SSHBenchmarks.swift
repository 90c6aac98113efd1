import Foundation
import Glibc
import HerdrKit
import SSHClient
import Synchronization
import TestSupport

/// The SSH road measured against the OpenSSH `ssh` client, both talking to the same sshd in the
/// same run: bulk `cat` throughput without and with a PTY, keystroke round trip, and peak memory
/// while a consumer stalls.
@MainActor
final class SSHBenchmarks {
    nonisolated static let bulkBytes = 256 * 1024 * 1024
    nonisolated static let stallBytes = 64 * 1024 * 1024

    let server: SSHServer
    let client: TemporaryDirectory
    let directory: ConfigDirectory
    let store: HostStore
    let bigFile: URL
    let runs: Int
    let keystrokes: Int

    init(runs: Int, keystrokes: Int) throws {
        self.runs = runs
        self.keystrokes = keystrokes
        var options = SSHServer.Options()
        options.userName = "herdrbench"
        server = try SSHServer(options)
        client = try TemporaryDirectory(prefix: "herdr-bench-client-")
        directory = ConfigDirectory(url: client.url)
        store = HostStore(directory: directory)
        try server.authorize(try DeviceKey.publicKeyOpenSSH(in: directory))
        _ = try HostKeyPins(directory: directory).pin(
            try SSHPublicKey(openSSHLine: try server.scannedKey()), hostname: server.host, port: server.port)
        bigFile = server.directory.appending("big")
        try ProcessRunner.run(
            "/bin/sh", ["-c", "head -c \(Self.bulkBytes) /dev/urandom > \(bigFile.path) && chmod 644 \(bigFile.path)"],
            timeout: 120, check: true)
    }

    func destroy() { server.destroy() }

    var sshArguments: [String] {
        [
            "-F", "/dev/null", "-i", directory.deviceKeyFile.path, "-p", String(server.port), "-o",
            "StrictHostKeyChecking=no",
            "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=error", "-o", "BatchMode=yes",
            "\(server.user.name)@\(server.host)",
        ]
    }

    func run() async throws -> BenchReport {
        var report = BenchReport(title: "SSH road (issue 2): herdr-remote vs OpenSSH `ssh`, same sshd, same run")

        let mb = Double(Self.bulkBytes) / 1e6
        for pty in [false, true] {
            var oursDirect: [Double] = []
            var oursMainActor: [Double] = []
            var sshDefault: [Double] = []
            var sshSameCipher: [Double] = []
            for _ in 0..<runs {
                oursDirect.append(try await (pty ? oursWithPTY(direct: true) : oursWithoutPTY()))
                if pty { oursMainActor.append(try await oursWithPTY(direct: false)) }
                sshDefault.append(try sshCat(pty: pty, cipher: nil))
                sshSameCipher.append(try sshCat(pty: pty, cipher: "aes128-ctr"))
            }
            let label = pty ? "cat 256 MiB, PTY" : "cat 256 MiB, no PTY"
            for (anchorName, anchor) in [
                ("ssh default cipher", sshDefault), ("ssh forced to aes128-ctr", sshSameCipher),
            ] {
                report.add(
                    "\(label), \(pty ? "herdr-remote's direct output" : "SSHConnection") vs \(anchorName)",
                    ours: "\(format(mb / median(oursDirect), 0)) MB/s",
                    anchor: "\(format(mb / median(anchor), 0)) MB/s",
                    ratio: "\(format(median(anchor) / median(oursDirect)))×", target: "≥ 1.0×")
            }
            if pty {
                report.add(
                    "\(label), TerminalSession onOutput (MainActor) vs ssh default cipher",
                    ours: "\(format(mb / median(oursMainActor), 0)) MB/s",
                    anchor: "\(format(mb / median(sshDefault), 0)) MB/s",
                    ratio: "\(format(median(sshDefault) / median(oursMainActor)))×", target: "≥ 1.0×")
            }
        }

        let (oursRTT, cliRTT, sshRTT) = try await keystrokeRoundTrips()
        for (p, name) in [(0.5, "p50"), (0.99, "p99")] {
            report.addLatency(
                "keystroke echo \(name), herdr-remote program (pipes)", ours: cliRTT, anchor: sshRTT, quantile: p,
                target: "≤ 1.1×")
            report.addLatency(
                "keystroke echo \(name), TerminalSession API", ours: oursRTT, anchor: sshRTT, quantile: p,
                target: "≤ 1.1×")
        }

        let (oursPeak, oursBaseline) = try stalledConsumerPeakInChild()
        let sshPeak = try sshStalledPeak()
        report.add(
            "peak RSS, 64 MiB writer, consumer stalled 3 s",
            ours: "\(oursPeak / 1024) MiB (\((oursPeak - oursBaseline) / 1024) MiB above idle)",
            anchor: "\(sshPeak / 1024) MiB (ssh)", ratio: "-", target: "bounded")
        report.notes.append(
            "Machine: \(ProcessInfo.processInfo.activeProcessorCount) cores; \(opensshVersion()); our cipher \(try negotiatedCipher()) (libssh2 1.10 has no chacha20-poly1305 or AES-GCM); ssh's default is chacha20-poly1305."
        )
        report.notes.append(
            "Throughput is the median of \(runs) runs, wall time from start to the last byte, including connection setup. Keystroke: \(keystrokes) one-byte round trips through `stty raw -echo; cat` on the remote PTY."
        )
        return report
    }

    // MARK: Throughput

    private func configuration(command: String, pty: PTYRequest?) throws -> SSHConnectionConfiguration {
        let key = try DeviceKey.load(in: directory)
        let pin = try HostKeyPins(directory: directory).pinnedKey(hostname: server.host, port: server.port)!
        return SSHConnectionConfiguration(
            host: server.host, port: server.port, hostKeyPolicy: .accept([pin.blob]),
            credentials: SSHCredentials(username: server.user.name, privateKey: key.privateKey), pty: pty,
            command: command)
    }

    /// No PTY, output counted by a sink on the connection's own thread (no handoff per chunk).
    private func oursWithoutPTY() async throws -> Double {
        var configuration = try configuration(command: "cat \(bigFile.path)", pty: nil)
        let received = Mutex(0)
        configuration.outputSink = { out, err in
            received.withLock { $0 += out.count + err.count }
            return true
        }
        let connection = try SSHConnection(configuration: configuration)
        let start = now()
        connection.start()
        for await event in connection.events {
            if case .finished(let end, _) = event {
                let total = received.withLock { $0 }
                guard case .exited(0, nil) = end, total == Self.bulkBytes else {
                    throw FixtureError("bulk cat without PTY ended with \(end) after \(total) bytes")
                }
            }
        }
        return now() - start
    }

    /// With a PTY through TerminalSession: `direct` is what herdr-remote does (output on the
    /// connection thread); otherwise `onOutput` on the MainActor, what an app does.
    private func oursWithPTY(direct: Bool) async throws -> Double {
        let profile = HostProfile(
            name: "bench", hostname: server.host, port: server.port, username: server.user.name,
            remoteCommand: "stty -opost; cat \(bigFile.path)")
        // Bytes so far, and when the last one arrived (noted by whoever counts it).
        let progress = Mutex<(bytes: Int, finishedAt: Double?)>((0, nil))
        let count: @Sendable ([UInt8]) -> Void = { bytes in
            progress.withLock {
                $0.bytes += bytes.count
                if $0.bytes >= Self.bulkBytes && $0.finishedAt == nil { $0.finishedAt = now() }
            }
        }
        var options = TerminalSessionOptions()
        if direct {
            options.directOutput = { bytes in
                count(bytes)
                return true
            }
        }
        let session = TerminalSession(profile: profile, store: store, options: options) { _ in false }
        session.onOutput = { count($0) }
        let start = now()
        await session.connect(cols: 200, rows: 50)
        while progress.withLock({ $0.finishedAt }) == nil && !session.state.isFinal {
            try await Task.sleep(for: .milliseconds(2))
        }
        session.disconnect()
        let (total, finishedAt) = progress.withLock { ($0.bytes, $0.finishedAt) }
        guard let finishedAt, total == Self.bulkBytes else {
            throw FixtureError("bulk cat with PTY: \(total) bytes, state \(session.state)")
        }
        return finishedAt - start
    }

    func sshCat(pty: Bool, cipher: String?) throws -> Double {
        var arguments = sshArguments
        if let cipher { arguments = ["-c", cipher, "-m", "hmac-sha2-256"] + arguments }
        arguments.insert(pty ? "-tt" : "-T", at: 0)
        arguments.append(pty ? "stty -opost; cat \(bigFile.path)" : "cat \(bigFile.path)")
        let start = now()
        let (bytes, status) = try Self.countOutput(of: "ssh", arguments)
        let seconds = now() - start
        guard status == 0, bytes == Self.bulkBytes else {
            throw FixtureError("ssh cat gave \(bytes) bytes, status \(status)")
        }
        return seconds
    }

    /// Runs a program, reading and counting its stdout; its stderr goes to `stderr` when given.
    static func countOutput(
        of executable: String, _ arguments: [String], environment: [String: String]? = nil, stderr: Int32 = -1
    ) throws -> (Int, Int32) {
        let pipe = try PipePair()
        let child = try ChildProcess(
            executable, arguments, environment: environment, stdout: pipe.write, stderr: stderr)
        close(pipe.write)
        defer { close(pipe.read) }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        var total = 0
        while true {
            let n = read(pipe.read, &buffer, buffer.count)
            if n > 0 {
                total += n
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                break
            }
        }
        return (total, child.wait())
    }

    // MARK: Keystrokes

    static let echoCommand = "stty raw -echo; exec cat"

    /// Keystroke round trips through the TerminalSession API, the herdr-remote program and ssh,
    /// one of each in turn, back to back: the three see the same moments of a machine whose load
    /// drifts (this VM's ssh p50 moves by a factor of two from minute to minute).
    private func keystrokeRoundTrips() async throws -> (api: [Double], program: [Double], ssh: [Double]) {
        let profile = HostProfile(
            name: "bench", hostname: server.host, port: server.port, username: server.user.name,
            remoteCommand: Self.echoCommand)
        let session = TerminalSession(profile: profile, store: store, options: TerminalSessionOptions()) { _ in false }
        let echo = EchoWaiter()
        session.onOutput = { echo.received($0) }
        await session.connect(cols: 80, rows: 24)
        defer { session.disconnect() }
        // The first bytes may land before `stty raw` ran; wait until an echo arrives at all.
        for _ in 0..<200 {
            session.send([UInt8(ascii: "w")])
            if await echo.wait(for: UInt8(ascii: "w"), timeout: 0.05) != nil { break }
        }
        let (program, programConfig) = try herdrRemoteEcho()
        defer {
            program.stop()
            withExtendedLifetime(programConfig) {}
        }
        let ssh = try PipedEcho(
            executable: "ssh", arguments: ["-tt"] + sshArguments + [Self.echoCommand], environment: nil)
        defer { ssh.stop() }
        var samples: (api: [Double], program: [Double], ssh: [Double]) = ([], [], [])
        for index in 0..<keystrokes {
            let byte = UInt8(ascii: "a") + UInt8(index % 26)
            let start = now()
            session.send([byte])
            guard let arrived = await echo.wait(for: byte, timeout: 5) else {
                throw FixtureError("no echo for keystroke \(index)")
            }
            samples.api.append(arrived - start)
            samples.program.append(try program.roundTrip(byte, index: index))
            samples.ssh.append(try ssh.roundTrip(byte, index: index))
        }
        return samples
    }

    /// `herdr-remote connect` to the echo host, with this suite's configuration directory (through
    /// the returned XDG directory, which must outlive the program).
    private func herdrRemoteEcho() throws -> (PipedEcho, TemporaryDirectory) {
        let profile = HostProfile(
            name: "bench-echo", hostname: server.host, port: server.port, username: server.user.name,
            remoteCommand: Self.echoCommand)
        store.upsert(profile)
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let client = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("herdr-remote")
            .path
        var environment = ProcessInfo.processInfo.environment
        // ConfigDirectory.standard() appends "herdr-remote"; give it a parent whose child is our directory.
        let parent = try TemporaryDirectory(prefix: "herdr-bench-xdg-")
        try FileManager.default.createSymbolicLink(at: parent.file("herdr-remote"), withDestinationURL: directory.url)
        environment["XDG_CONFIG_HOME"] = parent.path
        return (
            try PipedEcho(executable: client, arguments: ["connect", "bench-echo"], environment: environment), parent
        )
    }

    // MARK: Memory under a stalled consumer

    /// Runs the stalled-consumer scenario in a child process of this binary, so the peak RSS is its own.
    private func stalledConsumerPeakInChild() throws -> (Int, Int) {
        let environment = ProcessInfo.processInfo.environment.merging([
            "HERDR_BENCH_HOST": server.host, "HERDR_BENCH_PORT": String(server.port),
            "HERDR_BENCH_USER": server.user.name,
            "HERDR_BENCH_CONFIG": directory.url.path,
        ]) { $1 }
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        let result = try ProcessRunner.run(executable, ["stall-child"], environment: environment, timeout: 180)
        guard result.status == 0,
            let line = result.stdout.split(separator: "\n").last(where: { $0.hasPrefix("peak_kib=") })
        else { throw FixtureError("stall child failed: \(result.stdout) \(result.stderr)") }
        let fields = Dictionary(
            uniqueKeysWithValues: line.split(separator: " ").map { pair -> (String, Int) in
                let parts = pair.split(separator: "=")
                return (String(parts[0]), Int(parts[1]) ?? 0)
            })
        return (fields["peak_kib"] ?? 0, fields["baseline_kib"] ?? 0)
    }

    /// ssh's own peak RSS when its stdout is not read for 3 s while the host writes 64 MiB.
    func sshStalledPeak() throws -> Int {
        let pipe = try PipePair()
        let child = try ChildProcess(
            "ssh", ["-T"] + sshArguments + ["head -c \(Self.stallBytes) /dev/zero"], stdout: pipe.write)
        close(pipe.write)
        defer { close(pipe.read) }
        var peak = 0
        let stallEnd = now() + 3
        while now() < stallEnd {
            peak = max(peak, peakRSSKiB(pid: String(child.pid)))
            usleep(50_000)
        }
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while read(pipe.read, &buffer, buffer.count) > 0 { peak = max(peak, peakRSSKiB(pid: String(child.pid))) }
        child.wait()
        return peak
    }

    // MARK: Facts

    /// The cipher and MAC sshd logged for the first libssh2 connection (ours), e.g. "aes128-ctr, hmac-sha2-256".
    private func negotiatedCipher() throws -> String {
        let log = server.log()
        guard let ours = log.range(of: "compat_banner: no match: libssh2"),
            let kex = log.range(of: "kex: client->server cipher: ", range: ours.upperBound..<log.endIndex)
        else { return "unknown (not in sshd's log)" }
        let fields = log[kex.upperBound...].prefix { $0 != "\n" }.split(separator: " ")
        return fields.count >= 3 ? "\(fields[0]) with \(fields[2])" : String(fields.first ?? "unknown")
    }

    private func opensshVersion() -> String {
        let result = try? ProcessRunner.run("ssh", ["-V"])
        return result?.stderr.split(separator: ",").first.map(String.init) ?? "unknown"
    }
}

/// Waits on the MainActor until a given byte shows up in session output, and says when `onOutput`
/// handed it over (the API's answer; the waiting task resumes a little later, the harness's own
/// cost). One watchdog task checks the timeout, so a wait costs no timer of its own: the harness
/// stays out of what it measures.
@MainActor
final class EchoWaiter {
    private var seen: [UInt8] = []
    private var waiter: (byte: UInt8, deadline: Double, continuation: CheckedContinuation<Double?, Never>)?
    private var watchdog: Task<Void, Never>?
    private var arrivedAt = 0.0

    func received(_ bytes: [UInt8]) {
        arrivedAt = now()
        seen += bytes
        if let waiter, seen.contains(waiter.byte) {
            seen.removeAll()
            self.waiter = nil
            waiter.continuation.resume(returning: arrivedAt)
        }
    }

    /// When the byte arrived, or nil after `timeout` seconds without it.
    func wait(for byte: UInt8, timeout: Double) async -> Double? {
        if seen.contains(byte) {
            seen.removeAll()
            return arrivedAt
        }
        if watchdog == nil {
            watchdog = Task { @MainActor [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(50))
                    guard let self, let current = self.waiter, now() > current.deadline else { continue }
                    self.waiter = nil
                    current.continuation.resume(returning: nil)
                }
            }
        }
        let result = await withCheckedContinuation { continuation in
            waiter = (byte, now() + timeout, continuation)
        }
        seen.removeAll()
        return result
    }

    deinit { watchdog?.cancel() }
}
