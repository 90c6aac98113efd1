import Foundation
import HerdrCrypto
import SSHClient
import TestSupport
import Testing

@testable import HerdrKit

/// `Pairing.enroll` against a real sshd on a "tailnet host" (a network namespace with 100.64/10
/// addresses), with a stand-in forced command on the one-time key.
@MainActor
@Suite("Pairing.enroll against sshd", .serialized)
struct PairingEnrollTests {
    // MARK: Approval

    @Test("approved: the profile, the pin, progress, and exactly the request the helper got")
    func approved() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let payload = try fixture.payload()
        let result = await fixture.enroll(payload, deviceName: "Jane\u{00A0}Doe’s\u{202E} phone\n")
        let profile = try #require(result.profile, "\(String(describing: result.error))")

        #expect(profile.name == "studio")
        #expect(profile.hostname == fixture.address)
        #expect(profile.port == fixture.server.port)
        #expect(profile.username == fixture.server.user.name)
        #expect(profile.platform == .unix)
        #expect(profile.herdrSession == "work")
        #expect(profile.remoteCommand == nil)

        // The pin is the host key sshd presented (Ed25519 is asked for first), as ssh-keyscan sees it.
        let pin = try #require(try fixture.pins.pinnedKey(hostname: fixture.address, port: fixture.server.port))
        #expect(pin == (try fixture.hostKey("ed25519")))
        #expect(pin.openSSHString == (try fixture.server.scannedKey()))

        #expect(fixture.progress == [.connecting(hostname: fixture.address), .waitingForApproval(computer: "studio")])

