import Foundation
import HerdrCrypto
import SSHClient
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
