import Foundation
import HerdrKit
import SSHClient
import TestSupport
import Testing

/// A client side for session tests: its own config directory (device key, pins, hosts) whose
/// device key the given sshd authorizes, and helpers to wait on a session.
@MainActor
final class SessionHarness {
    let server: SSHServer
    let config: TemporaryDirectory
    let store: HostStore
    let directory: ConfigDirectory
    private(set) var output: [UInt8] = []
    private(set) var chunkSizes: [Int] = []
    private(set) var challenges: [HostKeyChallenge] = []

    init(server: SSHServer, authorize: Bool = true) throws {
        self.server = server
        config = try TemporaryDirectory(prefix: "herdr-client-")
        directory = ConfigDirectory(url: config.url)
        store = HostStore(directory: directory)
        if authorize {
            try server.authorize(try DeviceKey.publicKeyOpenSSH(in: directory))
        }
    }

    var pins: HostKeyPins { HostKeyPins(directory: directory) }

    func profile(session: String? = "t-\(UUID().uuidString.prefix(8).lowercased())", command: String? = nil)
        -> HostProfile
    {
        HostProfile(
            name: "fixture", hostname: server.host, port: server.port, username: server.user.name,
            herdrSession: session,
            remoteCommand: command)
    }

    /// A session whose first-use prompt answers `approve` and records the challenge.
    func session(
        _ profile: HostProfile, options: TerminalSessionOptions = .fastForTests, approve: Bool = true
    ) -> TerminalSession {
        let session = TerminalSession(profile: profile, store: store, options: options) { [weak self] challenge in
            self?.challenges.append(challenge)
            return approve
        }
        session.onOutput = { [weak self] bytes in
            self?.output += bytes
            self?.chunkSizes.append(bytes.count)
        }
        return session
    }

    var text: String { String(decoding: output, as: UTF8.self) }

    func clearOutput() { output.removeAll() }

    /// Waits (polling, bounded) until `condition` holds; records an issue and throws on timeout.
    func waitUntil(
        _ what: String, timeout: Double = 15, sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool
    ) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition() {
            if ContinuousClock.now > deadline {
                Issue.record("timed out after \(timeout) s waiting for \(what)", sourceLocation: sourceLocation)
                throw FixtureError("timed out waiting for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Waits until the output contains `text`.
    func waitForOutput(_ text: String, timeout: Double = 15, sourceLocation: SourceLocation = #_sourceLocation)
        async throws
    {
        try await waitUntil(
            "output containing \(text.debugDescription); got \(self.text.suffix(300).debugDescription)",
            timeout: timeout, sourceLocation: sourceLocation
        ) {
            self.text.contains(text)
        }
    }

    /// How many TCP connections sshd has accepted so far.
    var connectionsAccepted: Int { server.log().components(separatedBy: "Connection from ").count - 1 }
    /// How many authentication requests sshd has seen.
    var authenticationRequests: Int { server.log().components(separatedBy: "userauth-request").count - 1 }
}

extension TerminalSessionOptions {
    /// Quick keepalives and reattach for tests; everything else as shipped.
    static var fastForTests: TerminalSessionOptions {
        var options = TerminalSessionOptions()
        options.keepaliveInterval = 1
        options.connectTimeout = .seconds(5)
        options.reconnect = ReconnectPolicy(
            initialDelay: .milliseconds(200), maximumDelay: .seconds(1), maximumAttempts: 20)
        return options
    }
}

extension SessionState {
    var failureMessage: String? {
        if case .failed(let message) = self { return message }
        return nil
    }
}
