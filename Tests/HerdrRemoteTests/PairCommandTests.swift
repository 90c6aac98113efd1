import Foundation
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

/// `herdr-remote pair` against sshd on a "tailnet host" (a network namespace at 100.64/10) with a
/// stand-in forced command: the code from stdin or a picture, saving, pins, every error's exit
/// code, signals, and attaching afterwards.
@Suite("herdr-remote pair", .serialized)
struct PairCommandTests {
    @Test("- reads the code from stdin; the host is saved without a command, the key pinned, progress shown")
    func fromStandardInput() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let url = try computer.url()
        let result = try cli.run(
            ["pair", "-", "--yes", "--no-connect", "--name", "Jane’s\u{202E} laptop\u{00A0}2"], input: url + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        let endpoint = "\(computer.address):\(computer.server.port)"
        #expect(result.stdout.contains("Paired with studio."))
        #expect(result.stdout.contains("Saved as 'studio': \(computer.server.user.name)@\(endpoint), session work."))
        #expect(
            result.stdout.contains(
                "Pinned host key \(try computer.hostKey("ed25519").fingerprintSHA256) for \(endpoint)."))
        #expect(result.stdout.contains("Connect with: herdr-remote connect studio"))

        // The summary, then progress in order.
        let connecting = try #require(result.stderr.range(of: "Connecting to \(endpoint)..."))
        let waiting = try #require(
            result.stderr.range(of: "Waiting for approval on studio: confirm \"Jane’s laptop 2\""))
        #expect(connecting.lowerBound < waiting.lowerBound)
        #expect(result.stderr.contains("Pairing code for studio:"))
        #expect(result.stderr.contains("account:     \(computer.server.user.name) (unix)"))

        let hosts = try cli.savedHosts()
        #expect(hosts.count == 1)
        #expect(hosts.first?.name == "studio")
        #expect(hosts.first?.hostname == computer.address)
        #expect(hosts.first?.port == computer.server.port)
        #expect(hosts.first?.herdrSession == "work")
        #expect(hosts.first?.remoteCommand == nil)
        #expect(!(try readText(cli.directory.appendingPathComponent("hosts.json"))).contains("remoteCommand"))
        // known_hosts is OpenSSH's format: ssh-keygen finds the pin.
        #expect(
            try ProcessRunner.run(
                "ssh-keygen", ["-F", "[\(computer.address)]:\(computer.server.port)", "-f", cli.knownHosts.path]
            ).status == 0)
        #expect(try cli.pins().map(\.key) == [try computer.hostKey("ed25519")])

        let device = try cli.run(["key"]).stdout.split(separator: " ").prefix(2).joined(separator: " ")
        #expect(computer.recorded("stdin") == "\(device)\nJane’s laptop 2\n")
        #expect(computer.recorded("tty") == "no\n")
    }

    @Test("--image reads a qrencode PNG; a taken name gets a suffix, --replace replaces it")
    func fromImageAndNames() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let picture = try TemporaryDirectory(prefix: "herdr-qr-")
        let file = picture.file("qr.png").path
        try ProcessRunner.run("qrencode", ["-o", file, try computer.url()], timeout: 10, check: true)

        let first = try cli.run(["pair", "--image", file, "--yes", "--no-connect"])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try cli.run(["pair", "--image", file, "--yes", "--no-connect"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("Saved as 'studio-2'"))
        #expect(second.stdout.contains("A host named 'studio' exists; use --replace to replace it."))
        let before = try cli.savedHosts()
        #expect(before.map(\.name) == ["studio", "studio-2"])

        let replaced = try cli.run(["pair", "--image", file, "--yes", "--no-connect", "--replace"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(replaced.stdout.contains("Replaced the saved host 'studio'"))
        let after = try cli.savedHosts()
        #expect(after.map(\.name) == ["studio", "studio-2"])
        #expect(after.map(\.id) == before.map(\.id))

        let renamed = try cli.run(["pair", "--image", file, "--yes", "--no-connect", "--save-as", "desk"])
        #expect(renamed.status == 0)
        #expect(try cli.savedHosts().map(\.name) == ["studio", "studio-2", "desk"])
        // One pin for the one host and port, however often it paired.
        #expect(try cli.pins().count == 1)
    }

    @Test("it asks first: no sends nothing, yes pairs")
    func asksFirst() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let url = try computer.url()
        let declined = try cli.run(["pair", "-", "--no-connect"], input: url + "\nn\n")
        #expect(declined.status == 1)
        #expect(declined.stderr.contains("Pair with studio as \(computer.server.user.name)? [y/N]"))
        #expect(declined.stderr.contains("Not paired; nothing was sent."))
        #expect(computer.connectionsAccepted == 0)
        #expect(try cli.savedHosts().isEmpty)

        let noAnswer = try cli.run(["pair", url, "--no-connect"])
        #expect(noAnswer.status == 1)
        #expect(computer.connectionsAccepted == 0)

        let approved = try cli.run(["pair", "-", "--no-connect"], input: url + "\ny\n")
        #expect(approved.status == 0, "\(approved.stderr)")
        #expect(try cli.savedHosts().count == 1)
    }

    @Test("each pairing error has its own exit code and pins and saves nothing")
    func errorExitCodes() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let url = try computer.url()
        let answers: [(String, Int32, String)] = [
            ("echo DENIED\nexit 3", 22, "Pairing was denied on the computer."),
            ("printf 'EXPIRED\\r\\n'\nexit 1", 21, "expired on the computer"),
            ("echo USED\nexit 5", 23, "already used by another device"),
            ("echo 'bad request' >&2\necho INVALID\nexit 2", 27, "exited with status 2.\nINVALID\nbad request"),
            ("echo OK\nexit 1", 27, "status 1"),
        ]
        for (answer, status, text) in answers {
            try computer.setAnswer(answer)
            let result = try cli.run(["pair", url, "--yes", "--no-connect"])
            #expect(result.status == status, "\(answer): \(result.stderr)")
            #expect(result.stderr.contains(text), "\(answer): \(result.stderr)")
        }
        try computer.setAnswer(PairFixture.approve)

        let stranger = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).fingerprintSHA256
        let mismatch = try cli.run(["pair", try computer.url(fingerprints: [stranger]), "--yes", "--no-connect"])
        #expect(mismatch.status == 10)
        #expect(mismatch.stderr.contains("is not one of the keys in the pairing code"))

        let unreachable = try cli.run([
            "pair", try computer.url(hostnames: ["zz-herdr-unresolvable"]), "--yes", "--no-connect",
        ])
        #expect(unreachable.status == 12)
        #expect(unreachable.stderr.contains("Could not resolve host zz-herdr-unresolvable"))

        let expired = try cli.run(["pair", try computer.url(expiresIn: -5), "--yes", "--no-connect"])
        #expect(expired.status == 21)

        let invalid = try cli.run(["pair", url.replacingOccurrences(of: "&p=", with: "&p=0"), "--yes"])
        #expect(invalid.status == 20)
        #expect(invalid.stderr.contains("(p)"))

        // Nothing above saved or pinned anything.
        #expect(try cli.savedHosts().isEmpty)
        #expect(try cli.pins().isEmpty)

        // A command smuggled into the code is ignored: the saved host runs herdr's attach.
        let marker = try TemporaryDirectory(prefix: "herdr-smuggle-")
        let smuggled = try cli.run([
            "pair", url + "&cmd=touch%20\(marker.path)/pwned&command=x", "--yes", "--no-connect",
        ])
        #expect(smuggled.status == 0, "\(smuggled.stderr)")
        #expect(try cli.savedHosts().map(\.remoteCommand) == [nil])
        #expect(!FileManager.default.fileExists(atPath: marker.file("pwned").path))
    }

    @Test("a pin for the computer that is not in the code: exit 26, no connection, pin kept")
    func pinConflict() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let other = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
        try FileManager.default.createDirectory(at: cli.directory, withIntermediateDirectories: true)
        let line = "[\(computer.address)]:\(computer.server.port) \(other.openSSHString)\n"
        try writeText(line, to: cli.knownHosts)
        let result = try cli.run(["pair", try computer.url(), "--yes", "--no-connect"])
        #expect(result.status == 26)
        #expect(result.stderr.contains("herdr-remote forget-host-key \(computer.address):\(computer.server.port)"))
        #expect(try readText(cli.knownHosts) == line)
        usleep(300_000)
        #expect(computer.connectionsAccepted == 0)
    }

    @Test("a one-time key the computer refuses: exit 25")
    func oneTimeKeyRefused() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        var payload = try PairingPayload(parsing: try computer.url())
        payload.oneTimeKeySeed = SecureRandom.bytes(32)
        let result = try cli.run(["pair", payload.url, "--yes", "--no-connect"])
        #expect(result.status == 25, "\(result.stderr)")
        #expect(try cli.pins().isEmpty)
    }

    @Test("a code whose name resolves to loopback: exit 24 and no SSH byte")
    func notOnTailnet() throws {
        let computer = try PairFixture(onLoopback: true)
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let result = try cli.run(["pair", try computer.url(hostnames: ["localhost"]), "--yes", "--no-connect"])
        #expect(result.status == 24, "\(result.stderr)")
        #expect(result.stderr.contains("localhost is "))
        #expect(result.stderr.contains("not on the tailnet"))
        usleep(300_000)
        #expect(computer.versionExchanges == 0)
        #expect(try cli.pins().isEmpty)
        #expect(try cli.savedHosts().isEmpty)
    }

    @Test("usage errors exit 64 before any work")
    func usage() throws {
        let cli = try CLIHarness()
        #expect(try cli.run(["pair"]).status == 64)
        #expect(try cli.run(["pair", "herdr://pair?v=1", "--image", "/tmp/x.png"]).status == 64)
        #expect(try cli.run(["pair", "-", "--name", "\u{202E}\u{200B}"], input: "x\n").status == 64)
        #expect(try cli.run(["pair", "-", "--save-as", "a\nb"], input: "x\n").status == 64)
        let empty = try cli.run(["pair", "-"], input: "\n")
        #expect(empty.status == 20)
        #expect(empty.stderr.contains("No pairing code on stdin"))
        let long = try cli.run(["pair", "-"], input: String(repeating: "a", count: 9000) + "\n")
        #expect(long.status == 20)
        #expect(long.stderr.contains("longer than 8192 bytes"))
    }

    @Test("--help lists pair and its exit codes")
    func help() throws {
        let cli = try CLIHarness()
        let top = try cli.run(["--help"])
        #expect(top.stdout.contains("\n  pair "))
        let help = try cli.run(["pair", "--help"])
        for code in ["10", "12", "20", "21", "22", "23", "24", "25", "26", "27", "64", "66", "130", "143"] {
            #expect(help.stdout.contains("\n  \(code) "), "exit code \(code) missing from pair --help")
        }
    }

    // MARK: Processes that run on

    @Test("SIGTERM while the computer decides: exit 143, nothing pinned or saved")
    func terminatedWhileWaiting() throws {
        let computer = try PairFixture(answer: PairFixture.hang)
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let run = try RunningCLI(cli, ["pair", try computer.url(), "--yes", "--no-connect"])
        try waitFor("the helper to wait", timeout: 20) { computer.recorded("waiting") != nil }
        let signalled = Date()
        run.child.signal(SIGTERM)
        let status = run.child.wait(timeout: 5)
        #expect(status == 143, "\(run.stderr)")
        #expect(Date().timeIntervalSince(signalled) < 3)
        #expect(run.stderr.contains("Pairing was cancelled; nothing was pinned or saved."))
        #expect(try cli.pins().isEmpty)
        #expect(try cli.savedHosts().isEmpty)
        if status == nil { run.child.signal(SIGKILL) }
    }

    @Test("without --no-connect it attaches to the session with the new pin and device key")
    func pairsThenAttaches() throws {
        let computer = try PairFixture()
        defer { computer.tearDown() }
        let cli = try CLIHarness()
        let run = try RunningCLI(cli, ["pair", "-", "--yes", "--name", "phone"])
        run.send(try computer.url() + "\n")
        let tmux = computer.server.herdr.tmuxSocket(session: "work")
        try waitFor("the tmux session 'work' on the computer", timeout: 30) {
            (try? ProcessRunner.run("tmux", ["-S", tmux, "has-session", "-t", "work"], timeout: 5).status) == 0
        }
        // Past connect's quick-exit window, then detach as a person would.
        usleep(2_500_000)
        _ = try ProcessRunner.run("tmux", ["-S", tmux, "detach-client", "-s", "work"], timeout: 5)
        let status = run.child.wait(timeout: 15)
        run.closeInput()
        if status == nil { run.child.signal(SIGKILL) }
        #expect(status == 0, "stdout: \(run.stdout.suffix(500))\nstderr: \(run.stderr)")
        #expect(run.stdout.contains("Paired with studio."))
        #expect(
            run.stderr.contains(
                "Connecting to studio (\(computer.server.user.name)@\(computer.address):\(computer.server.port))"))
        #expect(computer.server.log().contains("Accepted publickey"))
        #expect(try readText(computer.server.authorizedKeysFile).contains("herdr-ios:test"))
    }
}

