import Foundation
import Glibc
import HerdrKit
import TestSupport
import Testing

/// The helper as a person runs it, in a real terminal: a headless local tmux plays the terminal
/// emulator, the helper runs in it as the test user, and keys are typed with `send-keys`.
@Suite(.serialized) struct TerminalTests {
    /// The command line that starts the helper in the terminal as the test user.
    static func command(_ fixture: PairFixture) -> String {
        let environment = fixture.environment()
            .filter { $0.key != "HERDR_PAIR_TEST_MODE" }
            .map { "\($0.key)='\($0.value)'" }.sorted().joined(separator: " ")
        return "setpriv \(PairFixture.setprivArguments(fixture.user).joined(separator: " ")) env -i \(environment) "
            + "\(PairFixture.executable) --host testhost --port \(fixture.server.port) --authorized-keys \(fixture.authorizedKeys.path) "
            + "--host-key \(fixture.hostKeyFile); echo EXIT=$?"
    }

    static func payload(on screen: String) throws -> PairingPayload {
        guard let line = screen.split(separator: "\n").first(where: { $0.contains("URL       herdr://") }),
            let start = line.range(of: "herdr://")
        else { throw FixtureError("no URL on the screen:\n\(screen)") }
        return try PairingPayload(parsing: String(line[start.lowerBound...]).trimmingCharacters(in: .whitespaces))
    }

    @Test func aPersonApprovesByTypingYAndKeysTypedEarlierDoNotCount() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let scratch = try TemporaryDirectory()
        let terminal = try TmuxTerminal(directory: scratch)
        try terminal.type(Self.command(fixture))
        try terminal.waitFor("Waiting for a device to scan the code")
        let screen = terminal.screen
        #expect(screen.contains("▀") || screen.contains("▄"))
        #expect(screen.contains("User      \(fixture.user.name)"))
        let payload = try Self.payload(on: screen)

        // Typed while nothing was asked: discarded when the question comes.
        try terminal.type("y")
        let device = TestDevice(name: "Terminal phone")
        let enroll = fixture.enrollInBackground(payload, input: device.requestInput)
        try terminal.waitFor("Approve this device? [y/N]")
        #expect(terminal.screen.contains("Device \"Terminal phone\" asks to pair."))
        #expect(terminal.screen.contains("device key \(device.publicKey.fingerprintSHA256)"))
        usleep(500_000)
        let waiting = terminal.screen
        #expect(!waiting.contains("Approved") && !waiting.contains("Denied") && !waiting.contains("EXIT=0"))
        try terminal.type("y")
        try terminal.waitFor("EXIT=0")
        #expect(try enroll.wait().stdout == "OK\n")
        #expect(terminal.screen.contains("Approved"))
        #expect(try fixture.contents() == before + device.expectedLine + "\n")
    }

    @Test func ctrlCInTheTerminalCancels() throws {
        let fixture = try PairFixture()
        let before = try fixture.contents()
        let scratch = try TemporaryDirectory()
        let terminal = try TmuxTerminal(directory: scratch)
        try terminal.type(Self.command(fixture))
        try terminal.waitFor("Waiting for a device to scan the code")
        #expect(try fixture.contents() != before)
        try terminal.tmux(["send-keys", "-t", "local", "C-c"])
        try terminal.waitFor("EXIT=130")
        #expect(try fixture.contents() == before)
        #expect(fixture.stateEntries().isEmpty)
    }
}
