import Foundation
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

/// Two-phase trust on first use, against a real sshd.
@Suite("Host key trust") @MainActor
struct TrustOnFirstUseTests {
    @Test("first use asks once, pins exactly the key ssh-keyscan shows, then connects with it")
    func firstUsePinsTheScannedKey() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        // The command waits for a line, so the session cannot end before the test looks at it.
        let session = harness.session(harness.profile(command: "echo hello-from-host; read _; sleep 2.2"))
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected)
        try await harness.waitForOutput("hello-from-host")
        // Two TCP connections: the probe, which stopped before authenticating, and the session.
        #expect(harness.connectionsAccepted == 2)
        #expect(harness.authenticationRequests >= 1)

        let scanned = try server.scannedKey()
        let expected = try SSHPublicKey(openSSHLine: scanned)
        let pinned = try harness.pins.pinnedKey(hostname: server.host, port: server.port)
        #expect(pinned == expected)
        #expect(harness.challenges.count == 1)
        let challenge = try #require(harness.challenges.first)
        #expect(challenge.kind == .firstUse)
        #expect(challenge.hostname == "127.0.0.1")
        #expect(challenge.port == server.port)
        #expect(challenge.fingerprintSHA256 == expected.fingerprintSHA256)
        // ssh-keygen agrees on the fingerprint text.
        let keyFile = harness.config.file("scanned.pub")
        try writeText(scanned + "\n", to: keyFile)
        #expect(try sshKeygen(["-l", "-E", "sha256", "-f", keyFile.path]).stdout.contains(expected.fingerprintSHA256))

        session.send(Array("\r".utf8))
        try await harness.waitUntil("the clean exit after 2 s") { session.state == .closed }
        // A second session finds the pin and asks nothing.
        let again = harness.session(harness.profile(command: "echo second; exec sleep 60"))
        await again.connect(cols: 80, rows: 24)
        #expect(again.state == .connected)
        #expect(harness.challenges.count == 1)
        again.disconnect()
    }

    @Test("declining pins nothing and makes no authentication attempt")
    func declinePinsNothing() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(command: "true"), approve: false)
        await session.connect(cols: 80, rows: 24)
        #expect(session.failureKind == .hostKeyNotTrusted)
        #expect(session.state.failureMessage?.contains("was not trusted") == true)
        #expect(try harness.pins.pinnedKey(hostname: server.host, port: server.port) == nil)
        #expect(harness.connectionsAccepted == 1)
        #expect(harness.authenticationRequests == 0)
    }

    @Test("a changed key is refused without a prompt, without authenticating, and the pin stays")
    func changedKeyIsRefused() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let old = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
        #expect(try harness.pins.pin(old, hostname: "127.0.0.1", port: server.port))
        let session = harness.session(harness.profile(command: "true"))
        await session.connect(cols: 80, rows: 24)

        let live = try SSHPublicKey(openSSHLine: try server.scannedKey())
        #expect(session.failureKind == .hostKeyChanged)
        let message = try #require(session.state.failureMessage)
        #expect(
            message.contains(
                "Host key for 127.0.0.1:\(server.port) changed: was \(old.fingerprintSHA256), now \(live.fingerprintSHA256)"
            ))
        #expect(session.rejectedHostKey?.kind == .changed(previousFingerprint: old.fingerprintSHA256))
        #expect(session.rejectedHostKey?.fingerprintSHA256 == live.fingerprintSHA256)
        #expect(harness.challenges.isEmpty)
        #expect(try harness.pins.pinnedKey(hostname: server.host, port: server.port) == old)
        #expect(harness.authenticationRequests == 0)
    }

    @Test("a disconnect during the prompt leaves .closed, no pin and no second socket")
    func disconnectDuringPrompt() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let gate = PromptGate()
        let session = TerminalSession(
            profile: harness.profile(command: "true"), store: harness.store, options: .fastForTests
        ) { _ in
            await gate.wait()
        }
        let connecting = Task { await session.connect(cols: 80, rows: 24) }
        try await harness.waitUntil("the prompt") { gate.isWaiting }
        session.disconnect()
        #expect(session.state == .closed)
        gate.answer(true)
        await connecting.value
        #expect(session.state == .closed)
        #expect(try harness.pins.pinnedKey(hostname: server.host, port: server.port) == nil)
        try await Task.sleep(for: .milliseconds(300))
        #expect(harness.connectionsAccepted == 1)
        #expect(harness.authenticationRequests == 0)
    }

    @Test("concurrent first use keeps the first pin; the later approval cannot replace it")
    func concurrentFirstUseKeepsFirstPin() async throws {
        let first = try SSHServer()
        let harness = try SessionHarness(server: first)
        let gateA = PromptGate()
        let gateB = PromptGate()
        let profile = harness.profile(command: "true")
        let a = TerminalSession(profile: profile, store: harness.store, options: .fastForTests) { _ in
            await gateA.wait()
        }
        let b = TerminalSession(profile: profile, store: harness.store, options: .fastForTests) { _ in
            await gateB.wait()
        }
        let connectingA = Task { await a.connect(cols: 80, rows: 24) }
        try await harness.waitUntil("A's prompt") { gateA.isWaiting }
        let firstKey = try SSHPublicKey(openSSHLine: try first.scannedKey())
        // The host is replaced by another with a different key on the same address and port.
        first.destroy()
        var options = SSHServer.Options()
        options.port = first.port
        let second = try SSHServer(options)
        defer { second.destroy() }
        try second.authorize(try DeviceKey.publicKeyOpenSSH(in: harness.directory))
        let connectingB = Task { await b.connect(cols: 80, rows: 24) }
        try await harness.waitUntil("B's prompt") { gateB.isWaiting }

        gateA.answer(true)
        await connectingA.value
        gateB.answer(true)
        await connectingB.value
        #expect(try harness.pins.pinnedKey(hostname: "127.0.0.1", port: first.port) == firstKey)
        // A pinned the first key but reached the second host: refused as changed. B's approval
        // could not replace A's pin, so B is refused too.
        #expect(a.failureKind == .hostKeyChanged)
        #expect(b.failureKind == .hostKeyChanged)
        #expect(second.log().components(separatedBy: "userauth-request").count == 1)
    }

    @Test("an invalid herdr session name fails before any socket is opened")
    func invalidSessionNameFailsBeforeConnecting() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(session: "$(touch pwned)"))
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .failed("Invalid herdr session name: '$(touch pwned)'"))
        #expect(session.failureKind == .invalidSessionName)
        #expect(harness.connectionsAccepted == 0)
        #expect(harness.challenges.isEmpty)
    }
}

/// A host-key prompt that waits until the test answers it.
@MainActor
final class PromptGate {
    private var continuation: CheckedContinuation<Bool, Never>?
    private(set) var isWaiting = false

    func wait() async -> Bool {
        await withCheckedContinuation { continuation in
            self.continuation = continuation
            isWaiting = true
        }
    }

    func answer(_ approve: Bool) {
        continuation?.resume(returning: approve)
        continuation = nil
        isWaiting = false
    }
}
