import CLISupport
import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import Synchronization
import TestSupport
import Testing

@testable import SSHPairingHost

/// A state base in a fresh temporary home, and owner records for it.
struct StateFixture {
    let home: TemporaryDirectory
    var base: String { home.path + "/.local/state/herdr-pair" }

    init() throws {
        home = try TemporaryDirectory(prefix: "herdr-state-")
    }

    func record(
        id: PairingID = .random(), owner: ProcessIdentity? = ProcessIdentity.current(), expiresIn: TimeInterval = 60,
        approvalWindow: Int = 120,
        oneTimeKey: String = SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString
    ) -> OwnerRecord {
        OwnerRecord(
            pairingID: id, owner: owner!, expiresAt: Date().addingTimeInterval(expiresIn),
            approvalWindow: approvalWindow,
            oneTimeKey: oneTimeKey)
    }

    /// An identity of a process that has ended.
    static func deadProcess() throws -> ProcessIdentity {
        let child = try ChildProcess("/bin/true", [])
        let identity = ProcessIdentity(
            pid: child.pid, startTime: ProcessIdentity.startTime(of: child.pid) ?? 1,
            bootID: ProcessIdentity.currentBootID()!)
        child.wait()
        return identity
    }
}

@Suite struct StateDirectoryTests {
    @Test func createMakesPrivateDirectoriesWithTheOwnerRecord() throws {
        let fixture = try StateFixture()
        let record = fixture.record()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: record)
        #expect(state.path == fixture.base + "/" + record.pairingID.text)
        #expect(try fileMode(fixture.base) == 0o700)
        #expect(try fileMode(state.path) == 0o700)
        #expect(try fileMode(fixture.home.path + "/.local/state") == 0o700)
        #expect(try readText(URL(fileURLWithPath: state.path + "/owner")) == record.text)
        #expect(try OwnerRecord(text: record.text) == record)
        let reopened = try PairingStateDirectory.open(
            path: state.path, pairingID: record.pairingID, acceptedBases: [fixture.base])
        #expect(reopened.owner == record)
        #expect(state.remove())
        #expect(try fixture.home.listing(".local/state/herdr-pair").isEmpty)
    }

    @Test func theClaimIsExclusiveAndTheExchangeRoundTrips() throws {
        let fixture = try StateFixture()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
        let first = try EnrollRequest(
            keyLine: SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString, nameLine: "one")
        let second = try EnrollRequest(
            keyLine: SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString, nameLine: "two")
        #expect(state.requestSlot() == .empty)
        #expect(try state.claim(first) == .claimed)
        #expect(try state.claim(second) == .used)
        #expect(try !state.closeForRequests())
        #expect(state.requestSlot() == .request(first))
        #expect(state.verdict() == nil)
        try state.writeVerdict(.denied)
        #expect(state.verdict() == .denied)
        #expect(!state.isAcknowledged)
        state.acknowledge()
        #expect(state.isAcknowledged)
        // No temporary file is left.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: state.path).sorted() == [
                "ack", "owner", "request", "verdict",
            ])
        #expect(state.remove())
    }

    @Test func aClosedPairingAnswersLateClaimsWithClosed() throws {
        let fixture = try StateFixture()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
        #expect(try state.closeForRequests())
        #expect(state.requestSlot() == .closed)
        let request = try EnrollRequest(
            keyLine: SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString, nameLine: "late")
        #expect(try state.claim(request) == .closed)
        state.remove()
    }

    @Test func concurrentClaimsHaveExactlyOneWinner() throws {
        let fixture = try StateFixture()
        let record = fixture.record()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: record)
        let results = runConcurrently(16) { index -> PairingStateDirectory.Claim? in
            guard
                let mine = try? PairingStateDirectory.open(
                    path: state.path, pairingID: record.pairingID, acceptedBases: nil),
                let request = try? EnrollRequest(
                    keyLine: SSHPublicKey(ed25519: Ed25519PrivateKey().publicKey).openSSHString,
                    nameLine: "claimant \(index)")
            else { return nil }
            return try? mine.claim(request)
        }
        #expect(results.filter { $0 == .claimed }.count == 1)
        #expect(results.filter { $0 == .used }.count == 15)
        state.remove()
    }

    @Test func openRefusesEverythingButTheHelpersOwnDirectory() throws {
        let fixture = try StateFixture()
        let record = fixture.record()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: record)
        let id = record.pairingID
        func refused(_ path: String, _ pairingID: PairingID = id, bases: [String]? = nil) -> Bool {
            do {
                _ = try PairingStateDirectory.open(
                    path: path, pairingID: pairingID, acceptedBases: bases ?? [fixture.base])
                return false
            } catch {
                if case .rejected = error { return true }
                return false
            }
        }
        #expect(refused("relative/herdr-pair/\(id.text)"))
        #expect(refused(state.path + "/"))
        #expect(refused(fixture.base + "/./" + id.text))
        #expect(refused(fixture.base + "/../herdr-pair/" + id.text))
        #expect(refused(fixture.base + "//" + id.text))
        #expect(refused(state.path, .random()))
        #expect(refused(state.path, bases: ["/somewhere/else/herdr-pair"]))

        // A symlink in the place of the directory.
        let other = PairingID.random()
        symlink(state.path, fixture.base + "/" + other.text)
        #expect(refused(fixture.base + "/" + other.text, other))
        unlink(fixture.base + "/" + other.text)

        // A directory of the right name that herdr-pair did not make (no owner record) is a pairing that is over.
        mkdir(fixture.base + "/" + other.text, 0o700)
        #expect(throws: PairingStateDirectory.OpenFailure.missing) {
            try PairingStateDirectory.open(
                path: fixture.base + "/" + other.text, pairingID: other, acceptedBases: [fixture.base])
        }
        // … and one whose owner record names another pairing is refused.
        try writeText(fixture.record().text, to: URL(fileURLWithPath: fixture.base + "/" + other.text + "/owner"))
        #expect(refused(fixture.base + "/" + other.text, other))
        try FileManager.default.removeItem(atPath: fixture.base + "/" + other.text)

        // Wrong modes and owners.
        chmod(state.path, 0o755)
        #expect(refused(state.path))
        chmod(state.path, 0o700)
        chmod(fixture.base, 0o755)
        #expect(refused(state.path))
        chmod(fixture.base, 0o700)
        let user = try TestUser.ensure()
        chown(state.path, user.uid, user.gid)
        #expect(refused(state.path))
        chown(state.path, 0, 0)
        chown(state.path + "/owner", user.uid, user.gid)
        #expect(refused(state.path))
        chown(state.path + "/owner", 0, 0)

        let absent = PairingID.random()
        #expect(throws: PairingStateDirectory.OpenFailure.missing) {
            try PairingStateDirectory.open(
                path: fixture.base + "/" + absent.text, pairingID: absent, acceptedBases: nil)
        }
        #expect(
            try PairingStateDirectory.open(path: state.path, pairingID: id, acceptedBases: [fixture.base]).owner
                == record)
        state.remove()
    }

    @Test func removeKeepsADirectoryHoldingSomethingElse() throws {
        let fixture = try StateFixture()
        let state = try PairingStateDirectory.create(base: fixture.base, owner: fixture.record())
        try writeText("not ours", to: URL(fileURLWithPath: state.path + "/notes.txt"))
        #expect(!state.remove())
        #expect(try FileManager.default.contentsOfDirectory(atPath: state.path) == ["notes.txt"])
    }

    @Test func acceptedBasesCoverXDGHomeAndPasswd() {
        let bases = StateLocation.acceptedBases(environment: ["XDG_STATE_HOME": "/x/state/", "HOME": "/home/j"])
        #expect(bases.prefix(2) == ["/x/state/herdr-pair", "/home/j/.local/state/herdr-pair"])
        #expect(
            StateLocation.base(environment: ["XDG_STATE_HOME": "relative", "HOME": "/home/j"])
                == "/home/j/.local/state/herdr-pair")
        #expect(StateLocation.base(environment: ["HOME": "/"]) == "/.local/state/herdr-pair")
    }

    @Test func processIdentityTellsLiveFromGone() throws {
        let me = try #require(ProcessIdentity.current())
        #expect(me.isAlive)
        var reused = me
        reused.startTime += 1
        #expect(!reused.isAlive)
        var otherBoot = me
        otherBoot.bootID = "00000000-0000-0000-0000-000000000000"
        #expect(!otherBoot.isAlive)
        #expect(!(try StateFixture.deadProcess()).isAlive)
    }
}
