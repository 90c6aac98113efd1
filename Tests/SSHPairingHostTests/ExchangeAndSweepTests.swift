import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import TestSupport
import Testing

@testable import SSHPairingHost

/// The enroll side against a state directory driven by this test as the foreground would, and the
/// sweep of what dead helpers left.
@Suite struct ExchangeAndSweepTests {
    /// Runs the enroll exchange with `input` on a pipe; returns the outcome once it ends.
    func exchange(
        _ state: PairingStateDirectory, fixture: StateFixture, input: String, closeInput: Bool = true,
        inputTimeout: TimeInterval = 5, pairingIDText: String? = nil, statePath: String? = nil
    ) throws -> Background<EnrollOutcome> {
        let pipe = try PipePair()
        let bytes = Array(input.utf8)
        _ = bytes.withUnsafeBytes { write(pipe.write, $0.baseAddress, $0.count) }
        if closeInput { close(pipe.write) }
        let exchange = EnrollExchange(
            pairingIDText: pairingIDText ?? state.pairingID.text, statePath: statePath ?? state.path,
            acceptedBases: [fixture.base], input: pipe.read, inputTimeout: inputTimeout)
        let (readEnd, writeEnd) = (pipe.read, pipe.write)
        return Background {
            defer {
                close(readEnd)
                if !closeInput { close(writeEnd) }
            }
            return exchange.run()
        }
    }

    func waitForRequest(_ state: PairingStateDirectory) throws -> EnrollRequest {
        for _ in 0..<500 {
            if case .request(let request) = state.requestSlot() { return request }
            usleep(10_000)
        }
        throw FixtureError("no request arrived")
    }

    @Test func theVerdictReachesTheEnrollSideAndIsAcknowledged() throws {
        for verdict in [EnrollOutcome.ok, .denied, .expired] {
            let fixture = try StateFixture()
            let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
            let key = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
            let running = try exchange(state, fixture: fixture, input: "\(key.openSSHString)\nphone\n")
            #expect(try waitForRequest(state).deviceKey == key)
            try state.writeVerdict(verdict)
            #expect(try running.wait() == verdict)
            #expect(state.isAcknowledged)
            state.remove()
        }
    }

    @Test func silenceForTheInputTimeoutIsInvalidAndClaimsNothing() throws {
        let fixture = try StateFixture()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
        let started = Date()
        let running = try exchange(state, fixture: fixture, input: "ssh-ed25519 ", closeInput: false, inputTimeout: 0.5)
        #expect(try running.wait() == .invalid)
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(state.requestSlot() == .empty)
        state.remove()
    }

