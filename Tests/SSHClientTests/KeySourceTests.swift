import Foundation
import HerdrCrypto
import SSHClient
import Synchronization
import TestSupport
import Testing

/// Keys beyond the device key: files named with `--identity`/`IdentityFile`, and a real ssh-agent.
/// In each test the device key is not authorized, so only the key under test can let us in.
@Suite("Key files and ssh-agent against a real sshd")
struct KeySourceTests {
    /// A key made by the real `ssh-keygen` in `directory`; returns the private key file.
    static func makeKey(_ type: String, passphrase: String = "", in directory: TemporaryDirectory, name: String)
        throws -> URL
    {
        let file = directory.file(name)
        var arguments = ["-q", "-t", type, "-N", passphrase, "-C", "\(name)-comment", "-f", file.path]
        if type == "rsa" { arguments += ["-b", "2048"] }
        try ProcessRunner.run("ssh-keygen", arguments, check: true)
        return file
    }

    /// `SHA256:…` of the key's public half, as sshd logs it.
    static func fingerprint(_ keyFile: URL) throws -> String {
        let line = try ProcessRunner.run(
            "ssh-keygen", ["-l", "-E", "sha256", "-f", keyFile.path + ".pub"], check: true)
        return String(line.stdout.split(separator: " ")[1])
    }

    static func authorize(_ keyFile: URL, on server: SSHServer) throws {
        try server.authorize(try String(contentsOf: URL(fileURLWithPath: keyFile.path + ".pub"), encoding: .utf8))
    }

    static func server(_ methods: [String] = ["publickey"]) throws -> SSHServer {
        var options = SSHServer.Options()
        options.authenticationMethods = methods
        return try SSHServer(options)
    }

    static func connect(
        _ server: SSHServer, identityFiles: [String] = [], agent: String? = nil, password: String? = nil,
        responder: (@Sendable (KeyboardInteractiveChallenge) -> [String]?)? = nil
    ) async throws -> ConnectionRun {
        var configuration = server.configuration(
            key: Ed25519PrivateKey(), policy: .accept([try server.hostKeyBlob()]), command: "echo in",
            password: password)
        configuration.credentials.identityFiles = identityFiles
        configuration.credentials.agentSocketPath = agent
        configuration.credentials.responder = responder
        return await ConnectionRun.run(try SSHConnection(configuration: configuration))
    }

    static func failure(_ run: ConnectionRun) -> String {
        guard case .failed(let failure) = run.termination else { return "" }
        return failure.message
    }

