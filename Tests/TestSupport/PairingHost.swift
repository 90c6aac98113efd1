import Foundation
import Glibc

/// A computer to pair with: sshd on a "tailnet host" (a test network namespace at its 100.64/10
/// address, or loopback) and `herdr-pair --test-mode` for one pairing, run as the account it
/// pairs (through `setpriv`), answering approvals from `answer(_:)`.
/// `line(startingWith:)` is for one reader at a time; `answer(_:)` may be called from any thread.
public final class PairingHost: @unchecked Sendable {
    public let namespace: TestNetworkNamespace?
    public let server: SSHServer
    public let helper: ChildProcess
    private let helperInput: Int32
    private let helperOutput: Int32
    private var buffered = ""

    /// `herdrPair` is the helper binary; `host` is the name put in the code (the namespace
    /// address unless given).
    public init(session: String, herdrPair: String, host: String? = nil, onLoopback: Bool = false) throws {
        namespace = onLoopback ? nil : try TestNetworkNamespace()
        var options = SSHServer.Options()
        if let namespace {
            options.networkNamespace = namespace.name
            options.listenAddress = namespace.innerAddress
        }
        server = try SSHServer(options)
        // herdr-pair runs as the account and rewrites authorized_keys beside itself.
        for path in [server.directory.path, server.authorizedKeysFile.path] {
            guard chown(path, server.user.uid, server.user.gid) == 0 else { throw FixtureError("chown \(path) failed") }
        }
        let input = try PipePair()
        let output = try PipePair()
        helper = try ChildProcess(
            "/usr/bin/setpriv",
            [
                "--reuid=\(server.user.uid)", "--regid=\(server.user.gid)", "--init-groups", "--", herdrPair,
                "--test-mode", "--session", session, "--host", host ?? namespace!.innerAddress, "--port",
                String(server.port), "--authorized-keys", server.authorizedKeysFile.path, "--host-key",
                server.directory.appending("keys/ssh_host_ed25519_key.pub").path,
            ],
            environment: [
                "HOME": server.homeDirectory.path, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8",
                "HERDR_PAIR_TEST_MODE": "1", "USER": server.user.name, "LOGNAME": server.user.name,
            ], stdin: input.read, stdout: output.write)
        close(input.read)
        close(output.write)
        helperInput = input.write
        helperOutput = output.read
    }

    public func tearDown() {
        helper.signal(SIGTERM)
        _ = helper.wait(timeout: 10)
        close(helperInput)
        close(helperOutput)
        server.destroy()
        namespace?.remove()
    }

    /// The next line the helper prints on stdout that starts with `prefix`.
    public func line(startingWith prefix: String, timeout: Double = 30) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let newline = buffered.firstIndex(of: "\n") {
                let line = String(buffered[..<newline])
                buffered.removeSubrange(...newline)
                if line.hasPrefix(prefix) { return line }
                continue
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw FixtureError("herdr-pair printed no \(prefix) line in \(timeout) s") }
            var fds = [pollfd(fd: helperOutput, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 1, Int32(remaining * 1000)) > 0 else { continue }
            let n = read(helperOutput, &chunk, chunk.count)
            guard n > 0 else { throw FixtureError("herdr-pair closed its output before a \(prefix) line") }
            buffered += String(decoding: chunk[0..<n], as: UTF8.self)
        }
    }

    public func answer(_ text: String) {
        _ = (text + "\n").withCString { write(helperInput, $0, strlen($0)) }
    }
}
