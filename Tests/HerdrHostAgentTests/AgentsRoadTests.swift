import Foundation
import Glibc
import HerdrAgents
import HerdrHostAgent
import TestSupport
import Testing

/// herdr's agents through the relay, all real processes: herdr-relay, herdr-host run reading the
/// herdr stand-in's sockets, and a device driven through the Companion library
/// (`AgentWatchingDevice`). Outcomes only: what the device is told and where it lands.
@Suite(.serialized) struct AgentsRoadTests {
    static let p2 = AgentKey(session: "default", pane: "w1:p2")
    static let p3 = AgentKey(session: "default", pane: "w1:p3")
    static let p4 = AgentKey(session: "default", pane: "w1:p4")

    /// A paired road whose computer has the herdr stand-in with `setUp`'s agents, its agent running.
    func road(_ setUp: (HerdrStandIn) throws -> Void) throws -> (RelayRoadFixture, HerdrStandIn, InteractiveProcess) {
        let road = try RelayRoadFixture()
        let herdr = try road.useHerdrStandIn()
        try setUp(herdr)
        try road.pair()
        return (road, herdr, try road.startAgent())
    }

    func status(_ road: RelayRoadFixture) throws -> String {
        try ProcessRunner.run(BuiltProgram.path("herdr-host"), ["status"], environment: road.hostEnvironment).stdout
    }

    @Test func aStatusChangeOnTheComputerReachesAWatchingDeviceAsChanges() throws {
        let (road, herdr, agent) = try road { herdr in
            try herdr.startSession()
            try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working, title: "Refactor")
            try herdr.addAgent(pane: "w1:p3", name: "codex-3", kind: "codex", status: .idle)
        }
        defer { agent.signal(SIGTERM) }
        let device = try AgentWatchingDevice(road)
        defer { device.close() }
        try device.watch()
        let first = try device.waitForBoard("the whole board") { $0.agents.count == 2 }
        #expect(device.boardMessages.first?.kind == .full(part: 1, parts: 1))
        #expect(first.herdr == .ready)
        #expect(first.sessions == [HerdrSessionInfo(name: "default", isDefault: true, state: .ready)])
        let working = try #require(first.agents[Self.p2])
        #expect(working.name == "claude-2" && working.kind == "claude" && working.status == .working)
        #expect(working.title == "Refactor")
        #expect(first.agents[Self.p3]?.kind == "codex")

        try herdr.setStatus(pane: "w1:p2", .blocked, title: "Approve edit?")
        let blocked = try device.waitForBoard("w1:p2 blocked") { $0.agents[Self.p2]?.status == .blocked }
        let change = try #require(device.boardMessages.last)
        #expect(change.kind == .changes)
        #expect(change.agents.map(\.key) == [Self.p2], "only what changed")
        #expect(blocked.agents[Self.p2]?.title == "Approve edit?")
        #expect((blocked.agents[Self.p2]?.since ?? 0) >= (working.since ?? .max))
        #expect(blocked.sorted.first?.key == Self.p2, "blocked first")

        // A pane that comes is watched too; one that goes leaves the board.
        try herdr.addAgent(pane: "w1:p4", name: "claude-4", status: .working)
        try device.waitForBoard("w1:p4 listed") { $0.agents[Self.p4] != nil }
        try herdr.setStatus(pane: "w1:p4", .done)
        try device.waitForBoard("w1:p4 done") { $0.agents[Self.p4]?.status == .done }
        try herdr.removeAgent(pane: "w1:p3")
        try device.waitForBoard("w1:p3 gone") { $0.agents[Self.p3] == nil }

