import Foundation
import TestSupport
import Testing

/// `connect` logging in with keys other than the device key: ssh-agent's (SSH_AUTH_SOCK) and
/// `--identity` files. The device key is never authorized here.
@Suite("herdr-remote with ssh-agent and key files")
struct KeySourceCommandTests {
    static func makeKey(_ directory: TemporaryDirectory, _ name: String, passphrase: String = "") throws -> URL {
        let file = directory.file(name)
        try ProcessRunner.run(
            "ssh-keygen", ["-q", "-t", "ed25519", "-N", passphrase, "-C", name, "-f", file.path], check: true)
        return file
    }

    static func authorize(_ key: URL, on server: SSHServer) throws {
        try server.authorize(try readText(URL(fileURLWithPath: key.path + ".pub")))
    }

    @Test("SSH_AUTH_SOCK's agent logs in when the device key is not authorized; an empty SSH_AUTH_SOCK asks no agent")
    func agentFromEnvironment() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let agent = try SSHAgentProcess()
        let key = try Self.makeKey(keys, "agent-key")
        try agent.add(key)
        try Self.authorize(key, on: server)
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, authorize: false, extra: ["--command", "echo via-agent; sleep 2.2"])
        let result = try cli.run(
            ["connect", "box", "--accept-new-host-key"], setting: ["SSH_AUTH_SOCK": agent.socketPath])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("via-agent"))
        #expect(server.log().contains("Accepted publickey for \(server.user.name)"))

        let without = try cli.run(["connect", "box"], setting: ["SSH_AUTH_SOCK": ""])
        #expect(without.status == 11, "\(without.stderr)")
        #expect(!without.stderr.contains("ssh-agent"))
    }

    @Test("add --identity saves an encrypted key file; connect asks its passphrase and logs in")
    func savedIdentityWithPassphrase() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let key = try Self.makeKey(keys, "id_locked", passphrase: "open sesame")
        try Self.authorize(key, on: server)
        let cli = try CLIHarness()
        try cli.addHost(
            "box", server: server, authorize: false,
            extra: ["--command", "echo via-key-file; sleep 2.2", "--identity", key.path])
        #expect(try readText(cli.directory.appendingPathComponent("hosts.json")).contains(key.path))
        let result = try cli.run(
            ["connect", "box", "--accept-new-host-key"], input: "open sesame\n", setting: ["SSH_AUTH_SOCK": ""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("via-key-file"))
        #expect(result.stderr.contains("Enter passphrase for key '\(key.path)': "))
    }

    @Test("connect --identity uses a key for this connection only; a missing key file is a usage error")
    func identityOnConnect() throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let key = try Self.makeKey(keys, "id_plain")
        try Self.authorize(key, on: server)
        let cli = try CLIHarness()
        try cli.addHost("box", server: server, authorize: false, extra: ["--command", "echo once; sleep 2.2"])
        let result = try cli.run(
            ["connect", "box", "--accept-new-host-key", "-i", key.path], setting: ["SSH_AUTH_SOCK": ""])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("once"))
        #expect(!(try readText(cli.directory.appendingPathComponent("hosts.json"))).contains(key.path))

        let missing = try cli.run(["connect", "box", "--identity", keys.file("nope").path])
        #expect(missing.status == 64)
        #expect(missing.stderr.contains("no readable key file at \(keys.file("nope").path)"))
        let addMissing = try cli.run(["add", "other", "--host", "example.invalid", "-i", keys.file("nope").path])
        #expect(addMissing.status == 64)
    }
}
