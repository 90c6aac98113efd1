import Foundation
import Glibc
import SSHPairingHost
import TestSupport
import Testing

/// Many helpers and enrolls at once on one authorized_keys, while a shell appends to it without any
/// lock: every line that should survive survives, and nothing of the pairings is left.
@Suite(.serialized) struct ConcurrencyTests {
    static let helperCount = 32

    @Test func thirtyTwoHelpersAndPlainAppendsLoseNoLine() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let stop = fixture.scratch.file("stop-appending")
        // Plain appends, as people and tools do them: no lock, a fresh open for every line.
        let appender = try ChildProcess(
            "/bin/sh",
            [
                "-c",
                """
                i=0
                while [ ! -e '\(stop.path)' ] && [ $i -lt 20000 ]; do
                  echo "# plain append $i" >> '\(fixture.authorizedKeys.path)'
                  i=$((i+1))
                  sleep 0.002
                done
                echo $i > '\(stop.path).count'
                """,
            ])

        let devices = (0..<Self.helperCount).map { TestDevice(name: "device \($0)") }
        let outcomes = runConcurrently(Self.helperCount) { index -> String in
            do {
                let helper = try fixture.startHelper(["--lifetime", "300"])
                let payload = try helper.ready(timeout: 120)
                let enroll = fixture.enrollInBackground(payload, input: devices[index].requestInput)
                let request = try helper.request(timeout: 120)
                guard request.name == devices[index].name else { return "wrong request \(request.name)" }
                helper.answer("y")
                let result = try enroll.wait(timeout: 180)
                let status = try helper.exitStatus(timeout: 60)
                return "\(result.token) \(result.status) \(status)"
            } catch {
                return "error: \(error)"
            }
        }
        try writeText("", to: stop)
        #expect(appender.wait(timeout: 60) == 0)
        #expect(outcomes.allSatisfy { $0 == "OK 0 0" }, "\(outcomes.filter { $0 != "OK 0 0" })")

        let appended =
            Int(
                try readText(URL(fileURLWithPath: stop.path + ".count")).trimmingCharacters(in: .whitespacesAndNewlines)
            ) ?? -1
        #expect(appended > 0)
        let final = try fixture.contents()
        let keptFirst = final.hasPrefix(before)
        #expect(keptFirst, "the lines that were there first stay first")
        let rest = final.dropFirst(before.count).split(separator: "\n", omittingEmptySubsequences: false).map(
            String.init)
        #expect(rest.last == "")
        let expected = (0..<appended).map { "# plain append \($0)" } + devices.map(\.expectedLine) + [""]
        // Compared as sets and counts, so a failure names the lines rather than printing thousands.
        let missing = Set(expected).subtracting(rest)
        let unexpected = Set(rest).subtracting(expected)
        #expect(missing.isEmpty, "\(missing.count) lines lost, e.g. \(missing.sorted().prefix(5))")
        #expect(unexpected.isEmpty, "\(unexpected.count) unexpected lines, e.g. \(unexpected.sorted().prefix(5))")
        #expect(rest.count == expected.count, "every line exactly once")
        let oneTimeLeft = final.contains("herdr-pair:")
        #expect(!oneTimeLeft, "no one-time line is left")
        #expect(fixture.stateEntries().isEmpty)
    }
}
