import Foundation
import Glibc
import TestSupport

/// QR pairing over SSH, timed the way a person feels it: from starting `herdr-remote pair` with a
/// code to the attached session's first screen, approval answered at once on the computer. The
/// computer is a tailnet host in a test network namespace (pairing refuses loopback by design).
/// The anchor: OpenSSH `ssh -tt` with the freshly authorized device key, attaching to the same
/// session on the same host, in the same run.
struct PairBenchmarks {
    let runs: Int

    func run() throws -> BenchReport {
        var report = BenchReport(
            title: "QR pairing (issue 3): `herdr-remote pair` to the first screen, approval answered at once")
        let directory = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0]
        ).deletingLastPathComponent()
        let client = directory.appendingPathComponent("herdr-remote").path
        // Run as the test user: it must lie on a path that user can traverse.
        let helper = try UserRunnableCopy.of(directory.appendingPathComponent("herdr-pair").path)
        var pairings: [Double] = []
        var sshAttaches: [Double] = []
        for index in 0..<runs {
            let session = "bench\(index)"
            let host = try PairingHost(session: session, herdrPair: helper)
            defer { host.tearDown() }
            let url = String(try host.line(startingWith: "READY ").dropFirst(6))
            let config = try TemporaryDirectory(prefix: "herdr-bench-pair-")
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_CONFIG_HOME"] = config.path

            // Approve the moment the request shows up, on a thread of its own.
            let approver = Thread {
                if (try? host.line(startingWith: "REQUEST ")) != nil { host.answer("y") }
            }
            let start = now()
            approver.start()
            try firstScreen(
                client, ["pair", url, "--yes", "--name", "bench"], environment: environment, marker: "[\(session)]")
            pairings.append(now() - start)

            let key = config.url.appendingPathComponent("herdr-remote/id_ed25519").path
            let sshStart = now()
            try firstScreen(
                "ssh",
                [
                    "-tt", "-F", "/dev/null", "-i", key, "-o", "StrictHostKeyChecking=no", "-o",
                    "UserKnownHostsFile=/dev/null",
                    "-o", "LogLevel=error", "-p", String(host.server.port),
                    "\(host.server.user.name)@\(host.namespace!.innerAddress)",
                    "exec \"$SHELL\" -lc 'herdr session attach \(session)'",
                ], environment: nil, marker: "[\(session)]")
            sshAttaches.append(now() - sshStart)
        }
        report.add(
            "pair to first screen, tailnet host in a namespace (median of \(runs))",
            ours: "\(format(median(pairings) * 1000, 0)) ms",
            anchor: "\(format(median(sshAttaches) * 1000, 0)) ms (ssh attach, already authorized)",
            ratio: "\(format(median(pairings) / median(sshAttaches)))×", target: "< 1000 ms")
        report.notes.append(
            "Pairing includes the connect with the one-time key (host key checked against the code, no prompt), the enroll exchange, approval, saving, pinning, a second connection with the device key, and tmux drawing its first screen. Loopback is refused by the tailnet gate, so only the namespace is measured; its veth is a local link."
        )
        return report
    }

    /// Runs a program until `marker` shows up on its stdout, then ends it.
    private func firstScreen(
        _ executable: String, _ arguments: [String], environment: [String: String]?, marker: String
    ) throws {
        let stdout = try PipePair()
        let child = try ChildProcess(executable, arguments, environment: environment, stdout: stdout.write)
        close(stdout.write)
        defer {
            child.signal(SIGTERM)
            if child.wait(timeout: 5) == nil {
                child.signal(SIGKILL)
                child.wait()
            }
            close(stdout.read)
        }
        var screen = ""
        var buffer = [UInt8](repeating: 0, count: 65536)
        let deadline = now() + 30
        while !screen.contains(marker) {
            guard now() < deadline else {
                throw FixtureError("\(executable) showed no \(marker) within 30 s: \(screen.suffix(300))")
            }
            var fds = [pollfd(fd: stdout.read, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, 200) > 0 else { continue }
            let n = read(stdout.read, &buffer, buffer.count)
            guard n > 0 else { throw FixtureError("\(executable) ended before \(marker): \(screen.suffix(300))") }
            screen += String(decoding: buffer[0..<n], as: UTF8.self)
        }
    }
}
