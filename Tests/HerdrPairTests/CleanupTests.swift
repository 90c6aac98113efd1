import Foundation
import Glibc
import HerdrKit
import SSHPairingHost
import TestSupport
import Testing

/// The one-time line and all state go on every exit path; after `kill -9` the next run sweeps them.
@Suite(.serialized) struct CleanupTests {
    @Test(arguments: [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] as [(Int32, Int32)])
    func aSignalWhileWaitingRemovesEverything(signal: Int32, status: Int32) throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        #expect(try fixture.contents() != before)
        #expect(fixture.stateEntries() == [payload.pairingIDText])
        helper.signal(signal)
        #expect(try helper.exitStatus() == status)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test(arguments: [(SIGINT, 130), (SIGTERM, 143), (SIGHUP, 129)] as [(Int32, Int32)])
    func aSignalWhileAskingDeniesTheDevice(signal: Int32, status: Int32) throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        let enroll = fixture.enrollInBackground(payload, input: TestDevice().requestInput)
        _ = try helper.request()
        helper.signal(signal)
        let result = try enroll.wait()
        #expect(result.token == "DENIED")
        #expect(result.status == 3)
        #expect(try helper.exitStatus() == status)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func killNineLeavesALineTheNextRunSweeps() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let killed = try fixture.startHelper()
        let killedCode = try killed.ready()
        killed.signal(SIGKILL)
        #expect(try killed.exitStatus() == 137)
        let leftover = try fixture.contents()
        #expect(leftover.contains("herdr-pair:\(killedCode.pairingIDText)"))
        #expect(fixture.stateEntries() == [killedCode.pairingIDText])

        let next = try fixture.startHelper(["--lifetime", "3"])
        let nextCode = try next.ready()
        let during = try fixture.contents()
        #expect(!during.contains("herdr-pair:\(killedCode.pairingIDText)"))
        #expect(during.contains("herdr-pair:\(nextCode.pairingIDText)"))
        #expect(fixture.stateEntries() == [nextCode.pairingIDText])
        #expect(try next.exitStatus(timeout: 15) == 4)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func theSweepNeverTouchesALiveHelpersLine() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let first = try fixture.startHelper()
        let firstCode = try first.ready()
        let second = try fixture.startHelper()
        let secondCode = try second.ready()
        let during = try fixture.contents()
        #expect(during.contains("herdr-pair:\(firstCode.pairingIDText)"))
        #expect(during.contains("herdr-pair:\(secondCode.pairingIDText)"))
        #expect(fixture.stateEntries() == [firstCode.pairingIDText, secondCode.pairingIDText].sorted())

        // The first helper still pairs normally after the second one's sweep.
        let device = TestDevice()
        let enroll = fixture.enrollInBackground(firstCode, input: device.requestInput)
        _ = try first.request()
        first.answer("y")
        #expect(try enroll.wait().stdout == "OK\n")
        #expect(try first.exitStatus() == 0)
        second.signal(SIGTERM)
        #expect(try second.exitStatus() == 143)
        #expect(try fixture.contents() == before + device.expectedLine + "\n")
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func aStateDirectoryThatCannotBeMadeLeavesNothing() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        // A file where the state base must go: the helper fails before it touches authorized_keys.
        let stateHome = fixture.server.homeDirectory.appendingPathComponent(".local/state")
        try FileManager.default.createDirectory(at: stateHome, withIntermediateDirectories: true)
        try writeText("not a directory", to: stateHome.appendingPathComponent("herdr-pair"))
        _ = try ProcessRunner.run(
            "chown", ["-R", "\(fixture.user.uid):\(fixture.user.gid)", fixture.server.homeDirectory.path], check: true)
        let helper = try fixture.startHelper()
        #expect(try helper.exitStatus() == 1)
        #expect(helper.stderrText().contains("herdr-pair"))
        #expect(try fixture.contents() == before)
    }
}