        let device = try fixture.deviceKey()
        #expect(fixture.recorded("stdin") == "\(device.publicKey.openSSHString)\nJane Doe’s phone\n")
        #expect(fixture.recorded("eof") == "reached\n")
        #expect(fixture.recorded("tty") == "no\n")
        #expect(fixture.recorded("original-command") == "herdr-pair")
        #expect(fixture.log().contains("Accepted publickey for \(fixture.server.user.name)"))
    }

    @Test("the request's key line is the device's authorized_keys key, byte for byte")
    func requestKeyLine() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        _ = try #require(await fixture.enroll(try fixture.payload(), deviceName: "p").profile)
        let stdin = try #require(fixture.recorded("stdin"))
        let lines = stdin.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 3 && lines[2].isEmpty)
        let key = try SSHPublicKey(openSSHLine: String(lines[0]))
        #expect(key.algorithm == "ssh-ed25519")
        #expect(key.blob.count == 51)
        #expect(key == (try fixture.deviceKey()).publicKey)
        // The computer's own check: ssh-keygen reads it as an ED25519 key.
        let file = fixture.client.file("request.pub")
        try writeText(String(lines[0]) + "\n", to: file)
        #expect(try sshKeygen(["-l", "-f", file.path]).stdout.contains("(ED25519)"))
    }

    @Test("OK followed by a warning on stderr still pairs")
    func okThenStderrWarning() async throws {
        let fixture = try PairingFixture(answer: .custom("echo OK\necho 'warning: locale not set' >&2\nexit 0"))
        defer { fixture.tearDown() }
        let result = await fixture.enroll(try fixture.payload())
        #expect(result.profile != nil, "\(String(describing: result.error))")
    }

    @Test("a banner before OK and CRLF line ends still pair")
    func bannerAndCRLF() async throws {
        let fixture = try PairingFixture(answer: .custom("printf 'herdr-pair 1.0\\r\\n\\r\\nOK\\r\\n'\nexit 0"))
        defer { fixture.tearDown() }
        #expect(await fixture.enroll(try fixture.payload()).profile != nil)
    }

    // MARK: Refusals from the computer

    static let refusals: [(name: String, script: String, expected: PairingError)] = [
        ("DENIED exit 3", "echo DENIED\nexit 3", .denied(output: "DENIED")),
        ("EXPIRED exit 4", "echo EXPIRED\nexit 4", .expired(output: "EXPIRED")),
        ("USED exit 5", "echo USED\nexit 5", .used(output: "USED")),
        ("DENIED with CRLF and exit 1 (Windows)", "printf 'DENIED\\r\\n'\nexit 1", .denied(output: "DENIED")),
        ("a bare exit 3", "exit 3", .denied(output: "")),
        (
            "a bare exit 4 with a note on stderr", "echo 'approval window closed' >&2\nexit 4",
            .expired(output: "approval window closed")
        ),
        ("INVALID exit 2", "echo INVALID\nexit 2", .failed(status: 2, output: "INVALID")),
        ("OK with exit 1", "echo OK\nexit 1", .failed(status: 1, output: "OK")),
        ("OK then more output", "echo OK\necho done\nexit 0", .failed(status: 0, output: "OK\ndone")),
    ]

    @Test("denied, expired, used and failures are typed and pin nothing", arguments: 0..<9)
    func refused(row: Int) async throws {
        let (name, script, expected) = Self.refusals[row]
        let fixture = try PairingFixture(answer: .custom(script))
        defer { fixture.tearDown() }
        let result = await fixture.enroll(try fixture.payload())
        #expect(result.error == expected, "\(name)")
        #expect(try fixture.pins.allPins().isEmpty, "\(name)")
        #expect(fixture.progress.last == .waitingForApproval(computer: "studio"))
    }

    // MARK: Cancellation and the time limit

    @Test("cancelling while the computer decides returns .cancelled at once, closes the connection, and pins nothing")
    func cancelWhileWaiting() async throws {
        let fixture = try PairingFixture(answer: .hang)
        defer { fixture.tearDown() }
        let payload = try fixture.payload()
        let task = Task { @MainActor in await fixture.enroll(payload) }
        try await fixture.waitUntil("the helper to wait for approval", timeout: 20) {
            fixture.recorded("waiting") != nil && fixture.progress.count == 2
        }
        let cancelledAt = ContinuousClock.now
        task.cancel()
        let result = await task.value
        let elapsed = ContinuousClock.now - cancelledAt
        #expect(result.error == .cancelled)
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        // The connection is gone within about a second: sshd sees the client go.
        try await fixture.waitUntil("sshd to see the disconnect", timeout: 3) {
            fixture.log().contains("Received disconnect from") || fixture.log().contains("Connection closed by")
                || fixture.log().contains("Disconnected from")
        }
        #expect(ContinuousClock.now - cancelledAt < .milliseconds(2500))
        #expect(try fixture.pins.allPins().isEmpty)
    }

    @Test("cancelled before it starts: nothing is dialled")
    func cancelledBeforeStart() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let payload = try fixture.payload()
        let task = Task { @MainActor in
            withUnsafeCurrentTask { $0?.cancel() }
            return await fixture.enroll(payload)
        }
        #expect(await task.value.error == .cancelled)
        #expect(fixture.connectionsAccepted == 0)
    }

    @Test("the time limit ends a wait that never gets an answer")
    func timeLimit() async throws {
        let fixture = try PairingFixture(answer: .hang)
        defer { fixture.tearDown() }
        var options = PairingFixture.fastOptions
        options.timeLimit = .seconds(3)
        let started = ContinuousClock.now
        let result = await fixture.enroll(try fixture.payload(), options: options)
        let elapsed = ContinuousClock.now - started
        guard case .failed(nil, let output)? = result.error else {
            Issue.record("expected a failure without status, got \(result)")
            return
        }
        #expect(output.contains("no answer within 3 s"))
        #expect(elapsed >= .seconds(3) && elapsed < .seconds(6), "took \(elapsed)")
        #expect(try fixture.pins.allPins().isEmpty)
    }

    // MARK: Host keys and pins

    @Test("a host key not in the code: hostKeyMismatch, no authentication attempt, no pin")
    func hostKeyMismatch() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let stranger = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).fingerprintSHA256
        let result = await fixture.enroll(try fixture.payload(fingerprints: [stranger]))
        let presented = try fixture.hostKey("ed25519").fingerprintSHA256
        #expect(result.error == .hostKeyMismatch(hostname: fixture.address, fingerprint: presented))
        #expect(fixture.versionExchanges == 1)
        #expect(fixture.authenticationRequests == 0)
        #expect(!fixture.log().contains("Accepted publickey"))
        #expect(try fixture.pins.allPins().isEmpty)
        #expect(fixture.recorded("stdin") == nil)
    }

    @Test("a pin that is not in the code: conflictingPin with zero TCP connections, pin untouched")
    func conflictingPin() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let other = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
        #expect(try fixture.pins.pin(other, hostname: fixture.address, port: fixture.server.port))
        let before = try readText(fixture.directory.knownHostsFile)
        let result = await fixture.enroll(try fixture.payload())
        #expect(result.error == .conflictingPin(hostname: fixture.address, port: fixture.server.port))
        // Give sshd a moment to log a connection, were there one.
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.connectionsAccepted == 0)
        #expect(fixture.progress.isEmpty)
        #expect(try readText(fixture.directory.knownHostsFile) == before)
    }

    @Test("a pin for a later name in the code is checked too, before any connection")
    func conflictingPinOnLaterName() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let other = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
        #expect(try fixture.pins.pin(other, hostname: "studio", port: fixture.server.port))
        let result = await fixture.enroll(try fixture.payload(hostnames: [fixture.address, "Studio."]))
        #expect(result.error == .conflictingPin(hostname: "studio", port: fixture.server.port))
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.connectionsAccepted == 0)
    }

    @Test("a pin that is in the code becomes the only key accepted, and stays")
    func pinInTheCode() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let ecdsa = try fixture.hostKey("ecdsa")
        #expect(try fixture.pins.pin(ecdsa, hostname: fixture.address, port: fixture.server.port))
        let result = await fixture.enroll(try fixture.payload())
        #expect(result.profile != nil, "\(String(describing: result.error))")
        // The ECDSA key was asked for and presented, though Ed25519 comes first otherwise.
        #expect(try fixture.pins.pinnedKey(hostname: fixture.address, port: fixture.server.port) == ecdsa)
        #expect(try fixture.pins.allPins().count == 1)
    }

    @Test("the code's fingerprints are what ssh-keygen prints, and the policy accepts by them alone")
    func fingerprintsMatchSSHKeygen() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        for type in ["ed25519", "ecdsa"] {
            let printed = try sshKeygen([
                "-l", "-E", "sha256", "-f", fixture.server.directory.appending("keys/ssh_host_\(type)_key.pub").path,
            ])
            let fingerprint = try fixture.hostKey(type).fingerprintSHA256
            #expect(printed.stdout.split(separator: " ")[1] == Substring(fingerprint))
            let blob = SSHHostKeyBlob(blob: try fixture.hostKey(type).blob, algorithm: "")
            #expect(blob.fingerprintSHA256 == fingerprint)
        }
        // Only the ECDSA fingerprint in the code: Ed25519 is offered first, so the presented key is
        // Ed25519 and it is refused, although the server also has the listed key.
        let ecdsaOnly = await fixture.enroll(
            try fixture.payload(fingerprints: [try fixture.hostKey("ecdsa").fingerprintSHA256]))
        #expect(
            ecdsaOnly.error
                == .hostKeyMismatch(
                    hostname: fixture.address, fingerprint: try fixture.hostKey("ed25519").fingerprintSHA256))
    }

    // MARK: Names and the tailnet gate

    @Test("names are tried in order: an unresolvable label, a tailnet address that refuses, then the computer")
    func namesInOrder() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let namespace = try #require(fixture.namespace)
        let names = ["zz-herdr-unresolvable", namespace.rootAddress, fixture.address]
        let result = await fixture.enroll(try fixture.payload(hostnames: names))
        let profile = try #require(result.profile, "\(String(describing: result.error))")
        #expect(profile.hostname == fixture.address)
        #expect(fixture.progress == names.map { .connecting(hostname: $0) } + [.waitingForApproval(computer: "studio")])
        #expect(try fixture.pins.allPins().map(\.host) == [fixture.address])
    }

    @Test("no name reachable: unreachable with the last reason")
    func nothingReachable() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let namespace = try #require(fixture.namespace)
        let result = await fixture.enroll(
            try fixture.payload(hostnames: ["zz-herdr-unresolvable", namespace.rootAddress]))
        guard case .unreachable(let reason)? = result.error else {
            Issue.record("expected unreachable, got \(result)")
            return
        }
        #expect(reason.contains(namespace.rootAddress), "\(reason)")
        #expect(reason.contains("refused"), "\(reason)")
    }

    @Test("the same payload aimed at 127.0.0.1: notOnTailnet, and sshd gets no SSH byte")
    func loopbackIsNotTheTailnet() async throws {
        let fixture = try PairingFixture(onLoopback: true)
        defer { fixture.tearDown() }
        let result = await fixture.enroll(try fixture.payload(hostnames: ["127.0.0.1"]))
        #expect(result.error == .notOnTailnet(hostname: "127.0.0.1", address: "127.0.0.1"))
        try await fixture.waitUntil("sshd to log the connection and its end") {
            fixture.connectionsAccepted == 1 && fixture.log().contains("kex_exchange_identification")
        }
        #expect(fixture.versionExchanges == 0)
        #expect(fixture.authenticationRequests == 0)
        #expect(!fixture.log().contains("KEX"))
        #expect(fixture.progress == [.connecting(hostname: "127.0.0.1")])
        #expect(try fixture.pins.allPins().isEmpty)
    }

    @Test("a valid code whose single label resolves to loopback (localhost) is refused the same way")
    func localhostLabel() async throws {
        let fixture = try PairingFixture(onLoopback: true)
        defer { fixture.tearDown() }
        // localhost is a valid single label in a code; what it resolves to decides.
        let built = try fixture.payload(hostnames: ["localhost"])
        let parsed = try PairingPayload(parsing: built.url)
        #expect(parsed.hostnames == ["localhost"])
        let result = await fixture.enroll(parsed)
        guard case .notOnTailnet("localhost", let address)? = result.error else {
            Issue.record("expected notOnTailnet, got \(result)")
            return
        }
        #expect(address == "127.0.0.1" || address == "::1")
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.versionExchanges == 0)
    }

    @Test("a refused name moves on to the next; notOnTailnet only if none pairs")
    func refusedThenTailnet() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let result = await fixture.enroll(try fixture.payload(hostnames: ["localhost", fixture.address]))
        #expect(result.profile?.hostname == fixture.address, "\(String(describing: result.error))")
        #expect(
            fixture.progress.prefix(2) == [.connecting(hostname: "localhost"), .connecting(hostname: fixture.address)])
    }

    // MARK: Before and around the connection

    @Test("an expired payload: linkExpired without connecting")
    func expiredPayload() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        for offset in [-1.0, 0] {
            let result = await fixture.enroll(try fixture.payload(expiresIn: offset))
            #expect(result.error == .linkExpired)
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(fixture.connectionsAccepted == 0)
        #expect(fixture.progress.isEmpty)
    }

    @Test("a one-time key the computer does not accept: pairingKeyRejected, no pin")
    func oneTimeKeyRejected() async throws {
        let fixture = try PairingFixture(authorizeOneTimeKey: false)
        defer { fixture.tearDown() }
        let result = await fixture.enroll(try fixture.payload())
        #expect(result.error == .pairingKeyRejected)
        #expect(fixture.authenticationRequests >= 1)
        #expect(try fixture.pins.allPins().isEmpty)
    }

    @Test("a second enroll of the same code after approval: the helper's USED is reported and the pin stays")
    func secondEnroll() async throws {
        let fixture = try PairingFixture(
            answer: .custom(
                "if [ -e \"$record/claimed\" ]; then echo USED; exit 5; fi\ntouch \"$record/claimed\"\necho OK\nexit 0")
        )
        defer { fixture.tearDown() }
        let payload = try fixture.payload()
        #expect(await fixture.enroll(payload).profile != nil)
        let pins = try fixture.pins.allPins()
        #expect(await fixture.enroll(payload).error == .used(output: "USED"))
        #expect(try fixture.pins.allPins().map(\.key) == pins.map(\.key))
    }

    @Test("a computer name with control characters becomes a printable profile name; an empty one, the host name")
    func profileName() async throws {
        let fixture = try PairingFixture()
        defer { fixture.tearDown() }
        let hostile = await fixture.enroll(try fixture.payload(computerName: "\u{1B}[2Jstu\u{202E}dio\u{0}"))
        #expect(hostile.profile?.name == "[2Jstudio")
        #expect(fixture.progress.last == .waitingForApproval(computer: "[2Jstudio"))
        let unnamed = await fixture.enroll(try fixture.payload(computerName: ""))
        #expect(unnamed.profile?.name == fixture.address)
        #expect(unnamed.profile?.herdrSession == "work")
    }
}
