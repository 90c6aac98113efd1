import CompanionDevice
import Foundation
import HerdrAgents
import HerdrKit
import Noise
import Synchronization
import TestSupport
import Testing

/// The device's side of the agents family on the Noise roads, against a scripted computer at a
/// loopback relay that keeps to docs/companion.md's contract (herdr-host's own side is tested
/// with herdr-host; the two together once both are in main).
@Suite("agents over the relay road, the device's side", .serialized)
struct AgentsOverRelayTests {
    /// Events of a connection, waited for by what they say.
    final class Events: Sendable {
        private let events = Mutex<[DeviceConnection.Event]>([])
        private let arrived = DispatchSemaphore(value: 0)

        func add(_ event: DeviceConnection.Event) {
            events.withLock { $0.append(event) }
            arrived.signal()
        }

        /// Output written to the connection's sink.
        final class Output: Sendable {
            private let text = Mutex("")
            private let arrived = DispatchSemaphore(value: 0)

            func add(_ bytes: [UInt8]) {
                text.withLock { $0 += String(decoding: bytes, as: UTF8.self) }
                arrived.signal()
            }

            /// The output once it is `expected` or longer, waiting at most `timeout` seconds.
            func wait(for expected: String, timeout: Double = 20) -> String {
                let deadline = DispatchTime.now() + timeout
                while true {
                    let now = text.withLock { $0 }
                    if now.utf8.count >= expected.utf8.count { return now }
                    guard arrived.wait(timeout: deadline) == .success else { return now }
                }
            }
        }

        /// The first event `matches` takes, waiting at most `timeout` seconds.
        func wait<T>(timeout: Double = 20, _ matches: (DeviceConnection.Event) -> T?) -> T? {
            let deadline = DispatchTime.now() + timeout
            var seen = 0
            while true {
                let all = events.withLock { $0 }
                for event in all[seen...] { if let found = matches(event) { return found } }
                seen = all.count
                guard arrived.wait(timeout: deadline) == .success else { return nil }
            }
        }
    }

    static let agents = [
        AgentsComputer.agent("w1:p1", name: "claude-1", .working),
        AgentsComputer.agent("w1:p2", name: "claude-2", .blocked),
    ]

    @Test(
        "a connection that attaches nothing gets the board, whole across parts, then opens an agent on the same channel"
    )
    func watchThenOpen() throws {
        let relay = try LoopbackRelay()
        // Every text at its bound: the board takes several messages.
        func padded(_ text: String, _ bytes: Int) -> String {
            text + String(repeating: "0", count: bytes - text.utf8.count)
        }
        var many = (1...256).map { index in
            HerdrAgent(
                key: AgentKey(session: "default", pane: padded("w9:p\(index)-", HerdrAgent.maximumPaneBytes)),
                name: padded("agent-\(index)-", HerdrAgent.maximumNameBytes),
                kind: padded("kind", HerdrAgent.maximumKindBytes), status: .idle,
                title: String(repeating: "t", count: HerdrAgent.maximumTitleBytes), since: 1)
        }
        many[0] = AgentsComputer.agent("w1:p2", name: "claude-2", .blocked)
        let board = AgentsComputer.board(many)
        let computer = try AgentsComputer(relay: relay, answer: .board(board))
        defer { computer.stop() }
        var configuration = DeviceConnection.Configuration(
            roads: computer.roads(deviceKey: .generate()), attach: nil, cols: 80, rows: 24)
        configuration.watchAgents = true
        configuration.retryDelay = { _ in nil }
        let output = Events.Output()
        configuration.outputSink = { bytes in
            output.add(bytes)
            return true
        }
        let connection = DeviceConnection(configuration)
        let events = Events()
        connection.start { events.add($0) }
        defer { connection.cancel() }
        let received = events.wait { event -> AgentBoard? in
            if case .agents(let board) = event { return board }
            return nil
        }
        #expect(received == board, "256 agents with every title at its bound come in several parts")
        var sequence: UInt32 = 1
        #expect(AgentBoardMessage.full(board, sequence: &sequence).count > 1)

        connection.open(.agent(AgentKey(session: "default", pane: "w1:p2")))
        #expect(events.wait { $0 == .started ? true : nil } == true)
        #expect(output.wait(for: "agent w1:p2\r\n") == "agent w1:p2\r\n")
        #expect(computer.openedAgents == [AgentKey(session: "default", pane: "w1:p2")])
        #expect(computer.connections == 1, "the board and the agent's terminal share one connection")
    }

