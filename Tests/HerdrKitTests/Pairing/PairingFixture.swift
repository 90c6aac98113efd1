import Foundation
import HerdrCrypto
import TestSupport
import Testing

@testable import HerdrKit

/// A computer to pair with: sshd in a test network namespace, reached at its 100.64/10 address
/// (or on loopback), whose authorized_keys holds a one-time key line like the real helper's
/// (restrict, expiry-time, from=, a forced command) — but the forced command is a stand-in
/// script that records what it received and answers with a scripted token and status.
///
/// The real `herdr-pair --enroll` is tested on its own; here the client side is under test.
@MainActor
final class PairingFixture {
    /// What the stand-in does after it has recorded its input (a shell snippet).
    enum Answer {
        case approve
        case custom(String)
        /// Prints nothing and waits; for cancel and time-limit tests.
        case hang

        var script: String {
            switch self {
            case .approve: "printf 'OK\\n'\nexit 0"
            case .custom(let snippet): snippet
            case .hang: "echo waiting > \"$record/waiting\"\nsleep 120\necho OK"
            }
        }
    }

    let namespace: TestNetworkNamespace?
    let server: SSHServer
    let client: TemporaryDirectory
    let directory: ConfigDirectory
    let seed: [UInt8]
    let pairingID: [UInt8]
    private(set) var progress: [Pairing.Progress] = []

    /// sshd in a new namespace at its 100.64/10 address; `onLoopback` puts it on 127.0.0.1 instead.
    init(answer: Answer = .approve, onLoopback: Bool = false, authorizeOneTimeKey: Bool = true) throws {
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
        client = try TemporaryDirectory(prefix: "herdr-pair-client-")
        directory = ConfigDirectory(url: client.url)
        seed = SecureRandom.bytes(32)
        // Random, but never one whose text starts with `-` (a code may not).
        var id = SecureRandom.bytes(16)
        while id[0] >> 2 == 62 { id = SecureRandom.bytes(16) }
        pairingID = id
        try installStandIn(answer)
        if authorizeOneTimeKey { try server.authorize(oneTimeKeyLine) }
    }

    func tearDown() {
        // The stand-in outlives sshd once its client is gone (sshd's session process exits
        // and the script is reparented), so `SSHServer.stop` cannot find it.
        ProcessSweep.killProcesses(commandLineContaining: standInPath.path)
        server.destroy()
        namespace?.remove()
        client.remove()
    }

    /// The address the client dials: the namespace's inner address, or 127.0.0.1.
    var address: String { namespace?.innerAddress ?? server.host }

    // MARK: The one-time key line and its stand-in

    var standInPath: URL { server.directory.appending("herdr-pair-stand-in") }
    var recordDirectory: URL { server.homeDirectory.appendingPathComponent("pair-record") }

    private func installStandIn(_ answer: Answer) throws {
        let script = """
            #!/bin/sh
            # Stand-in for `herdr-pair --enroll`: records what arrived, then answers as scripted.
            record='\(recordDirectory.path)'
            mkdir -p "$record"
            printf '%s' "${SSH_ORIGINAL_COMMAND-}" > "$record/original-command"
            if [ -t 0 ] || [ -t 1 ] || [ -t 2 ] || [ -n "${SSH_TTY-}" ]; then echo yes > "$record/tty"; else echo no > "$record/tty"; fi
            cat > "$record/stdin"
            echo reached > "$record/eof"
            \(answer.script)

            """
        try Data(script.utf8).write(to: standInPath)
        guard chmod(standInPath.path, 0o755) == 0 else { throw FixtureError("chmod stand-in failed") }
    }

    var oneTimePublicKey: SSHPublicKey {
        SSHPublicKey(ed25519: try! Ed25519PrivateKey(seed: seed).publicKey)
    }

    /// The line the real helper appends (interop-facts §4), with the stand-in as the forced command.
    var oneTimeKeyLine: String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = .current
        formatter.dateFormat = "yyyyMMddHHmmss"
        let expiry = formatter.string(from: Date().addingTimeInterval(600))
        let id = PairingCodeBuilder.base64URL(pairingID)
        return "restrict,expiry-time=\"\(expiry)\",from=\"100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1\","
            + "command=\"\(standInPath.path) --enroll=\(id) --state=/nonexistent\" \(oneTimePublicKey.openSSHString) herdr-pair:\(id)"
    }

    // MARK: The code

    /// The server's host key of `type` as sshd has it on disk.
    func hostKey(_ type: String) throws -> SSHPublicKey {
        try SSHPublicKey(openSSHLine: try readText(server.directory.appending("keys/ssh_host_\(type)_key.pub")))
    }

    func payload(
        hostnames: [String]? = nil, fingerprints: [String]? = nil, expiresIn: TimeInterval = 600,
        computerName: String = "studio", session: String? = "work"
    ) throws -> PairingPayload {
        PairingPayload(
            pairingID: pairingID, computerName: computerName, username: server.user.name, platform: .unix,
            hostnames: hostnames ?? [address], port: server.port,
            hostKeyFingerprints: try fingerprints ?? [
                hostKey("ed25519").fingerprintSHA256, hostKey("ecdsa").fingerprintSHA256,
            ],
            oneTimeKeySeed: seed,
            expiresAt: Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + expiresIn).rounded(.down)),
            session: session)
    }

    // MARK: The client

    var pins: HostKeyPins { HostKeyPins(directory: directory) }

    func deviceKey() throws -> DeviceKeyPair { try DeviceKey.load(in: directory) }

    static var fastOptions: Pairing.Options {
        var options = Pairing.Options()
        options.connectTimeout = .seconds(5)
        options.handshakeTimeout = .seconds(15)
        options.timeLimit = .seconds(60)
        return options
    }

    func enroll(
        _ payload: PairingPayload, deviceName: String = "Test Phone",
        options: Pairing.Options = PairingFixture.fastOptions
    ) async -> Result<HostProfile, PairingError> {
        do throws(PairingError) {
            return .success(
                try await Pairing.enroll(
                    payload: payload, deviceName: deviceName, directory: directory, options: options
                ) {
                    [weak self] in self?.progress.append($0)
                })
        } catch {
            return .failure(error)
        }
    }

    // MARK: Evidence

    func recorded(_ name: String) -> String? {
        try? String(contentsOf: recordDirectory.appendingPathComponent(name), encoding: .utf8)
    }

    func log() -> String { server.log() }
    /// TCP connections sshd accepted.
    var connectionsAccepted: Int { log().components(separatedBy: "Connection from ").count - 1 }
    /// Clients that sent an SSH version string (the first SSH byte a client sends).
    var versionExchanges: Int { log().components(separatedBy: "Remote protocol version").count - 1 }
    var authenticationRequests: Int { log().components(separatedBy: "userauth-request").count - 1 }

    /// Waits (bounded) until `condition` holds.
    func waitUntil(_ what: String, timeout: Double = 10, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(timeout * 1000))
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw FixtureError("timed out after \(timeout) s waiting for \(what)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

extension Result where Success == HostProfile, Failure == PairingError {
    var profile: HostProfile? {
        if case .success(let profile) = self { return profile }
        return nil
    }

    var error: PairingError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
