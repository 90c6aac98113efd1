import Foundation
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

/// A computer for `herdr-remote pair` tests: sshd in a test network namespace at its 100.64/10
/// address (or on loopback), a one-time key line like the real helper's with a stand-in forced
/// command that records what it got and answers as scripted, and the code as a URL.
///
/// On approval the stand-in appends the device key to authorized_keys, as `herdr-pair` does, so
/// `pair` can go on to attach.
final class PairFixture {
    let namespace: TestNetworkNamespace?
    let server: SSHServer
    let seed = SecureRandom.bytes(32)
    /// Random, but never one whose text starts with `-` (a code may not: it would read as an option).
    let pairingID = PairFixture.randomPairingID()

    static func randomPairingID() -> [UInt8] {
        while true {
            let id = SecureRandom.bytes(16)
            if id[0] >> 2 != 62 { return id }
        }
    }

    /// Approve: add the device key (first line of the request) and answer OK.
    static let approve = """
        printf '%s herdr-ios:test\\n' "$(head -n 1 "$record/stdin")" >> "$authorized_keys"
        echo OK
        exit 0
        """
    /// Wait without answering.
    static let hang = "echo waiting > \"$record/waiting\"\nsleep 120\necho OK"

    init(answer: String = PairFixture.approve, onLoopback: Bool = false) throws {
        let namespace = onLoopback ? nil : try TestNetworkNamespace()
        self.namespace = namespace
        var options = SSHServer.Options()
        if let namespace {
            options.networkNamespace = namespace.name
            options.listenAddress = namespace.innerAddress
        }
        do {
            server = try SSHServer(options)
        } catch {
            namespace?.remove()
            throw error
        }
        // The stand-in runs as the test user and adds the device key itself, like herdr-pair.
        guard chmod(server.authorizedKeysFile.path, 0o666) == 0 else {
            throw FixtureError("chmod authorized_keys failed")
        }
        try setAnswer(answer)
        try server.authorize(oneTimeKeyLine)
    }

    func tearDown() {
        // The stand-in outlives sshd once its client is gone (sshd's session process exits
        // and the script is reparented), so `SSHServer.stop` cannot find it.
        ProcessSweep.killProcesses(commandLineContaining: standIn.path)
        server.destroy()
        namespace?.remove()
    }

    var address: String { namespace?.innerAddress ?? server.host }
    var standIn: URL { server.directory.appending("herdr-pair-stand-in") }
    var recordDirectory: URL { server.homeDirectory.appendingPathComponent("pair-record") }

    /// Rewrites what the stand-in answers; it is read again by each enroll.
    func setAnswer(_ answer: String) throws {
        try? FileManager.default.removeItem(at: recordDirectory)
        let script = """
            #!/bin/sh
            record='\(recordDirectory.path)'
            authorized_keys='\(server.authorizedKeysFile.path)'
            mkdir -p "$record"
            if [ -t 0 ] || [ -t 1 ] || [ -n "${SSH_TTY-}" ]; then echo yes > "$record/tty"; else echo no > "$record/tty"; fi
            cat > "$record/stdin"
            \(answer)

            """
        try Data(script.utf8).write(to: standIn)
        guard chmod(standIn.path, 0o755) == 0 else { throw FixtureError("chmod stand-in failed") }
    }

    var oneTimeKeyLine: String {
        let key = SSHPublicKey(ed25519: try! Ed25519PrivateKey(seed: seed).publicKey)
        return "restrict,from=\"100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1\",command=\"\(standIn.path)\" "
            + "\(key.openSSHString) herdr-pair:test"
    }

    func hostKey(_ type: String) throws -> SSHPublicKey {
        try SSHPublicKey(openSSHLine: try readText(server.directory.appending("keys/ssh_host_\(type)_key.pub")))
    }

    /// The code as the computer would show it.
    func url(
        hostnames: [String]? = nil, fingerprints: [String]? = nil, expiresIn: TimeInterval = 600,
        name: String = "studio",
        session: String? = "work"
    ) throws -> String {
        PairingPayload(
            pairingID: pairingID, computerName: name, username: server.user.name, platform: .unix,
            hostnames: hostnames ?? [address], port: server.port,
            hostKeyFingerprints: try fingerprints ?? [
                hostKey("ed25519").fingerprintSHA256, hostKey("ecdsa").fingerprintSHA256,
            ],
            oneTimeKeySeed: seed,
            expiresAt: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + expiresIn).rounded(.down)),
            session: session
        ).url
    }

    func recorded(_ name: String) -> String? {
        try? String(contentsOf: recordDirectory.appendingPathComponent(name), encoding: .utf8)
    }

    var connectionsAccepted: Int { server.log().components(separatedBy: "Connection from ").count - 1 }
    var versionExchanges: Int { server.log().components(separatedBy: "Remote protocol version").count - 1 }
}

extension CLIHarness {
    var knownHosts: URL { directory.appendingPathComponent("known_hosts") }

    /// The saved hosts, straight from hosts.json.
    func savedHosts() throws -> [HostProfile] {
        let file = directory.appendingPathComponent("hosts.json")
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        return try JSONDecoder().decode([HostProfile].self, from: Data(contentsOf: file))
    }

    func pins() throws -> [(host: String, port: Int, key: SSHPublicKey)] {
        try HostKeyPins(file: knownHosts).allPins()
    }
}