    @Test("a computer that breaks the board's order ends the connection; one that refuses the agent is agentNotFound")
    func brokenBoardAndRefusal() throws {
        let relay = try LoopbackRelay()
        let computer = try AgentsComputer(relay: relay, answer: .changesFirst)
        defer { computer.stop() }
        var configuration = DeviceConnection.Configuration(
            roads: computer.roads(deviceKey: .generate()), attach: nil, cols: 80, rows: 24)
        configuration.watchAgents = true
        configuration.retryDelay = { _ in nil }
        let failure = try #require(Self.failure(of: configuration))
        #expect(failure.kind == .protocolViolation)
        #expect(
            failure.message.contains("the computer broke the agents board: agents changes came before a whole board"))

        computer.answer = .board(AgentsComputer.board(Self.agents))
        configuration.attach = .agent(AgentKey(session: "default", pane: "w9:p9"))
        let notFound = try #require(Self.failure(of: configuration))
        #expect(notFound.kind == .agentNotFound)
        #expect(notFound.message.contains("no agent w9:p9 in herdr session default on this computer"))
    }

    /// A connection of `configuration` started: the failure it ends with (an issue recorded and
    /// nil when it ends otherwise, or not at all).
    static func failure(
        of configuration: DeviceConnection.Configuration
    ) -> DeviceConnection.Failure? {
        let connection = DeviceConnection(configuration)
        let events = Events()
        connection.start { events.add($0) }
        let end = events.wait { event -> DeviceConnection.Termination? in
            if case .finished(let termination) = event { return termination }
            return nil
        }
        guard case .failed(let failure) = end else {
            Issue.record("not failed: \(String(describing: end))")
            return nil
        }
        return failure
    }

    /// A config directory with the computer saved as `studio`.
    @MainActor
    static func saved(_ computer: AgentsComputer) throws -> (HostStore, HostProfile, TemporaryDirectory) {
        let directory = try TemporaryDirectory(prefix: "herdr-agents-device-")
        let config = ConfigDirectory(url: directory.url)
        let profile = try computer.save(as: "studio", in: config)
        return (HostStore(directory: config), profile, directory)
    }

    @Test("connect --agent on the relay road: the board first, then open agent on that connection, the watch stopped")
    @MainActor
    func connectAgent() async throws {
        let relay = try LoopbackRelay()
        let computer = try AgentsComputer(relay: relay, answer: .board(AgentsComputer.board(Self.agents)))
        defer { computer.stop() }
        let (store, profile, directory) = try Self.saved(computer)
        _ = directory
        var options = TerminalSessionOptions()
        options.agent = AgentTarget("claude-2")
        options.reconnect = .never
        let session = TerminalSession(profile: profile, store: store, options: options) { _ in false }
        var output = ""
        session.onOutput = { output += String(decoding: $0, as: UTF8.self) }
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected, "\(session.state)")
        #expect(session.resolvedAgent?.key == AgentKey(session: "default", pane: "w1:p2"))
        #expect(computer.openedAgents == [AgentKey(session: "default", pane: "w1:p2")])
        #expect(computer.connections == 1)
        #expect(
            await Self.eventually { computer.watchRequests == [true, false] }, "the watch stops once the agent is named"
        )
        session.disconnect()

        var absent = options
        absent.agent = AgentTarget("nobody")
        let missing = TerminalSession(profile: profile, store: store, options: absent) { _ in false }
        await missing.connect(cols: 80, rows: 24)
        #expect(missing.failureKind == .agentNotFound)
        guard case .failed(let message) = missing.state else { return }
        #expect(message.contains("studio: no agent nobody; the computer's agents: default/w1:p2 (claude-2, blocked)"))
        #expect(computer.openedAgents.count == 1, "nothing was opened for a target the board does not have")
    }

    @Test("connect --agent to a computer that sends no board: its herdr-host is older, said once the time is up")
    @MainActor
    func olderComputer() async throws {
        let relay = try LoopbackRelay()
        let computer = try AgentsComputer(relay: relay, answer: .nothing)
        defer { computer.stop() }
        let (store, profile, directory) = try Self.saved(computer)
        _ = directory
        var options = TerminalSessionOptions()
        options.agent = AgentTarget("claude-2")
        options.reconnect = .never
        options.agentBoardTimeout = .seconds(1)
        let session = TerminalSession(profile: profile, store: store, options: options) { _ in false }
        await session.connect(cols: 80, rows: 24)
        #expect(session.failureKind == .agentsUnavailable)
        guard case .failed(let message) = session.state else { return }
        #expect(message.contains("studio sent no agents board within 1 s: its herdr-host is older"))
        #expect(computer.openedAgents.isEmpty)
    }

    @Test("agents reads a relay computer's board once; one not at its relay is unreachable within the limit")
    @MainActor
    func readOnce() async throws {
        let relay = try LoopbackRelay()
        let computer = try AgentsComputer(relay: relay, answer: .board(AgentsComputer.board(Self.agents)))
        let (store, profile, directory) = try Self.saved(computer)
        _ = directory
        let read = await ComputerBoards.read(profile, store: store, limit: 10, options: BoardWatchOptions())
        #expect(try read.get().road == "relay")
        #expect(try read.get().board.agents.count == 2)
        computer.stop()
        let started = Date()
        let away = await ComputerBoards.read(profile, store: store, limit: 4, options: BoardWatchOptions())
        #expect(Date().timeIntervalSince(started) < 4 + 1)
        guard case .failure(let problem) = away else {
            Issue.record("read a board from a computer that is gone")
            return
        }
        #expect(problem.kind == .unreachable || problem.kind == .timedOut, "\(problem)")
    }

    @Test(
        "watch hands the room over: the board's connection closes, the agent's terminal feeds the board, then it comes back"
    )
    @MainActor
    func handOver() async throws {
        let relay = try LoopbackRelay()
        let computer = try AgentsComputer(relay: relay, answer: .board(AgentsComputer.board(Self.agents)))
        defer { computer.stop() }
        let (store, profile, directory) = try Self.saved(computer)
        _ = directory
        let watch = try #require(
            ComputerBoards.watch(profile, store: store, options: BoardWatchOptions()) as? CompanionBoardWatch)
        let states = StatesSeen()
        watch.onChange = { states.states.append($0) }
        watch.start()
        defer { watch.stop() }
        #expect(await states.waitForLive(count: 1))
        await watch.suspend()

        var options = TerminalSessionOptions()
        options.agent = AgentTarget("default/w1:p2")
        options.reconnect = .never
        options.onAgents = { board, road in watch.feed(board, road: road) }
        let session = TerminalSession(profile: profile, store: store, options: options) { _ in false }
        await session.connect(cols: 80, rows: 24)
        #expect(session.state == .connected, "\(session.state)")
        #expect(await states.waitForLive(count: 2), "the agent's connection fed the board")
        #expect(computer.watchRequests.last == true, "the agent's connection keeps watching for the board")
        session.disconnect()
        watch.resume()
        #expect(await states.waitForLive(count: 3))
        #expect(computer.connections == 3, "board, agent's terminal, board again: one connection at a time")
    }

    /// Waits (bounded) until `condition` holds.
    @MainActor
    static func eventually(timeout: Double = 20, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return true
    }

    @MainActor
    final class StatesSeen {
        var states: [ComputerBoardState] = []

        /// Waits (bounded) until `count` live states were seen.
        func waitForLive(count: Int, timeout: Double = 20) async -> Bool {
            let deadline = Date().addingTimeInterval(timeout)
            while Date() < deadline {
                let live = states.filter { if case .live = $0 { return true } else { return false } }.count
                if live >= count { return true }
                try? await Task.sleep(for: .milliseconds(20))
            }
            return false
        }
    }
}
