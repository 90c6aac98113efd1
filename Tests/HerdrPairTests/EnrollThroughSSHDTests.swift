import Foundation
import Glibc
import HerdrCrypto
import HerdrKit
import SSHPairingHost
import TestSupport
import Testing

/// The whole exchange through a real sshd: the one-time line's forced command runs `herdr-pair
/// --enroll`, which talks to the foreground helper through its state directory.
@Suite(.serialized) struct EnrollThroughSSHDTests {
    @Test func approvalAuthorizesTheDeviceAndRemovesTheOneTimeLine() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper(["--session", "work"])
        let payload = try helper.ready()
        #expect(payload.session == "work")
        #expect(payload.username == fixture.user.name)
        #expect(payload.hostnames == ["testhost"])
        #expect(payload.port == fixture.server.port)
        let hostKey = try SSHPublicKey(openSSHLine: try readText(URL(fileURLWithPath: fixture.hostKeyFile)))
        #expect(payload.hostKeyFingerprints == [hostKey.fingerprintSHA256])

        // While the code is shown, exactly one line was added: the restricted one-time line.
        let during = try fixture.contents()
        #expect(during.hasPrefix(before))
        let added = String(during.dropFirst(before.count))
        let oneTime = SSHPublicKey(ed25519: try Ed25519PrivateKey(seed: payload.oneTimeKeySeed).publicKey)
        #expect(added.hasPrefix("restrict,expiry-time=\""))
        #expect(added.contains(",from=\"100.64.0.0/10,fd7a:115c:a1e0::/48,127.0.0.1,::1\",command=\""))
        #expect(
            added.contains(
                " --enroll=\(payload.pairingIDText) --state=\(fixture.stateBase)/\(payload.pairingIDText)\" "))
        #expect(added.hasSuffix(" \(oneTime.openSSHString) herdr-pair:\(payload.pairingIDText)\n"))

        let device = TestDevice(name: "James’s iPhone 17")
        let enroll = fixture.enrollInBackground(payload, input: device.requestInput)
        let request = try helper.request()
        #expect(request.name == device.name)
        #expect(request.fingerprint == device.publicKey.fingerprintSHA256)
        helper.answer("y")
        let result = try enroll.wait()
        #expect(result.stdout == "OK\n")
        #expect(result.status == 0)
        #expect(try helper.nextLine() == "RESULT OK")
        #expect(try helper.exitStatus() == 0)

        #expect(try fixture.contents() == before + device.expectedLine + "\n")
        #expect(device.expectedLine.hasSuffix(" herdr-ios:James-s-iPhone-17:\(LocalTime.dateString(Date()))"))
        #expect(fixture.stateEntries().isEmpty)

        // The device's own key now logs in, with no restriction.
        let keyFile = try fixture.writeKey(device.key, name: "device")
        let login = try fixture.ssh(identity: keyFile, command: "echo paired-as-$(id -un)")
        #expect(login.stdout == "paired-as-\(fixture.user.name)\n")
        // The one-time key no longer does.
        let again = try fixture.enroll(payload, input: TestDevice().requestInput)
        #expect(again.status == 255)
    }

    @Test func denialLeavesTheFileAsItWas() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        let enroll = fixture.enrollInBackground(payload, input: TestDevice().requestInput)
        _ = try helper.request()
        helper.answer("n")
        let result = try enroll.wait()
        #expect(result.token == "DENIED")
        #expect(result.status == 3)
        #expect(try helper.nextLine() == "RESULT DENIED")
        #expect(try helper.exitStatus() == 3)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func endOfInputAndOtherAnswersDeny() throws {
        for answer in [nil, "", "maybe", "no", "yess"] as [String?] {
            let fixture = try PairFixture()
            let before = try fixture.contents()
            let helper = try fixture.startHelper()
            let payload = try helper.ready()
            let enroll = fixture.enrollInBackground(payload, input: TestDevice().requestInput)
            _ = try helper.request()
            if let answer { helper.answer(answer) } else { helper.closeInput() }
            #expect(try enroll.wait().token == "DENIED", "answer \(String(describing: answer))")
            #expect(try helper.exitStatus() == 3)
            #expect(try fixture.contents() == before)
        }
    }

    @Test func approvalWindowPassingAnswersExpired() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper(["--test-approval-timeout", "2"])
        let payload = try helper.ready()
        let enroll = fixture.enrollInBackground(payload, input: TestDevice().requestInput)
        _ = try helper.request()
        let result = try enroll.wait()
        #expect(result.token == "EXPIRED")
        #expect(result.status == 4)
        #expect(try helper.nextLine() == "RESULT EXPIRED")
        #expect(try helper.exitStatus() == 4)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }

    @Test func codeExpiryEndsTheHelperAndTheKeyNoLongerWorks() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper(["--lifetime", "3"])
        let payload = try helper.ready()
        #expect(payload.expiresAt.timeIntervalSinceNow <= 3)
        #expect(try helper.nextLine(timeout: 15) == "RESULT EXPIRED")
        #expect(try helper.exitStatus() == 4)
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
        let late = try fixture.enroll(payload, input: TestDevice().requestInput)
        #expect(late.status == 255)  // sshd refuses the key: its line is gone
    }

    @Test func aSecondEnrollGetsUsed() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        let first = fixture.enrollInBackground(payload, input: TestDevice(name: "first").requestInput)
        #expect(try helper.request().name == "first")
        let second = try fixture.enroll(payload, input: TestDevice(name: "second").requestInput)
        #expect(second.stdout == "USED\n")
        #expect(second.status == 5)
        helper.answer("n")
        #expect(try first.wait().token == "DENIED")
        #expect(try helper.exitStatus() == 3)
        #expect(try fixture.contents() == before)
    }

    @Test func invalidRequestsDoNotUseUpTheCode() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        let during = try fixture.contents()
        let good = TestDevice(name: "Pixel")
        let key = good.publicKey.openSSHString
        let shortBlob = Data(good.publicKey.blob.dropLast()).base64EncodedString()
        let oneTime = SSHPublicKey(ed25519: try Ed25519PrivateKey(seed: payload.oneTimeKeySeed).publicKey).openSSHString
        let invalid = [
            "", "\n\n", "ssh-ed25519 \(shortBlob)\nPixel\n",
            "ssh-rsa \(good.publicKey.openSSHString.dropFirst(12))\nPixel\n",
            "ssh-ed25519 not-base64!\nPixel\n", "\(key)\n\n", "\(key)\n\(String(repeating: "x", count: 65))\n",
            "\(key)\nbell\u{7}name\n", "\(key)\nbidi\u{202E}name\n", "\(key)\n   \n", "\(key)\n",
            "\(String(repeating: "a", count: 1100))\nPixel\n", "\(oneTime)\nsneaky\n",
        ]
        for input in invalid {
            let result = try fixture.enroll(payload, input: input)
            #expect(result.stdout == "INVALID\n", "input \(input.debugDescription.prefix(80))")
            #expect(result.status == 2)
        }
        // Nothing was written, and the code still works.
        #expect(try fixture.contents() == during)
        #expect(fixture.stateEntries() == [payload.pairingIDText])
        let enroll = fixture.enrollInBackground(payload, input: good.requestInput)
        #expect(try helper.request().name == "Pixel")
        helper.answer("yes")
        #expect(try enroll.wait().stdout == "OK\n")
        #expect(try helper.exitStatus() == 0)
        #expect(try fixture.contents() == before + good.expectedLine + "\n")
    }

    @Test func aNameOf64CharactersAndCRLFLinesAreAccepted() throws {
        let fixture = try PairFixture()
        let helper = try fixture.startHelper()
        let payload = try helper.ready()
        let device = TestDevice(name: String(repeating: "é", count: 64))
        let enroll = fixture.enrollInBackground(
            payload, input: "\(device.publicKey.openSSHString)\r\n\(device.name)\r\n")
        #expect(try helper.request().name == device.name)
        helper.answer("Y")
        #expect(try enroll.wait().stdout == "OK\n")
        #expect(try helper.exitStatus() == 0)
        #expect(try fixture.contents().hasSuffix(" herdr-ios:-:\(LocalTime.dateString(Date()))\n"))
    }
}
