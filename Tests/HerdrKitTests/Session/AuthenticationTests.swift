import Foundation
import HerdrKit
import SSHClient
import Synchronization
import TestSupport
import Testing

/// Password and keyboard-interactive logins against sshd configured for them.
@Suite("Authentication") @MainActor
struct AuthenticationTests {
    static func server(_ methods: [String]) throws -> SSHServer {
        var options = SSHServer.Options()
        options.authenticationMethods = methods
        return try SSHServer(options)
    }

    /// Pins the server's key up front so these tests exercise authentication only.
    static func pinned(_ harness: SessionHarness) throws {
        _ = try harness.pins.pin(
            try SSHPublicKey(openSSHLine: try harness.server.scannedKey()), hostname: harness.server.host,
            port: harness.server.port)
    }

    @Test("a stored password logs in when the server allows only passwords")
    func storedPassword() async throws {
        let server = try Self.server(["password"])
        defer { server.destroy() }
        let harness = try SessionHarness(server: server, authorize: false)
        try Self.pinned(harness)
        let profile = harness.profile(command: "echo in-by-password; exec sleep 60")
        harness.store.upsert(profile)
        harness.store.setPassword(server.user.password, for: profile.id)
        let session = harness.session(profile)
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected)
        try await harness.waitForOutput("in-by-password")
        #expect(server.log().contains("Accepted password for \(server.user.name)"))
        #expect(!(try readText(harness.directory.hostsFile)).contains(server.user.password))
        session.disconnect()
    }

    @Test("a wrong password fails as an authentication failure naming what was tried")
    func wrongPassword() async throws {
        let server = try Self.server(["password"])
        defer { server.destroy() }
        let harness = try SessionHarness(server: server, authorize: false)
        try Self.pinned(harness)
        let profile = harness.profile(command: "true")
        harness.store.upsert(profile)
        harness.store.setPassword("not-the-password", for: profile.id)
        let session = harness.session(profile)
        await session.connect(cols: 80, rows: 24)
        #expect(session.failureKind == .authentication)
        let message = try #require(session.state.failureMessage)
        #expect(message.contains("Permission denied for \(server.user.name)"))
        #expect(message.contains("tried password"))
    }

    @Test("the device key is tried first, then the password")
    func deviceKeyBeforePassword() async throws {
        let server = try Self.server(["publickey", "password"].map { $0 })
        defer { server.destroy() }
        let harness = try SessionHarness(server: server, authorize: false)
        try Self.pinned(harness)
        let profile = harness.profile(command: "echo fallback-worked; exec sleep 60")
        harness.store.upsert(profile)
        harness.store.setPassword(server.user.password, for: profile.id)
        let session = harness.session(profile)
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected, "\(session.state)\n\(server.log().suffix(3000))")
        try await harness.waitForOutput("fallback-worked")
        let log = server.log()
        let publickey = try #require(log.range(of: "method publickey"))
        let password = try #require(log.range(of: "Accepted password"))
        #expect(publickey.lowerBound < password.lowerBound)
        session.disconnect()
    }

    @Test("keyboard-interactive (PAM) answers its hidden prompt with the stored password")
    func keyboardInteractiveWithStoredPassword() async throws {
        let server = try Self.server(["keyboard-interactive"])
        defer { server.destroy() }
        let harness = try SessionHarness(server: server, authorize: false)
        try Self.pinned(harness)
        let profile = harness.profile(command: "echo in-by-kbdint; exec sleep 60")
        harness.store.upsert(profile)
        harness.store.setPassword(server.user.password, for: profile.id)
        let session = harness.session(profile)
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected, "\(session.state)\n\(server.log().suffix(3000))")
        try await harness.waitForOutput("in-by-kbdint")
        #expect(server.log().contains("Accepted keyboard-interactive/pam for \(server.user.name)"))
        session.disconnect()
    }

    @Test("keyboard-interactive asks the prompt responder when no password is stored")
    func keyboardInteractiveAsksResponder() async throws {
        let server = try Self.server(["keyboard-interactive"])
        defer { server.destroy() }
        let harness = try SessionHarness(server: server, authorize: false)
        try Self.pinned(harness)
        let seen = Mutex<[KeyboardInteractiveChallenge]>([])
        let password = server.user.password
        var options = TerminalSessionOptions.fastForTests
        options.promptResponder = { challenge in
            seen.withLock { $0.append(challenge) }
            return challenge.prompts.map { _ in password }
        }
        let session = harness.session(harness.profile(command: "echo asked; exec sleep 60"), options: options)
        await session.connect(cols: 80, rows: 24)
        try await harness.waitForOutput("asked")
        let prompts = seen.withLock { $0 }.flatMap(\.prompts)
        #expect(prompts.count == 1)
        #expect(prompts.first?.echo == false)
        #expect(prompts.first?.text.lowercased().contains("password") == true)
        session.disconnect()
    }
}
