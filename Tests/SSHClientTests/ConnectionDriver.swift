import Foundation
import HerdrCrypto
import SSHClient
import TestSupport

/// Runs an SSHConnection to its end, acknowledging output at once, and keeps what happened.
struct ConnectionRun {
    var events: [SSHEvent] = []
    var stdout: [UInt8] = []
    var stderr: [UInt8] = []
    var termination: SSHTermination?

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }
    var hostKey: SSHHostKeyBlob? {
        for case .hostKey(let key) in events { return key }
        return nil
    }
    var authenticatedMethod: String? {
        for case .authenticated(let method) in events { return method }
        return nil
    }

    static func run(_ connection: SSHConnection, input: [UInt8] = [], sendEOF: Bool = false) async -> ConnectionRun {
        var run = ConnectionRun()
        connection.start()
        for await event in connection.events {
            run.events.append(event)
            switch event {
            case .sessionStarted:
                connection.send(input)
                if sendEOF { connection.sendEOF() }
            case .output(let out, let err):
                run.stdout += out
                run.stderr += err
                connection.acknowledgeOutput()
            case .finished(let termination, _):
                run.termination = termination
            default:
                break
            }
        }
        return run
    }
}

extension SSHServer {
    /// A configuration for this server with sensible test defaults.
    func configuration(
        key: Ed25519PrivateKey?, policy: HostKeyPolicy, command: String, pty: PTYRequest? = nil, password: String? = nil
    ) -> SSHConnectionConfiguration {
        SSHConnectionConfiguration(
            host: host, port: port, hostKeyPolicy: policy,
            credentials: SSHCredentials(username: user.name, privateKey: key, password: password), pty: pty,
            command: command,
            connectTimeout: .seconds(5), handshakeTimeout: .seconds(20))
    }

    /// Authorizes a fresh Ed25519 key and returns it.
    func authorizedKey() throws -> Ed25519PrivateKey {
        let key = Ed25519PrivateKey()
        let blob = SSHKeyBlob.ed25519(key.publicKey.raw)
        try authorize("ssh-ed25519 \(Data(blob).base64EncodedString()) test-key")
        return key
    }

    /// The blob of the server's host key of `type`, read with ssh-keyscan.
    func hostKeyBlob(type: String = "ed25519") throws -> [UInt8] {
        let key = try scannedKey(type: type)
        guard let encoded = key.split(separator: " ").last, let data = Data(base64Encoded: String(encoded)) else {
            throw FixtureError("ssh-keyscan gave an unreadable \(type) key: \(key)")
        }
        return [UInt8](data)
    }
}
