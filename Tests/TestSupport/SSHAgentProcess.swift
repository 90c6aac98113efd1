import Foundation
import Glibc

/// A real `ssh-agent -D` of the test's own, on a socket in a private directory, killed with the
/// object. Keys go in with the real `ssh-add`.
public final class SSHAgentProcess {
    public let directory: TemporaryDirectory
    private let process: ChildProcess

    public var socketPath: String { directory.file("agent.sock").path }

    /// Starts the agent and returns once it listens: `ssh-agent -D` prints its `SSH_AUTH_SOCK`
    /// line only after the socket is bound and listening, so reading that line cannot race.
    public init() throws {
        directory = try TemporaryDirectory(prefix: "herdr-agent-")
        let output = try PipePair()
        do {
            process = try ChildProcess(
                "ssh-agent", ["-D", "-a", directory.file("agent.sock").path], stdout: output.write)
        } catch {
            close(output.read)
            close(output.write)
            directory.remove()
            throw error
        }
        close(output.write)
        defer { close(output.read) }
        var seen: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 512)
        let deadline = Date().addingTimeInterval(15)
        while !String(decoding: seen, as: UTF8.self).contains("SSH_AUTH_SOCK="), Date() < deadline {
            var descriptor = pollfd(fd: output.read, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 1000) >= 0 else { break }
            guard descriptor.revents != 0 else { continue }
            let n = read(output.read, &buffer, buffer.count)
            guard n > 0 else { break }
            seen += buffer[0..<n]
        }
        guard String(decoding: seen, as: UTF8.self).contains("SSH_AUTH_SOCK=") else {
            process.signal(SIGKILL)
            process.wait()
            directory.remove()
            throw FixtureError("ssh-agent did not start: \(String(decoding: seen, as: UTF8.self))")
        }
    }

    deinit {
        process.signal(SIGKILL)
        process.wait()
        directory.remove()
    }

    /// `ssh-add FILE` against this agent; the key must have no passphrase.
    public func add(_ keyFile: URL) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["SSH_AUTH_SOCK"] = socketPath
        let result = try ProcessRunner.run("ssh-add", [keyFile.path], environment: environment)
        guard result.status == 0 else { throw FixtureError("ssh-add \(keyFile.path) failed: \(result.stderr)") }
    }

    /// What `ssh-add -l` lists (one fingerprint line per key).
    public func listing() throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["SSH_AUTH_SOCK"] = socketPath
        return try ProcessRunner.run("ssh-add", ["-l"], environment: environment).stdout
    }
}
