import Foundation
import TestSupport
import Testing

/// `connect` against a real sshd: each kind of failure has its own exit code and message.
@Suite("herdr-remote connect exit codes")
struct ConnectExitCodeTests {
    @Test("first use asks on the terminal; y pins the key and the command's output arrives")
    func firstUseApproved() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "echo remote-says-hi; sleep 2.2"])
        let result = try cli.run(["connect", "box"], input: "y\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("remote-says-hi"))
        #expect(
            result.stderr.contains("The authenticity of host '127.0.0.1' (port \(server.port)) can't be established."))
        #expect(result.stderr.contains("ED25519 key fingerprint is SHA256:"))
        let found = try ProcessRunner.run(
            "ssh-keygen",
            ["-F", "[127.0.0.1]:\(server.port)", "-f", cli.directory.appendingPathComponent("known_hosts").path])
        #expect(found.status == 0)
    }

    @Test("declining the key exits 10 and pins nothing")
    func declined() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "true"])
        let result = try cli.run(["connect", "box"], input: "n\n")
        #expect(result.status == 10)
        #expect(result.stderr.contains("was not trusted"))
        let knownHosts = cli.directory.appendingPathComponent("known_hosts")
        let pinned = FileManager.default.fileExists(atPath: knownHosts.path) ? try readText(knownHosts) : ""
        #expect(pinned.isEmpty)
    }

    @Test("a changed host key exits 10, shows both fingerprints and how to forget, and keeps the pin")
    func changedKey() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "true"])
        let fake = try TemporaryDirectory()
        try sshKeygen(["-q", "-t", "ed25519", "-N", "", "-f", fake.file("k").path])
        let fakeKey = try readText(fake.file("k.pub")).split(separator: " ").prefix(2).joined(separator: " ")
        let knownHosts = cli.directory.appendingPathComponent("known_hosts")
        try writeText("[127.0.0.1]:\(server.port) \(fakeKey)\n", to: knownHosts)
        let result = try cli.run(["connect", "box"])
        #expect(result.status == 10)
        let oldPrint = try sshKeygen(["-l", "-E", "sha256", "-f", fake.file("k.pub").path]).stdout.split(
            separator: " ")[1]
        #expect(result.stderr.contains("Host key for 127.0.0.1:\(server.port) changed: was \(oldPrint), now SHA256:"))
        #expect(result.stderr.contains("herdr-remote forget-host-key 127.0.0.1:\(server.port)"))
        #expect(try readText(knownHosts) == "[127.0.0.1]:\(server.port) \(fakeKey)\n")
        #expect(!server.log().contains("userauth-request"))

        let forget = try cli.run(["forget-host-key", "127.0.0.1:\(server.port)"])
        #expect(forget.status == 0)
        #expect(forget.stdout.contains(String(oldPrint)))
        #expect(
            try ProcessRunner.run("ssh-keygen", ["-F", "[127.0.0.1]:\(server.port)", "-f", knownHosts.path]).status == 1
        )
        #expect(try cli.run(["forget-host-key", "127.0.0.1:\(server.port)"]).status == 1)
    }

    @Test("an unauthorized device exits 11 and says how to authorize it")
    func authenticationFailure() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, authorize: false, extra: ["--command", "true"])
        let result = try cli.run(["connect", "box", "--accept-new-host-key"])
        #expect(result.status == 11)
        #expect(result.stderr.contains("Permission denied"))
        #expect(result.stderr.contains("herdr-remote key"))
    }

    @Test("nothing listening exits 12 naming the address")
    func unreachable() throws {
        let cli = try CLIHarness()
        let closedPort = try freeTCPPort()
        #expect(try cli.run(["add", "gone", "--host", "127.0.0.1", "--port", String(closedPort)]).status == 0)
        let result = try cli.run(["connect", "gone"])
        #expect(result.status == 12)
        #expect(result.stderr.contains("Cannot connect to 127.0.0.1:\(closedPort): Connection refused"))
        #expect(try cli.run(["add", "nxdomain", "--host", "no-such-host.invalid"]).status == 0)
        let unresolved = try cli.run(["connect", "nxdomain"])
        #expect(unresolved.status == 12)
        #expect(unresolved.stderr.contains("Could not resolve host no-such-host.invalid"))
    }

    @Test("a failing remote command exits 14 with its status and last output")
    func remoteCommandFails() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, extra: ["--command", "echo about-to-fail; exit 3"])
        let result = try cli.run(["connect", "box", "--accept-new-host-key"])
        #expect(result.status == 14)
        #expect(result.stderr.contains("The remote command exited with status 3\nabout-to-fail"))
    }
}

/// A TCP port on 127.0.0.1 that nothing listens on (bound, then released).
func freeTCPPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ok = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard ok else { throw FixtureError("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