/// `herdr-remote` running in the background with a stdin pipe kept open and output in files.
final class RunningCLI {
    let child: ChildProcess
    private let input: Int32
    private let directory: TemporaryDirectory

    init(_ cli: CLIHarness, _ arguments: [String]) throws {
        directory = try TemporaryDirectory(prefix: "herdr-run-")
        let pipe = try PipePair()
        let out = open(directory.file("stdout").path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        let err = open(directory.file("stderr").path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0o600)
        defer {
            close(pipe.read)
            close(out)
            close(err)
        }
        child = try ChildProcess(
            CLIHarness.executable, arguments, environment: cli.environment, stdin: pipe.read, stdout: out, stderr: err)
        input = pipe.write
    }

    deinit {
        closeInput()
        if child.isRunning {
            child.signal(SIGKILL)
            child.wait()
        }
    }

    func send(_ text: String) {
        _ = text.withCString { write(input, $0, strlen($0)) }
    }

    private var closed = false
    func closeInput() {
        guard !closed else { return }
        closed = true
        close(input)
    }

    var stdout: String { (try? readText(directory.file("stdout"))) ?? "" }
    var stderr: String { (try? readText(directory.file("stderr"))) ?? "" }
}

/// Polls `condition` every 20 ms for at most `timeout` seconds.
func waitFor(_ what: String, timeout: Double, _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw FixtureError("timed out after \(timeout) s waiting for \(what)") }
        usleep(20_000)
    }
}
