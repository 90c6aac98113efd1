import Foundation
import HerdrCrypto
import SSHClient
import Synchronization
import TestSupport
import Testing

@Suite("SSHConnection against a real sshd")
struct SSHConnectionTests {
    @Test("probe reports exactly the key ssh-keyscan shows, and authenticates nothing")
    func probeReportsHostKey() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let connection = try SSHConnection(
            configuration: server.configuration(key: nil, policy: .probe, command: "true"))
        let run = await ConnectionRun.run(connection)
        let expected = try server.hostKeyBlob()
        guard case .probed(let key) = run.termination else {
            Issue.record("expected .probed, got \(String(describing: run.termination))")
            return
        }
        #expect(key.blob == expected)
        #expect(key.algorithm == "ssh-ed25519")
        #expect(!server.log().contains("userauth-request"))
    }

    @Test("an unknown host key is rejected before any authentication request")
    func rejectsUnexpectedKey() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let key = try server.authorizedKey()
        let other = SSHKeyBlob.ed25519(Ed25519PrivateKey().publicKey.raw)
        let connection = try SSHConnection(
            configuration: server.configuration(key: key, policy: .accept([other]), command: "true"))
        let run = await ConnectionRun.run(connection)
        guard case .hostKeyRejected(let presented) = run.termination else {
            Issue.record("expected .hostKeyRejected, got \(String(describing: run.termination))")
            return
        }
        #expect(presented.blob == (try server.hostKeyBlob()))
        #expect(!server.log().contains("userauth-request"))
    }

    @Test("public key login runs the command and reports its exit status")
    func runsCommand() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let key = try server.authorizedKey()
        let accepted: Set<[UInt8]> = [try server.hostKeyBlob()]
        let connection = try SSHConnection(
            configuration: server.configuration(
                key: key, policy: .accept(accepted), command: "echo out; echo err >&2; exit 3"))
        let run = await ConnectionRun.run(connection)
        #expect(run.authenticatedMethod == "publickey")
        #expect(run.stdoutText == "out\n")
        #expect(run.stderrText == "err\n")
        #expect(run.termination == .exited(status: 3, signal: nil))
    }

    @Test("start(onEvent:) hands every event to the handler in order, and the stream only ends")
    func eventsToAHandler() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let key = try server.authorizedKey()
        let accepted: Set<[UInt8]> = [try server.hostKeyBlob()]
        let connection = try SSHConnection(
            configuration: server.configuration(key: key, policy: .accept(accepted), command: "echo one; exit 4"))
        let received = Mutex<[SSHEvent]>([])
        let finished = DispatchSemaphore(value: 0)
        connection.start { event in
            received.withLock { $0.append(event) }
            if case .output = event { connection.acknowledgeOutput() }
            if case .finished = event { finished.signal() }
        }
        #expect(finished.wait(timeout: .now() + 30) == .success)
        var streamed = 0
        for await _ in connection.events { streamed += 1 }
        let events = received.withLock { $0 }
        #expect(streamed == 0)
        let stdout = events.reduce(into: [UInt8]()) { if case .output(let out, _) = $1 { $0 += out } }
        #expect(String(decoding: stdout, as: UTF8.self) == "one\n")
        let started = events.firstIndex { if case .sessionStarted = $0 { true } else { false } }
        let firstOutput = events.firstIndex { if case .output = $0 { true } else { false } }
        #expect(started != nil && firstOutput != nil && started! < firstOutput!)
        guard case .finished(.exited(status: 4, signal: nil), _) = events.last else {
            Issue.record("the last event is not the exit: \(String(describing: events.last))")
            return
        }
    }

    @Test("the PTY is xterm-256color with IUTF8 and the requested size")
    func ptyModes() async throws {
        let server = try SSHServer()
        defer { server.destroy() }
        let key = try server.authorizedKey()
        let accepted: Set<[UInt8]> = [try server.hostKeyBlob()]
        let connection = try SSHConnection(
            configuration: server.configuration(
                key: key, policy: .accept(accepted),
                command: "echo TERM=$TERM; stty size; stty -a | tr ' ' '\\n' | grep -x -- '-\\?iutf8'",
                pty: PTYRequest(cols: 80, rows: 24)))
        let run = await ConnectionRun.run(connection)
        let lines = run.stdoutText.split(whereSeparator: \.isNewline).map(String.init)
        #expect(lines == ["TERM=xterm-256color", "24 80", "iutf8"])
        #expect(run.termination == .exited(status: 0, signal: nil))
    }
}