    @Test func theOneTimeKeyCannotEnrollItself() throws {
        let fixture = try StateFixture()
        let oneTime = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record(oneTimeKey: oneTime))
        #expect(try exchange(state, fixture: fixture, input: "\(oneTime)\nsneaky\n").wait() == .invalid)
        #expect(state.requestSlot() == .empty)
        state.remove()
    }

    @Test func anExpiredCodeOrAGoneHelperAnswersExpired() throws {
        let fixture = try StateFixture()
        let input = "\(SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString)\nphone\n"
        let expired = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record(expiresIn: -1))
        #expect(try exchange(expired, fixture: fixture, input: input).wait() == .expired)
        let orphaned = try PairingStateDirectory.create(
            base: fixture.base, owner: fixture.record(owner: try StateFixture.deadProcess()))
        #expect(try exchange(orphaned, fixture: fixture, input: input).wait() == .expired)
        #expect(expired.requestSlot() == .empty)
        #expect(orphaned.requestSlot() == .empty)
        expired.remove()
        orphaned.remove()
        // Gone entirely.
        #expect(try exchange(expired, fixture: fixture, input: input).wait() == .expired)
    }

    @Test func aBadIDOrPathIsInvalid() throws {
        let fixture = try StateFixture()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
        let input = "\(SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString)\nphone\n"
        #expect(try exchange(state, fixture: fixture, input: input, pairingIDText: "--help").wait() == .invalid)
        #expect(
            try exchange(state, fixture: fixture, input: input, statePath: "/etc/herdr-pair/" + state.pairingID.text)
                .wait() == .invalid)
        #expect(state.requestSlot() == .empty)
        state.remove()
    }

    // MARK: Sweep

    @Test func theSweepRemovesDeadAndExpiredLinesOnly() throws {
        let fixture = try StateFixture()
        let directory = try TemporaryDirectory()
        let file = AuthorizedKeysFile(path: directory.file("authorized_keys").path)
        let key = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
        func line(_ record: OwnerRecord, expiry: Date, state: String? = nil) throws -> String {
            try OneTimeKeyLine(
                pairingID: record.pairingID, expiresAt: expiry, helperPath: "/usr/bin/herdr-pair",
                stateDirectory: state ?? fixture.base + "/" + record.pairingID.text, publicKey: key
            ).text
        }
        let live = fixture.record()
        let liveExpired = fixture.record()
        let dead = fixture.record(owner: try StateFixture.deadProcess())
        let noStateExpired = fixture.record()
        let noStateValid = fixture.record()
        for record in [live, liveExpired, dead] {
            _ = try PairingStateDirectory.create(base: fixture.base, owner: record)
        }
        let orphan = fixture.record(owner: try StateFixture.deadProcess())
        _ = try PairingStateDirectory.create(base: fixture.base, owner: orphan)

        let past = Date().addingTimeInterval(-60)
        let future = Date().addingTimeInterval(600)
        let keep = [
            "# a comment", "ssh-ed25519 AAAA someone", try line(live, expiry: future),
            try line(liveExpired, expiry: past),
            try line(noStateValid, expiry: future, state: "/nonexistent/herdr-pair/" + noStateValid.pairingID.text),
        ]
        let sweep = [try line(dead, expiry: future), try line(noStateExpired, expiry: past, state: "/nonexistent/x")]
        try file.append([keep[0], sweep[0], keep[1], keep[2], sweep[1], keep[3], keep[4]])

        let report = try StaleLineSweeper.sweep(file, stateBase: fixture.base)
        #expect(report.removedLines == sweep)
        #expect(try file.lines() == keep)
        #expect(
            Set(report.removedDirectories) == [
                fixture.base + "/" + dead.pairingID.text, fixture.base + "/" + orphan.pairingID.text,
            ])
        #expect(
            Set(try fixture.home.listing(".local/state/herdr-pair")) == [
                live.pairingID.text, liveExpired.pairingID.text,
            ])
        // A second sweep finds nothing more.
        #expect(try StaleLineSweeper.sweep(file, stateBase: fixture.base) == StaleLineSweeper.Report())
    }

    // MARK: The foreground's session

    @Test func aSessionAddsItsLineAndRemovesItOnEveryEnd() throws {
        for end in ["approve", "deny", "close", "interrupt-waiting", "interrupt-requested"] {
            let fixture = try StateFixture()
            let directory = try TemporaryDirectory()
            let url = directory.file("authorized_keys")
            try writeText("# before\n", to: url)
            let file = AuthorizedKeysFile(path: url.path)
            let session = try PairingSession.begin(
                .init(
                    authorizedKeys: file, stateBase: fixture.base, helperPath: "/usr/bin/herdr-pair", lifetime: 60,
                    approvalWindow: 120))
            #expect(try file.lines() == ["# before", session.line.text])
            #expect(session.poll() == .waiting)
            let device = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey)
            var expected = "# before\n"
            switch end {
            case "approve", "deny", "interrupt-requested":
                let request = try EnrollRequest(keyLine: device.openSSHString, nameLine: "Phone")
                #expect(try session.state.claim(request) == .claimed)
                #expect(session.poll() == .request(request))
                if end == "interrupt-requested" {
                    #expect(session.interrupt(acknowledgementTimeout: 0.1).isEmpty)
                    #expect(session.state.verdict() == nil)  // the directory is gone
                } else {
                    try session.decide(end == "approve" ? .ok : .denied)
                    #expect(session.state.verdict() == (end == "approve" ? .ok : .denied))
                    if end == "approve" {
                        expected += DeviceKeyLine.text(key: device, deviceName: "Phone", date: Date()) + "\n"
                    }
                }
            case "close":
                #expect(try session.closeIfUnclaimed())
            default:
                #expect(session.interrupt(acknowledgementTimeout: 0.1).isEmpty)
            }
            #expect(session.finish().isEmpty)
            #expect(session.finish().isEmpty)
            #expect(try readText(url) == expected, "\(end)")
            #expect(try fixture.home.listing(".local/state/herdr-pair").isEmpty, "\(end)")
        }
    }
}

/// Work on a thread of its own.
final class Background<T: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var result: Result<T, any Error>?

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            let value = Result { try body() }
            lock.withLock { result = value }
            done.signal()
        }.start()
    }

    func wait(timeout: Double = 60) throws -> T {
        guard done.wait(timeout: .now() + timeout) == .success else {
            throw FixtureError("did not finish within \(timeout) s")
        }
        return try lock.withLock { result! }.get()
    }
}
