import Foundation
import TestSupport
import Testing

/// `make demo`'s relay road (scripts/demo-relay.sh) as a new user without a terminal runs it:
/// the relay, the agent, the pairing with the code typed for them, and a session through the relay.
@Suite struct RelayDemoTests {
    @Test func theRelayDemoPairsAndReachesTheSession() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        var environment = ProcessInfo.processInfo.environment
        environment["HERDR_BIN"] =
            URL(fileURLWithPath: BuiltProgram.path("herdr-host")).deletingLastPathComponent().path
        let run = try ProcessRunner.run(
            "/bin/bash", [root.appendingPathComponent("scripts/demo-relay.sh").path], environment: environment,
            timeout: 180)
        let output = run.stdout + run.stderr
        #expect(run.status == 0, "\(output)")
        #expect(output.contains("no terminal here, so the demo types it on the computer"))
        #expect(output.contains("Paired with demo-computer through 127.0.0.1:"))
        #expect(output.contains("hello through the relay, session demo"), "\(output)")
        #expect(output.contains("herdr-remote exited with 0"))
        #expect(output.contains("demo-phone: started a session (herdr session demo)"))
    }
}
