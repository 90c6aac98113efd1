import RelayClient
import TestSupport
import Testing

@Suite("herdr-relay probe's checks against real relays", .serialized)
struct RelayProbeTests {
    @Test("open mode: every step passes")
    func openMode() throws {
        let relay = try TestRelay()
        var seen: [String] = []
        let report = RelayProbe(endpoint: relay.endpoint, timeout: 5).run { seen.append($0.name) }
        for step in report.steps where !step.ok { Issue.record("\(step.name): \(step.detail)") }
        #expect(report.verdict == .allGood)
        #expect(report.mode == .open)
        #expect(
            report.steps.map(\.name) == [
                "healthz", "attest challenge", "attestation mode", "admission as mac", "admission as phone", "splice",
                "origin header refused", "bad room refused",
            ])
        #expect(seen == report.steps.map(\.name))
        let splice = try #require(report.steps.first { $0.name == "splice" })
        #expect(splice.detail.contains("round trip"))
    }

    @Test("a relay that requires attestation: reported as such, phones need a ticket")
    func attestationRequired() throws {
        let relay = try TestRelay(attestationRequired: true)
        let report = RelayProbe(endpoint: relay.endpoint, timeout: 5).run()
        for step in report.steps where !step.ok { Issue.record("\(step.name): \(step.detail)") }
        #expect(report.verdict == .allGood)
        #expect(report.mode == .attestationRequired)
        let mode = try #require(report.steps.first { $0.name == "attestation mode" })
        #expect(mode.detail.contains("attestation required"))
        let phone = try #require(report.steps.first { $0.name == "admission as phone" })
        #expect(phone.detail.contains("ticket required"))
        #expect(!report.steps.contains { $0.name == "splice" })
    }

    @Test("a closed port is unreachable")
    func unreachable() throws {
        let port = try LoopbackSocket.closedPort()
        let report = RelayProbe(endpoint: try RelayEndpoint(parsing: "http://127.0.0.1:\(port)"), timeout: 2).run()
        #expect(report.verdict == .unreachable)
        #expect(report.steps.count == 1)
        #expect(report.steps.first?.ok == false)
    }
}