        // herdr-host only read, and says what it read.
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))
        #expect(try herdr.requests().contains("events.subscribe"))
        #expect(road.waitForAgent { $0.herdr?.agents == 2 })
        let said = try status(road)
        #expect(said.contains("herdr: ready, 1 session, 2 agents (1 blocked)"), "\(said)")
    }

    @Test func openAgentLandsInItsPaneAndWhatTheBoardDoesNotListIsRefused() throws {
        let (road, herdr, agent) = try road { herdr in
            try herdr.startSession()
            try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .blocked)
            try herdr.addAgent(pane: "w1:p3", name: "claude-3", status: .idle)
            try herdr.addShellPane(pane: "w1:p5")
            try herdr.startSession("work")
            try herdr.addAgent(session: "work", pane: "w1:p2", name: "work-agent", status: .working)
        }
        defer { agent.signal(SIGTERM) }
        let device = try AgentWatchingDevice(road)
        defer { device.close() }
        // No watch on this connection: the computer takes a fresh look before it answers.
        try device.openAgent(1, pane: "w1:p3")
        try device.waitForOutput(1, "w1:p3$")
        #expect(device.text(1).contains("pane w1:p3 claude-3"))
        #expect(herdr.attachedClients().contains("w1:p3"))
        try device.echoes(1, mark: "in-w1-p3")
        #expect(herdr.screen(pane: "w1:p3").contains("42-in-w1-p3"))

        try device.openAgent(2, session: "work", pane: "w1:p2")
        try device.waitForOutput(2, "pane w1:p2 work-agent")
        #expect(herdr.attachedClients(session: "work").contains("w1:p2"))

        // A pane herdr does not have, a pane with no agent, a session this computer does not have.
        try device.openAgent(3, pane: "w1:p9")
        try device.openAgent(4, pane: "w1:p5")
        try device.openAgent(5, session: "elsewhere", pane: "w1:p2")
        try device.wait("three refusals") { $0.refusals.count == 3 }
        #expect(device.refusals[3]?.reason == .unknownAgent)
        #expect(device.refusals[3]?.text == "no agent w1:p9 in herdr session default on this computer")
        #expect(device.refusals[4]?.text == "no agent w1:p5 in herdr session default on this computer")
        #expect(
            device.refusals[5]?.text
                == "no agent w1:p2 in herdr session elsewhere on this computer (herdr has no such session here)")
        #expect(!device.started.contains(3) && !device.started.contains(4) && !device.started.contains(5))
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))
    }

    @Test func aHostileHerdrNeverStallsATerminalSessionAndTheDeviceIsToldItsState() throws {
        let (road, herdr, agent) = try road { herdr in
            try herdr.startSession()
            try herdr.addAgent(pane: "w1:p2", name: "claude-2", status: .working)
        }
        defer { agent.signal(SIGTERM) }
        let device = try AgentWatchingDevice(road)
        defer { device.close() }
        try device.open(1)
        try device.waitForOutput(1, "remote$ ")
        try device.watch()
        try device.waitForBoard("the board") { $0.agents[Self.p2] != nil }
        func state(_ board: AgentBoard) -> HerdrSessionInfo.State? { board.sessions.first?.state }

        // A socket that never answers: told within its liveness check; keystrokes echo throughout.
        try herdr.setMode(.frozen)
        try device.echoes(1, mark: "frozen")
        let frozen = try device.waitForBoard("unresponsive") { state($0) == .unresponsive }
        #expect(frozen.agents.isEmpty)
        #expect(frozen.sessions.first?.detail?.contains("did not answer") == true)
        try device.echoes(1, mark: "still-frozen")
        try herdr.setMode(.normal)
        try device.waitForBoard("ready again") { state($0) == .ready && $0.agents[Self.p2] != nil }

        // Malformed lines.
        try herdr.setMode(.garbage)
        try device.echoes(1, mark: "garbage")
        let garbage = try device.waitForBoard("failing") { state($0) == .failing }
        #expect(garbage.sessions.first?.detail?.contains("not a JSON object") == true, "\(garbage.sessions)")
        try device.echoes(1, mark: "still-garbage")
        try herdr.setMode(.normal)
        try device.waitForBoard("ready again") { state($0) == .ready && $0.agents[Self.p2] != nil }

        // A list past the board's bound, then one past herdr-host's longest line.
        try herdr.setMode(.huge(agents: 2000))
        try herdr.addAgent(pane: "w1:p3", status: .blocked)  // its pane's events ask for a fresh list
        let bounded = try device.waitForBoard("a bounded board") { $0.omitted > 0 && $0.agents[Self.p3] != nil }
        #expect(bounded.agents.count == AgentBoard.maximumAgents)
        #expect(bounded.agents.count + bounded.omitted == 2002)
        #expect(bounded.agents[Self.p3]?.status == .blocked, "the one waiting for a person is kept")
        try device.echoes(1, mark: "huge")
        try herdr.setMode(.huge(agents: 100_000))
        try herdr.addAgent(pane: "w1:p4")
        let past = try device.waitForBoard(timeout: 60, "failing past 8 MiB") { state($0) == .failing }
        #expect(past.sessions.first?.detail?.contains("8 MiB") == true, "\(past.sessions)")
        try device.echoes(1, mark: "past-the-bound")
        try herdr.setMode(.normal)
        try device.waitForBoard("ready again") { state($0) == .ready && $0.omitted == 0 && $0.agents.count == 3 }

        // herdr restarting: not running while it is away, then read afresh.
        try herdr.restartSession(downFor: 1500)
        try device.waitForBoard("not running") { state($0) == .notRunning }
        try device.echoes(1, mark: "restarting")
        try herdr.setStatus(pane: "w1:p2", .done)  // while herdr-host could not hear it
        try device.waitForBoard("back") { state($0) == .ready && $0.agents[Self.p2]?.status == .done }
        #expect(Set(try herdr.requests()).isSubset(of: HerdrStandIn.readOnlyMethods))

        // One log line per change of state, however often a failing server was asked again.
        let log = agent.stderr
        func lines(_ text: String) -> Int { log.components(separatedBy: text).count - 1 }
        let herdrLines = log.split(separator: "\n").filter { $0.contains("herdr session") }.joined(separator: "\n")
        #expect(lines("herdr session default: unresponsive") == 1, "\(herdrLines)")
        // Garbage is logged once, whichever request met it first (a ping, a list or a subscription).
        #expect(
            log.split(separator: "\n").filter {
                $0.contains("herdr session default: failing (") && $0.contains("not a JSON object")
            }.count == 1, "\(herdrLines)")
        #expect(lines("herdr session default: ready") == 5, "at the start and after each recovery: \(herdrLines)")
    }

    @Test func noHerdrIsTheBoardsOwnState() throws {
        // The stand-in installed off PATH and never started: no ~/.config/herdr.
        let (road, _, agent) = try road { _ in }
        defer { agent.signal(SIGTERM) }
        let device = try AgentWatchingDevice(road)
        defer { device.close() }
        try device.watch()
        let board = try device.waitForBoard("a board") { _ in true }
        #expect(board.herdr == HerdrAvailability(.notInstalled, detail: "no herdr on PATH and no ~/.config/herdr"))
        #expect(board.sessions.isEmpty && board.agents.isEmpty)
        try device.openAgent(1, pane: "w1:p1")
        try device.wait("a refusal") { $0.refusals[1] != nil }
        #expect(device.refusals[1]?.reason == .unknownAgent)
        #expect(road.waitForAgent { $0.herdr?.state == "not-installed" })
        #expect(try status(road).contains("herdr: not-installed (no herdr on PATH and no ~/.config/herdr)"))
    }
}
