import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import SSHClient
import TestSupport

/// Login time by key source: SSHConnection from TCP connect to the exit of `true`, beside `ssh`
/// doing the same with the same key from the same place (a key file with `-i`, or ssh-agent), in
/// the same run against the same sshd. The agent and file keys are ECDSA P-256 made by
/// `ssh-keygen`; the device key is not authorized in those rows, so it is tried and refused first,
/// as for a person whose key lives in the agent.
final class AuthBenchmarks {
    let server: SSHServer
    let keys: TemporaryDirectory
    let agent: SSHAgentProcess
    let deviceKey = Ed25519PrivateKey()
    let fileKey: URL
    let agentKey: URL
    let runs: Int

    init(runs: Int) throws {
        self.runs = runs
        var options = SSHServer.Options()
        options.userName = "herdrbench"
        server = try SSHServer(options)
        keys = try TemporaryDirectory(prefix: "herdr-bench-keys-")
        agent = try SSHAgentProcess()
        fileKey = keys.file("id_file")
        agentKey = keys.file("id_agent")
        for key in [fileKey, agentKey] {
            try ProcessRunner.run("ssh-keygen", ["-q", "-t", "ecdsa", "-N", "", "-f", key.path], check: true)
            try server.authorize(try String(contentsOf: URL(fileURLWithPath: key.path + ".pub"), encoding: .utf8))
        }
        try agent.add(agentKey)
    }

    func destroy() {
        server.destroy()
        keys.remove()
    }

    func run() async throws -> BenchReport {
        var report = BenchReport(title: "Logins by key source (issue 17): SSHConnection vs `ssh`, same sshd, same run")
        let hostKey = try SSHPublicKey(openSSHLine: try server.scannedKey()).blob
        let authorizedDevice = Ed25519PrivateKey()
        try server.authorize(
            "ssh-ed25519 \(Data(SSHKeyBlob.ed25519(authorizedDevice.publicKey.raw)).base64EncodedString()) bench")
        let devicePath = keys.file("id_device")
        try OpenSSHPrivateKey(privateKey: authorizedDevice, comment: "bench").pemText.write(
            to: devicePath, atomically: true, encoding: .utf8)
        chmod(devicePath.path, 0o600)

        var rows: [(String, [Double], [Double])] = []
        rows.append(
            (
                "device key (ours) vs ssh -i the same key",
                try await times { try await self.ours(hostKey, device: authorizedDevice) },
                try times { try self.ssh(["-i", devicePath.path, "-o", "IdentitiesOnly=yes"], agent: nil) }
            ))
        rows.append(
            (
                "key file (--identity) vs ssh -i",
                try await times { try await self.ours(hostKey, files: [self.fileKey.path]) },
                try times { try self.ssh(["-i", self.fileKey.path, "-o", "IdentitiesOnly=yes"], agent: nil) }
            ))
        rows.append(
            (
                "ssh-agent key vs ssh with the agent",
                try await times { try await self.ours(hostKey, agent: self.agent.socketPath) },
                try times { try self.ssh([], agent: self.agent.socketPath) }
            ))
        for (name, ours, anchor) in rows {
            let oursMedian = median(ours) * 1000
            let anchorMedian = median(anchor) * 1000
            report.add(
                "login to `true` exiting, median, \(name)", ours: String(format: "%.1f ms", oursMedian),
                anchor: String(format: "%.1f ms", anchorMedian),
                ratio: String(format: "%.2f×", oursMedian / anchorMedian),
                target: "≤ 1.0×")
        }
        report.notes.append(
            "Median of \(runs) logins each, wall time from the start of the TCP connect to the remote command's exit status. ssh runs with `-F /dev/null`, `BatchMode`, no known_hosts file and our key exchange (`KexAlgorithms=curve25519-sha256`; its default, sntrup761x25519, costs more), and pays its own process start, which we do not. Our key-file and agent rows first offer the unauthorized device key, as a person's login would; ssh offers only the key named."
        )
        return report
    }

    private func times(_ body: () async throws -> Void) async throws -> [Double] {
        var values: [Double] = []
        for _ in 0..<runs {
            let start = Date()
            try await body()
            values.append(Date().timeIntervalSince(start))
        }
        return values
    }

    private func times(_ body: () throws -> Void) throws -> [Double] {
        var values: [Double] = []
        for _ in 0..<runs {
            let start = Date()
            try body()
            values.append(Date().timeIntervalSince(start))
        }
        return values
    }

    private func ours(_ hostKey: [UInt8], device: Ed25519PrivateKey? = nil, files: [String] = [], agent: String? = nil)
        async throws
    {
        let configuration = SSHConnectionConfiguration(
            host: server.host, port: server.port, hostKeyPolicy: .accept([hostKey]),
            credentials: SSHCredentials(
                username: server.user.name, privateKey: device ?? deviceKey, identityFiles: files,
                agentSocketPath: agent),
            pty: nil, command: "true")
        let connection = try SSHConnection(configuration: configuration)
        connection.start()
        var end: SSHTermination?
        for await event in connection.events {
            if case .finished(let termination, _) = event { end = termination }
        }
        guard end == .exited(status: 0, signal: nil) else {
            throw FixtureError("login failed: \(String(describing: end))")
        }
    }

    private func ssh(_ options: [String], agent: String?) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["SSH_AUTH_SOCK"] = agent
        let result = try ProcessRunner.run(
            "ssh",
            [
                "-F", "/dev/null", "-p", String(server.port), "-o", "StrictHostKeyChecking=no", "-o",
                "UserKnownHostsFile=/dev/null", "-o", "LogLevel=error", "-o", "BatchMode=yes", "-o",
                "KexAlgorithms=curve25519-sha256",
            ] + options
                + ["\(server.user.name)@\(server.host)", "true"], environment: environment)
        guard result.status == 0 else { throw FixtureError("ssh login failed: \(result.stderr)") }
    }
}
