import Foundation
import HerdrKit
import TestSupport
import Testing

/// Losing the host mid-session: a visible `.reconnecting`, then the same herdr (tmux) session.
@Suite("Reattach after the connection drops") @MainActor
struct ReattachTests {
    @Test("a killed sshd gives .reconnecting with a reason, and the session reattaches when sshd returns")
    func reattachesAfterSSHDReturns() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(session: "reattach"))
        await session.connect(cols: 100, rows: 30)
        #expect(session.state == .connected)
        session.send(Array("echo MARK-$((40+1))\r".utf8))
        try await harness.waitForOutput("MARK-41")

        server.killHard()
        try await harness.waitUntil("reconnecting") {
            if case .reconnecting = session.state { return true }
            return false
        }
        guard case .reconnecting(let attempt, let reason) = session.state else { return }
        #expect(attempt >= 1)
        #expect(reason.contains("lost"))
        try await Task.sleep(for: .milliseconds(700))
        if case .reconnecting(let later, _) = session.state { #expect(later >= 2) }

        harness.clearOutput()
        try server.start()
        try await harness.waitUntil("reattached", timeout: 20) { session.state == .connected }
        // tmux redraws the same session: the earlier output is on screen again.
        try await harness.waitForOutput("MARK-41")
        session.send(Array("echo AGAIN-$((1+1))\r".utf8))
        try await harness.waitForOutput("AGAIN-2")
        session.disconnect()
        #expect(session.state == .closed)
    }

    @Test("with reattach disabled, a killed sshd fails the session with the reason")
    func failsWithoutReattach() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        var options = TerminalSessionOptions.fastForTests
        options.reconnect = .never
        let session = harness.session(harness.profile(session: "no-reattach"), options: options)
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected)
        server.killHard()
        try await harness.waitUntil("failure") { session.state.isFinal }
        #expect(session.failureKind == .connectionLost)
        #expect(session.state.failureMessage?.contains("Connection to 127.0.0.1 port \(server.port) lost") == true)
        // Whatever outlived sshd (tmux, if it had daemonized in time) is found and stopped.
        server.stop()
        #expect(server.markedProcesses().isEmpty)
    }

    @Test("a host that stops answering is detected by keepalives, and the session reattaches")
    func keepaliveDetectsSilentHost() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(session: "keepalive"))
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected)
        // Freeze the per-connection sshd processes: TCP stays up, nothing answers.
        let frozen = server.processes(named: "sshd")
        #expect(!frozen.isEmpty)
        for pid in frozen { kill(pid, SIGSTOP) }
        defer { for pid in frozen { kill(pid, SIGCONT) } }
        try await harness.waitUntil("keepalive verdict", timeout: 10) {
            if case .reconnecting(_, let reason) = session.state { return reason.contains("keepalive") }
            return false
        }
        try await harness.waitUntil("reattached", timeout: 20) { session.state == .connected }
        session.disconnect()
    }

    @Test("this device's address going away ends the connection at once, and it reattaches once it is back")
    func aVanishedAddressIsNoticedAtOnce() async throws {
        let namespace = try TestNetworkNamespace()
        defer { namespace.remove() }
        var options = SSHServer.Options()
        options.listenAddress = namespace.innerAddress
        options.networkNamespace = namespace.name
        let server = try SSHServer(options)
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        // An idle keepalive this slow cannot be what notices: only the kernel's news can.
        var sessionOptions = TerminalSessionOptions.fastForTests
        sessionOptions.keepaliveInterval = 60
        let session = harness.session(harness.profile(session: "netchange"), options: sessionOptions)
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected)
        let ip = try ProcessRunner.which("ip")
        let address = ["\(namespace.rootAddress)/24", "dev", namespace.rootInterface]
        _ = try ProcessRunner.run(ip, ["addr", "del"] + address, check: true)
        try await harness.waitUntil("network change noticed", timeout: 10) {
            if case .reconnecting(_, let reason) = session.state { return reason.contains("the network changed") }
            return false
        }
        _ = try ProcessRunner.run(ip, ["addr", "add"] + address, check: true)
        try await harness.waitUntil("reattached", timeout: 30) { session.state == .connected }
        session.disconnect()
    }
}