    @Test("an agent's Ed25519 key logs in after the device key was refused")
    func agentEd25519() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let agent = try SSHAgentProcess()
        let other = try Self.makeKey("ed25519", in: keys, name: "other")
        let key = try Self.makeKey("ed25519", in: keys, name: "agent-key")
        try agent.add(other)
        try agent.add(key)
        try Self.authorize(key, on: server)
        let run = try await Self.connect(server, agent: agent.socketPath)
        #expect(run.termination == .exited(status: 0, signal: nil), "\(run.termination as Any)")
        #expect(run.stdoutText == "in\n")
        #expect(server.log().contains("Accepted publickey for \(server.user.name)"))
        #expect(server.log().contains(try Self.fingerprint(key)))
    }

    @Test(
        "an agent's ECDSA key logs in; an RSA key is refused by default with the reason, taken where ssh-rsa is allowed"
    )
    func agentECDSAAndRSA() async throws {
        for (type, allowsSHA1) in [("ecdsa", false), ("rsa", false), ("rsa", true)] {
            var options = SSHServer.Options()
            if allowsSHA1 { options.extraConfig = ["PubkeyAcceptedAlgorithms +ssh-rsa"] }
            let server = try SSHServer(options)
            defer { server.destroy() }
            let keys = try TemporaryDirectory()
            defer { keys.remove() }
            let agent = try SSHAgentProcess()
            let key = try Self.makeKey(type, in: keys, name: "agent-\(type)")
            try agent.add(key)
            try Self.authorize(key, on: server)
            let run = try await Self.connect(server, agent: agent.socketPath)
            if type == "rsa" && !allowsSHA1 {
                #expect(
                    Self.failure(run).contains(
                        "ssh-agent (1 key, none accepted; this client signs with RSA keys only as ssh-rsa (SHA-1)"),
                    "\(Self.failure(run))")
            } else {
                #expect(run.termination == .exited(status: 0, signal: nil), "\(type): \(run.termination as Any)")
                #expect(server.log().contains(try Self.fingerprint(key)), "\(type)")
            }
        }
    }

    @Test("when no agent key is accepted, the password comes after the agent's keys")
    func agentBeforePassword() async throws {
        let server = try Self.server(["publickey", "password"])
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let agent = try SSHAgentProcess()
        let key = try Self.makeKey("ed25519", in: keys, name: "unauthorized")
        try agent.add(key)
        let run = try await Self.connect(server, agent: agent.socketPath, password: server.user.password)
        #expect(run.termination == .exited(status: 0, signal: nil), "\(run.termination as Any)")
        let log = server.log()
        let agentKey = try #require(log.range(of: try Self.fingerprint(key)))
        let password = try #require(log.range(of: "Accepted password"))
        #expect(agentKey.lowerBound < password.lowerBound)
    }

    @Test("an agent that cannot be reached is named in the refusal, not fatal before it")
    func unreachableAgent() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let run = try await Self.connect(server, agent: "/nonexistent/agent.sock")
        let message = Self.failure(run)
        #expect(message.contains("Permission denied for \(server.user.name)"), "\(message)")
        #expect(message.contains("ssh-agent at /nonexistent/agent.sock could not be reached"), "\(message)")
    }

    @Test(
        "unencrypted Ed25519 and ECDSA key files log in; a missing file is named and skipped; RSA is refused saying why"
    )
    func plainKeyFiles() async throws {
        for type in ["ed25519", "ecdsa", "rsa"] {
            let server = try Self.server()
            defer { server.destroy() }
            let keys = try TemporaryDirectory()
            defer { keys.remove() }
            let key = try Self.makeKey(type, in: keys, name: "id_\(type)")
            try Self.authorize(key, on: server)
            let run = try await Self.connect(server, identityFiles: [keys.file("missing").path, key.path])
            if type == "rsa" {
                let message = Self.failure(run)
                #expect(
                    message.contains("identity \(keys.file("missing").path) (No such file or directory)"), "\(message)")
                #expect(
                    message.contains(
                        "identity \(key.path) (not accepted; this client signs with RSA keys only as ssh-rsa"),
                    "\(message)")
            } else {
                #expect(run.termination == .exited(status: 0, signal: nil), "\(type): \(run.termination as Any)")
                #expect(server.log().contains(try Self.fingerprint(key)), "\(type)")
            }
        }
    }

    @Test("an encrypted key file asks its passphrase, again after a wrong one, and logs in")
    func encryptedKeyFile() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let key = try Self.makeKey("ed25519", passphrase: "correct horse", in: keys, name: "id_locked")
        try Self.authorize(key, on: server)
        let asked = Mutex<[KeyboardInteractiveChallenge]>([])
        let run = try await Self.connect(server, identityFiles: [key.path]) { challenge in
            let count = asked.withLock {
                $0.append(challenge)
                return $0.count
            }
            return [count == 1 ? "wrong horse" : "correct horse"]
        }
        #expect(run.termination == .exited(status: 0, signal: nil), "\(run.termination as Any)")
        let challenges = asked.withLock { $0 }
        #expect(challenges.count == 2)
        #expect(challenges.allSatisfy { $0.name == "passphrase" && $0.prompts.count == 1 && !$0.prompts[0].echo })
        #expect(challenges.first?.prompts.first?.text == "Enter passphrase for key '\(key.path)': ")
    }

    @Test("an encrypted key file with no one to ask, or three wrong passphrases, is refused saying so")
    func encryptedKeyFileRefused() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let key = try Self.makeKey("ed25519", passphrase: "correct horse", in: keys, name: "id_locked")
        try Self.authorize(key, on: server)
        let unasked = try await Self.connect(server, identityFiles: [key.path])
        #expect(Self.failure(unasked).contains("identity \(key.path) (encrypted, and there is no terminal"))
        let count = Mutex(0)
        let wrong = try await Self.connect(server, identityFiles: [key.path]) { _ in
            count.withLock { $0 += 1 }
            return ["wrong horse"]
        }
        #expect(
            Self.failure(wrong).contains("identity \(key.path) (wrong passphrase 3 times)"), "\(Self.failure(wrong))")
        #expect(count.withLock { $0 } == 3)
        #expect(!server.log().contains("Accepted publickey"))
    }

    @Test("a file that is not a key is named in the refusal")
    func notAKey() async throws {
        let server = try Self.server()
        defer { server.destroy() }
        let keys = try TemporaryDirectory()
        defer { keys.remove() }
        let file = keys.file("not-a-key")
        try Data("hello\n".utf8).write(to: file)
        let run = try await Self.connect(server, identityFiles: [file.path])
        #expect(
            Self.failure(run).contains("identity \(file.path) (not a private key this client can read: "),
            "\(Self.failure(run))")
    }
}
