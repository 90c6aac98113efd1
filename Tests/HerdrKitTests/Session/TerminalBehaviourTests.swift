import Foundation
import HerdrKit
import TestSupport
import Testing

/// The terminal a session gives: PTY, resize, echo, exit statuses, and the real attach command.
@Suite("Terminal session behaviour") @MainActor
struct TerminalBehaviourTests {
    @Test("TERM and stty size are right, and resize sends a window-change")
    func termAndResize() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(
            harness.profile(
                command: "echo TERM=$TERM; echo SIZE=$(stty size); read line; echo SIZE=$(stty size); sleep 2.2"))
        await session.connect(cols: 80, rows: 24)
        try await harness.waitForOutput("SIZE=24 80")
        #expect(harness.text.contains("TERM=xterm-256color"))
        session.resize(cols: 120, rows: 40)
        session.send(Array("\r".utf8))
        try await harness.waitForOutput("SIZE=40 120")
        try await harness.waitUntil("clean close") { session.state == .closed }
    }

    @Test("stdin reaches the command and the PTY echoes it")
    func stdinEchoes() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(command: "cat"))
        await session.connect(cols: 80, rows: 24)
        session.send(Array("ping-\u{00e9}\r".utf8))
        // Once echoed by the line discipline, once written back by cat.
        try await harness.waitUntil("echo and cat output") {
            harness.text.components(separatedBy: "ping-\u{00e9}").count == 3
        }
        session.disconnect()
        #expect(session.state == .closed)
    }

    @Test("the real attach command reaches herdr (tmux) through a login shell")
    func attachCommandReachesHerdr() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let profile = harness.profile(session: "attach-test")
        #expect(
            TerminalSession(profile: profile, store: harness.store) { _ in true }.command
                == #"exec "$SHELL" -lc 'herdr session attach attach-test'"#)
        let session = harness.session(profile)
        await session.connect(cols: 100, rows: 30)
        #expect(session.state == .connected)
        session.send(Array("echo $((6*7))-answer\r".utf8))
        try await harness.waitForOutput("42-answer")
        let sessions = try ProcessRunner.run(
            "tmux", ["-S", server.herdr.tmuxSocket(session: "attach-test"), "list-sessions", "-F", "#{session_name}"])
        #expect(sessions.stdout.split(separator: "\n").contains("attach-test"))
        session.disconnect()
    }

    @Test("a non-zero exit fails with its status and the last readable output")
    func nonZeroExitFails() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(
            harness.profile(command: "printf '\\033[1mfirst\\033[0m\\nsecond\\nthird\\nfourth\\n'; exit 3"))
        await session.connect(cols: 80, rows: 24)
        try await harness.waitUntil("failure") { session.state.isFinal }
        #expect(session.state == .failed("The remote command exited with status 3\nsecond\nthird\nfourth"))
        #expect(session.failureKind == .remoteCommand)
    }

    @Test("a missing command fails with 127 named as not found")
    func missingCommand() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(command: "no-such-herdr-command"))
        await session.connect(cols: 80, rows: 24)
        try await harness.waitUntil("failure") { session.state.isFinal }
        let message = try #require(session.state.failureMessage)
        #expect(message.hasPrefix("Remote command not found (exit status 127)\n"))
        #expect(message.contains("no-such-herdr-command: command not found"))
    }

    @Test("exit 0 right after connecting fails; a clean exit after 2 s closes")
    func quickExitRule() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        // Generous for the quick side so a loaded machine cannot make `echo` look slow; the slow
        // side keeps the shipped 2 s, which `sleep` guarantees to exceed.
        var generous = TerminalSessionOptions.fastForTests
        generous.quickExitWindow = .seconds(15)
        let quick = harness.session(harness.profile(command: "echo bye"), options: generous)
        await quick.connect(cols: 80, rows: 24)
        try await harness.waitUntil("quick exit") { quick.state.isFinal }
        #expect(quick.state == .failed("The remote command exited with status 0 right after it started\nbye"))

        #expect(TerminalSessionOptions().quickExitWindow == .seconds(2))
        // The 2.2 s start only after the test's line, so they are all after `.connected`.
        let slow = harness.session(harness.profile(command: "read _; sleep 2.2"))
        await slow.connect(cols: 80, rows: 24)
        slow.send(Array("\r".utf8))
        try await harness.waitUntil("clean exit") { slow.state.isFinal }
        #expect(slow.state == .closed)
        #expect(slow.failureKind == nil)
    }

    @Test("a command killed by a signal fails naming it")
    func killedBySignal() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let harness = try SessionHarness(server: server)
        let session = harness.session(harness.profile(command: "exec sleep 30"))
        await session.connect(cols: 80, rows: 24)
        try await harness.waitUntil("sleep running") { !server.processes(named: "sleep").isEmpty }
        for pid in server.processes(named: "sleep") { kill(pid, SIGTERM) }
        try await harness.waitUntil("failure") { session.state.isFinal }
        #expect(session.state.failureMessage?.hasPrefix("The remote command was killed by signal TERM") == true)
    }
}
