import HerdrAgents
import PeerGate
import Testing

@testable import CompanionDevice
@testable import SessionProtocol

/// Every policy docs/companion.md states for the device, on the machine alone with a fake clock
/// (`DeviceMachineDriver`): no socket, no thread, no sleep.
@Suite("DeviceConnectionMachine: the device's connection decided with a fake clock")
struct DeviceConnectionMachineTests {
    typealias Driver = DeviceMachineDriver
    typealias Machine = DeviceConnectionMachine
    static let window = 4 * 1024 * 1024

    // MARK: - Connecting

    @Test("the first attempt tries home first; a connection up attaches the session and the computer starts it")
    func firstConnection() {
        var driver = Driver()
        let start = driver.handle(.start)
        let attempts = Driver.attempts(in: start)
        #expect(attempts.map(\.attempt) == [.init(homeFirst: true, home: [Driver.homeAddress], homeOnly: false)])
        let id = attempts[0].id
        let up = driver.handle(.attemptEnded(id, .success(.init(road: Driver.relay, registeredNow: true))))
        #expect(up.first == .adopt(id))
        #expect(Driver.events(up) == [.registered, .connected(via: Driver.relay)])
        #expect(
            Driver.sessionSent(up) == [.open(stream: 1, name: "main", cols: 80, rows: 24, window: Self.window)])
        let started = driver.started(on: id)
        #expect(Driver.events(started) == [.started])
        // The window starts at the path window's floor and grows as the path shows it carries more.
        #expect(Driver.sent(started) == [.control(.window(stream: 1, bytes: PathWindow.floor))])
    }

    @Test("the first attempt failing outright ends it at once, as ssh does: unreachable")
    func firstAttemptUnreachable() {
        var driver = Driver()
        let id = Driver.attempts(in: driver.handle(.start))[0].id
        let end = driver.handle(.attemptEnded(id, .failure(.unavailable("connection refused"))))
        #expect(Driver.finish(end) == .failed(.init(.unreachable, "connection refused")))
    }

    @Test("a computer between two parks gets the first connect's quick retries, then it is unreachable")
    func computerOfflineAtFirst() {
        var driver = Driver()
        var attempt = Driver.attempts(in: driver.handle(.start))[0].id
        var waits: [Double] = []
        for _ in 0..<4 {
            driver.handle(.attemptEnded(attempt, .failure(.computerOffline(relay: "relay.test"))))
            let before = driver.now
            let next = Driver.attempts(in: driver.run(until: driver.machine.nextWake ?? .infinity))
            #expect(next.count == 1)
            waits.append(driver.now - before)
            attempt = next[0].id
        }
        #expect(zip(waits, Machine.offlineRetries).allSatisfy { abs($0 - $1) < 1e-9 }, "\(waits)")
        #expect(waits.count == Machine.offlineRetries.count)
        let end = driver.handle(.attemptEnded(attempt, .failure(.computerOffline(relay: "relay.test"))))
        guard case .failed(let failure) = Driver.finish(end) else {
            Issue.record("not failed: \(end)")
            return
        }
        #expect(failure.kind == .unreachable)
    }

    // MARK: - Liveness and the race

    @Test("a ping out and nothing heard for max(1 s, 4 × RTT) makes the path suspect: a race, not before")
    func quietPathRaces() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        let typed = driver.handle(.keys([0x61]))
        #expect(Driver.input(typed) == [0x61])
        let pings = Driver.pings(typed)
        #expect(pings.count == 1, "a keystroke is covered by a ping")
        // The pong measures a round trip of 0.5 s: the limit is then 4 × 0.5 = 2 s.
        driver.advance(0.5)
        driver.computer(id, [CompanionMessage.pong(pings[0]).bytes])
        driver.advance(0.25)
        let second = driver.handle(.keys([0x62]))
        #expect(Driver.pings(second).count == 1)
        let pingAt = driver.now
        #expect(Driver.attempts(in: driver.run(until: pingAt + 1.999)).isEmpty, "1 s is less than 4 RTT")
        let raced = Driver.attempts(in: driver.run(until: pingAt + 2))
        #expect(raced.map(\.attempt) == [.init(homeFirst: true, home: [Driver.homeAddress], homeOnly: false)])
    }

    @Test("the race's connection takes the session over: the old one abandoned, the session resumed, moved said")
    func raceWinsAndMoves() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.computer(id, [SessionMessage.output(stream: 1, offset: 0, data: [0x41, 0x42]).bytes])
        driver.handle(.shown(2))
        driver.advance(1)
        let pingAt = driver.now
        driver.handle(.keys([0x61]))
        let race = driver.run(until: pingAt + 1)
        let moved = driver.arrive(race)
        let raceID = Driver.attempts(in: race)[0].id
        #expect(Array(moved.prefix(2)) == [.abandon(id), .adopt(raceID)])
        #expect(
            Driver.events(moved) == [
                .moved(to: Driver.relay, because: .pathWentQuiet(seconds: 2)), .connected(via: Driver.relay),
            ])
        #expect(
            Driver.sessionSent(moved) == [
                .resume(stream: 2, token: Driver.token, received: 2, cols: 80, rows: 24, window: Self.window)
            ])
        // The old connection's late frames and end change nothing.
        #expect(driver.handle(.ended(id, .displaced)).isEmpty)
        #expect(driver.computer(id, [CompanionMessage.ping(9).bytes]).isEmpty)
    }

    @Test("a race that fails is tried again 2 s later while the path stays quiet")
    func failedRaceWaits() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.keys([0x61]))
        let race = Driver.attempts(in: driver.advance(1))[0].id
        driver.handle(.attemptEnded(race, .failure(.unavailable("no route"))))
        let failedAt = driver.now
        #expect(Driver.attempts(in: driver.run(until: failedAt + 1.999)).isEmpty)
        #expect(Driver.attempts(in: driver.run(until: failedAt + 2)).count == 1)
    }

    @Test("anything heard clears the suspicion: no race")
    func heardInTime() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.keys([0x61]))
        driver.advance(0.9)
        driver.computer(id, [SessionMessage.output(stream: 1, offset: 0, data: [0x61]).bytes])
        #expect(Driver.attempts(in: driver.advance(0.5)).isEmpty)
    }

    @Test("an idle connection pings after 5 s of silence")
    func idlePing() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        #expect(Driver.pings(driver.run(until: 1004.999)).isEmpty)
        #expect(Driver.pings(driver.run(until: 1005)).count == 1)
        _ = id
    }

    // MARK: - Reconnecting

    @Test("a road up for 2 s that drops is retried at once; one that drops sooner waits the backoff")
    func reconnectAtOnceAfterSteadyRoad() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        let drop = driver.handle(.ended(id, .unavailable("the connection was reset")))
        #expect(Driver.events(drop) == [.reconnecting(attempt: 1, reason: "the connection was reset")])
        #expect(
            Driver.attempts(in: drop).map(\.attempt) == [
                .init(homeFirst: true, home: [Driver.homeAddress], homeOnly: false)
            ])
        driver.arrive(drop)
        let second = driver.machine.link!.id
        driver.advance(1)
        let early = driver.handle(.ended(second, .unavailable("reset again")))
        #expect(Driver.events(early) == [.reconnecting(attempt: 1, reason: "reset again")])
        #expect(Driver.attempts(in: early).isEmpty)
        let droppedAt = driver.now
        #expect(Driver.attempts(in: driver.run(until: droppedAt + 0.499)).isEmpty)
        #expect(Driver.attempts(in: driver.run(until: droppedAt + 0.5)).count == 1)
    }

    @Test("a dropped home road goes to the relay at once, beside the home addresses and without their head start")
    func homeDropLeavesForTheRelay() {
        var driver = Driver()
        let id = driver.connect(over: Driver.home)
        driver.started(on: id)
        driver.advance(3)
        let drop = driver.handle(.ended(id, .unavailable("the home connection ended")))
        #expect(Driver.attempts(in: drop).map(\.attempt.homeFirst) == [false])
    }

    @Test("after the at-once attempt: the backoff ladder, 1 s doubling to 15 s, then it gives up after 10 attempts")
    func backoffLadder() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        var attempt = Driver.attempts(in: driver.handle(.ended(id, .unavailable("reset"))))[0].id
        var delays: [Double] = []
        for number in 2...10 {
            let failed = driver.handle(.attemptEnded(attempt, .failure(.unavailable("refused \(number - 1)"))))
            #expect(Driver.events(failed) == [.reconnecting(attempt: number, reason: "refused \(number - 1)")])
            let before = driver.now
            let next = Driver.attempts(in: driver.run(until: driver.machine.nextWake ?? .infinity))
            delays.append(driver.now - before)
            attempt = next[0].id
        }
        #expect(delays == [1, 2, 4, 8, 15, 15, 15, 15, 15])
        let end = driver.handle(.attemptEnded(attempt, .failure(.unavailable("refused 10"))))
        #expect(
            Driver.finish(end)
                == .failed(.init(.connectionLost, "gave up reconnecting after 10 attempts; last: refused 10")))
    }

    @Test("the at-once attempt finding the computer between two parks retries quickly, then backs off")
    func reparkQuickRetries() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        var attempt = Driver.attempts(in: driver.handle(.ended(id, .unavailable("reset"))))[0].id
        var waits: [Double] = []
        for _ in Machine.reparkRetries {
            driver.handle(.attemptEnded(attempt, .failure(.computerOffline(relay: "relay.test"))))
            let before = driver.now
            attempt = Driver.attempts(in: driver.run(until: driver.machine.nextWake ?? .infinity))[0].id
            waits.append(driver.now - before)
        }
        #expect(zip(waits, Machine.reparkRetries).allSatisfy { abs($0 - $1) < 1e-9 }, "\(waits)")
        let backOff = driver.handle(.attemptEnded(attempt, .failure(.computerOffline(relay: "relay.test"))))
        #expect(Driver.events(backOff).first.map { if case .reconnecting(2, _) = $0 { true } else { false } } == true)
        #expect(driver.machine.nextWake == driver.now + 1)
    }

    @Test("with reconnecting off a drop ends the session and a quiet path starts no race")
    func noReattach() {
        var driver = Driver { settings in
            settings.retryDelay = { _ in nil }
            settings.homeProbeInterval = 5
        }
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.keys([0x61]))
        #expect(Driver.attempts(in: driver.advance(5)).filter { !$0.attempt.homeOnly }.isEmpty)
        let drop = driver.handle(.ended(id, .unavailable("reset")))
        #expect(Driver.finish(drop) == .failed(.init(.connectionLost, "the link dropped (reset); reconnecting is off")))
    }

    @Test("the relay closing the old connection for the race's new one is no refusal: it is retried")
    func displacedAfterRaceRetries() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.keys([0x61]))
        let race = Driver.attempts(in: driver.advance(1))[0].id
        let drop = driver.handle(.ended(id, .displaced))
        #expect(Driver.finish(drop) == nil)
        let failed = driver.handle(.attemptEnded(race, .failure(.unavailable("handshake failed"))))
        #expect(
            Driver.events(failed).first.map {
                if case .reconnecting(1, let reason) = $0 { reason.contains("took the old one's place") } else { false }
            } == true)
    }

    // MARK: - Input

    @Test("input in flight when the path died is sent again after inputReceived, ahead of what was typed since")
    func inputResentAfterResume() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        let typed = driver.handle(.keys(Array("abc".utf8)))
        #expect(Driver.input(typed) == Array("abc".utf8))
        driver.computer(id, Driver.pings(typed).map { CompanionMessage.pong($0).bytes })
        driver.advance(3)
        let drop = driver.handle(.ended(id, .unavailable("reset")))
        #expect(Driver.input(driver.handle(.keys(Array("d".utf8)))).isEmpty, "nothing goes while down")
        let resumed = driver.arrive(drop)
        let second = driver.machine.link!.id
        #expect(
            Driver.sessionSent(resumed) == [
                .resume(stream: 2, token: Driver.token, received: 0, cols: 80, rows: 24, window: Self.window)
            ])
        var sent = driver.computer(
            second,
            [
                CompanionMessage.inputReceived(stream: 2, bytes: 1).bytes,
                SessionMessage.started(stream: 2, token: Driver.token, offset: 0, window: Self.window).bytes,
            ])
        #expect(Driver.events(sent) == [.resumed])
        sent += driver.advance(0.1)
        #expect(Driver.input(sent) == Array("bcd".utf8), "the two bytes the computer missed, then what was typed")
        #expect(Driver.sessionSent(sent).filter { if case .input = $0 { true } else { false } }.count == 1)
    }

    @Test("keys beyond the pending limit while down are dropped; the rest go once the session runs")
    func pendingInputLimit() {
        var driver = Driver()
        driver.handle(.start)
        driver.handle(.keys([UInt8](repeating: 0x61, count: Machine.maximumPendingInput)))
        driver.handle(.keys([0x62]))
        #expect(driver.machine.input.count == Machine.maximumPendingInput)
    }

    // MARK: - Frame budget

    @Test("on the relay road at most 2 frames at once and 32 a second go; keys typed meanwhile share a frame")
    func relayFrameBudget() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        var sent: [Machine.Action] = []
        var frames: [Double] = []
        for key in 0..<1000 {
            let actions = driver.handle(.keys([UInt8(key % 26) + 0x61])) + driver.advance(0.001)
            for action in actions { if case .send = action { frames.append(driver.now) } }
            sent += actions
        }
        sent += driver.advance(1)
        #expect(Driver.input(sent) == (0..<1000).map { UInt8($0 % 26) + 0x61 }, "every key, in order")
        let firstSecond = frames.filter { $0 < frames[0] + 1 }.count
        #expect(firstSecond <= 2 + 32, "\(firstSecond) frames in the first second")
        #expect(firstSecond >= 30, "the budget is used, not starved")
    }

    @Test("on the home road every key goes at once")
    func homeRoadUnlimited() {
        var driver = Driver()
        let id = driver.connect(over: Driver.home)
        driver.started(on: id)
        var inputs = 0
        for key in 0..<10 {
            inputs += Driver.sessionSent(driver.handle(.keys([UInt8(key) + 0x61]))).count
        }
        #expect(inputs == 10)
    }

    // MARK: - The window

    @Test("the window follows the path: 2 × rate × (least RTT + 1/16 s), at most what started named")
    func windowSizedToPath() {
        var driver = Driver()
        let id = driver.connect(over: Driver.home)
        let started = driver.started(on: id)
        #expect(Driver.sent(started) == [.control(.window(stream: 1, bytes: PathWindow.floor))])
        let windows = Self.flood(&driver, on: id)
        let expected = 2 * 10_000_000 * (0.05 + PathWindow.creditInterval)
        #expect(windows.count >= 1)
        #expect(windows.allSatisfy { abs(Double($0) - expected) < expected * 0.15 }, "\(windows) ≈ \(expected)")
    }

    @Test("the window asked for is at most what started named; a change of less than a quarter is not sent")
    func windowCeiling() {
        var driver = Driver { $0.window = 1024 * 1024 }
        let id = driver.connect(over: Driver.home)
        driver.started(on: id, window: 1024 * 1024)
        #expect(Self.flood(&driver, on: id) == [1024 * 1024])

        var small = Driver { $0.window = 300 * 1024 }
        let other = small.connect(over: Driver.home)
        small.started(on: other, window: 300 * 1024)
        #expect(Self.flood(&small, on: other).isEmpty, "300 KiB is less than a quarter over the 256 KiB floor")
    }

    /// 10 MB/s of output on `id` for half a second, shown as it comes, after a round trip of
    /// 50 ms was measured: the windows the device asked for meanwhile.
    static func flood(_ driver: inout Driver, on id: Machine.AttemptID) -> [Int] {
        let ping = Driver.pings(driver.handle(.keys([0x61])))[0]
        driver.advance(0.05)
        driver.computer(id, [CompanionMessage.pong(ping).bytes])
        var windows: [Int] = []
        var offset = driver.machine.session.flow.received
        for _ in 0..<100 {
            let data = [UInt8](repeating: 0x78, count: 50_000)
            driver.computer(id, [SessionMessage.output(stream: 1, offset: offset, data: data).bytes])
            offset += UInt64(data.count)
            for case .control(.window(_, let bytes)) in Driver.sent(driver.handle(.shown(data.count))) {
                windows.append(bytes)
            }
            driver.advance(0.005)
        }
        #expect(!driver.machine.isFinished)
        return windows
    }

    // MARK: - Agents

    static let noBoard = Machine.Failure(.agentsUnavailable, "no board within 10 s")

    @Test("watching with nothing attached, a connection waits 10 s for its first board, then ends")
    func firstBoardWait() {
        var driver = Driver { settings in
            settings.attach = nil
            settings.watchAgents = true
            settings.boardWait = (10, Self.noBoard)
        }
        let id = driver.connect()
        #expect(Driver.sent(driver.log) == [.control(.agents(watch: true))])
        #expect(Driver.finish(driver.run(until: 1009.999)) == nil)
        #expect(Driver.finish(driver.run(until: 1010)) == .failed(Self.noBoard))
        _ = id
    }

    @Test("a board in time ends the wait, and is told whole")
    func boardInTime() {
        var driver = Driver { settings in
            settings.attach = nil
            settings.watchAgents = true
            settings.boardWait = (10, Self.noBoard)
        }
        let id = driver.connect()
        driver.advance(4)
        let board = AgentsComputer.board([AgentsComputer.agent("w1:p1", name: "claude", .blocked)])
        var sequence: UInt32 = 1
        let messages = AgentBoardMessage.full(board, sequence: &sequence).map { ChannelMessage.bytes(of: $0) }
        #expect(Driver.events(driver.computer(id, messages)) == [.agents(board)])
        #expect(Driver.finish(driver.advance(20)) == nil)
    }

    @Test("opening an agent ends the wait and attaches it on the same connection")
    func openEndsBoardWait() {
        var driver = Driver { settings in
            settings.attach = nil
            settings.watchAgents = true
            settings.boardWait = (10, Self.noBoard)
        }
        _ = driver.connect()
        driver.advance(1)
        let opened = driver.handle(.open(.agent(AgentKey(session: "default", pane: "w1:p2"))))
        #expect(
            Driver.sessionSent(opened) == [
                .openAgent(stream: 1, session: "default", pane: "w1:p2", cols: 80, rows: 24, window: Self.window)
            ])
        #expect(Driver.finish(driver.advance(20)) == nil)
    }

    @Test("a board out of order ends the session: the computer broke the board")
    func brokenBoard() {
        var driver = Driver { settings in
            settings.attach = nil
            settings.watchAgents = true
        }
        let id = driver.connect()
        let changes = AgentBoardMessage(sequence: 1, kind: .changes, omitted: 1)
        let end = driver.computer(id, [ChannelMessage.bytes(of: changes)])
        #expect(
            Driver.finish(end)
                == .failed(
                    .init(
                        .protocolViolation,
                        "the computer broke the agents board: agents changes came before a whole board")))
    }

    // MARK: - The network and the home probe

    @Test("the network moving away from under the connection races at once and drops the dead socket")
    func networkChangeRaces() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        let gone = Driver.change("this device's address 100.64.3.2 went away", dead: true)
        let change = driver.handle(.networkChanged(gone, stale: []))
        #expect(Driver.attempts(in: change).count == 1)
        #expect(change.contains(.abandon(id)))
        #expect(Driver.events(change).isEmpty, "the race decides")
        let moved = driver.arrive(change)
        #expect(
            Driver.events(moved) == [
                .moved(to: Driver.relay, because: .networkChanged(gone.description)), .connected(via: Driver.relay),
            ])
    }

    @Test("a network change whose race fails shows why and retries at once")
    func networkChangeRaceFails() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        let gone = Driver.change("no way to 100.64.0.1 any more (Network is unreachable)", dead: true)
        let race = Driver.attempts(in: driver.handle(.networkChanged(gone, stale: [])))[0].id
        let failed = driver.handle(.attemptEnded(race, .failure(.unavailable("Network is unreachable"))))
        #expect(Driver.events(failed) == [.reconnecting(attempt: 1, reason: gone.description)])
        #expect(Driver.attempts(in: failed).count == 1)
    }

    @Test("a better way beside a live connection races without dropping the old one; no change is nothing")
    func betterWayRaces() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        #expect(driver.handle(.networkChanged(nil, stale: [])).isEmpty)
        let better = Driver.change("the way to 100.64.0.1 now leaves from 100.64.9.9, not 100.64.3.2", dead: false)
        let change = driver.handle(.networkChanged(better, stale: []))
        #expect(Driver.attempts(in: change).count == 1)
        #expect(!change.contains(.abandon(id)))
        let moved = driver.arrive(change)
        #expect(moved.first == .abandon(id))
    }

    @Test("news of the network while waiting between attempts ends the wait")
    func networkNewsCutsTheWait() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.ended(id, .unavailable("reset")))
        #expect(driver.machine.nextWake == driver.now + 0.5)
        #expect(Driver.attempts(in: driver.handle(.networkChanged(nil, stale: []))).count == 1)
    }

    @Test(
        "issue 41's outlier: a race whose connect left from ::1 between Wi-Fi's addresses going and its link going down is called off at the next news, not waited for until its 10 s limit"
    )
    func staleRaceIsCalledOff() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        let t0 = driver.now
        // News 1: Wi-Fi's address is gone. A race starts (its connect leaves from ::1, as the
        // kernel picks then), the dead connection is abandoned, the drop waits for the race.
        let gone = Driver.change("this device's address fd92::1:2 went away", dead: true)
        let first = driver.handle(.networkChanged(gone, stale: []))
        let race = Driver.attempts(in: first)[0].id
        #expect(first.contains(.abandon(id)))
        // News 2, 1.7 ms later: Wi-Fi's link is down. The race has no connected socket: called
        // off, and the drop is retried at once (the road had been up 2 s).
        driver.now = t0 + 0.0017
        let second = driver.handle(.networkChanged(nil, stale: [race]))
        #expect(second.contains(.cancel(race)))
        #expect(Driver.events(second) == [.reconnecting(attempt: 1, reason: gone.description)])
        let retry = Driver.attempts(in: second)[0].id
        // It finds no route yet: the backoff's next step.
        driver.now = t0 + 0.002
        let unreachable = driver.handle(.attemptEnded(retry, .failure(.unavailable("Network is unreachable"))))
        #expect(Driver.events(unreachable) == [.reconnecting(attempt: 2, reason: "Network is unreachable")])
        // News 3 and 4: cellular's address, then its default route. Each cuts the wait short.
        driver.now = t0 + 0.009
        let cellular = Driver.attempts(in: driver.handle(.networkChanged(nil, stale: [])))[0].id
        driver.now = t0 + 0.010
        driver.handle(.attemptEnded(cellular, .failure(.unavailable("Network is unreachable"))))
        driver.now = t0 + 0.019
        let routed = Driver.attempts(in: driver.handle(.networkChanged(nil, stale: [])))[0].id
        // Seven round trips at 150 ms later the new connection is up and the session resumes.
        driver.now = t0 + 1.07
        let up = driver.handle(.attemptEnded(routed, .success(.init(road: Driver.relay, registeredNow: false))))
        #expect(up.first == .adopt(routed))
        #expect(
            Driver.sessionSent(up) == [
                .resume(stream: 2, token: Driver.token, received: 0, cols: 80, rows: 24, window: Self.window)
            ])
        // The called-off race, when its connect gives up 10 s in, changes nothing.
        driver.now = t0 + 10
        #expect(driver.handle(.attemptEnded(race, .failure(.unavailable("Connection timed out")))).isEmpty)
    }

    @Test("news that leaves a race standing (its socket connected and carried) does not call it off")
    func standingRaceIsWaitedFor() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(3)
        let gone = Driver.change("this device's address fd92::1:2 went away", dead: true)
        let race = Driver.attempts(in: driver.handle(.networkChanged(gone, stale: [])))[0].id
        let news = driver.handle(.networkChanged(nil, stale: []))
        #expect(news.isEmpty, "the race decides")
        let moved = driver.handle(.attemptEnded(race, .success(.init(road: Driver.relay, registeredNow: false))))
        #expect(Driver.events(moved).first == .moved(to: Driver.relay, because: .networkChanged(gone.description)))
    }

    @Test("an attempt the news started is free: failing, it waits on until the step it cut short, the budget untouched")
    func newsAttemptsAreFree() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        driver.advance(1)
        driver.handle(.ended(id, .unavailable("reset")))
        let until = driver.now + 0.5
        #expect(driver.machine.nextWake == until)
        for _ in 0..<30 {
            let free = Driver.attempts(in: driver.handle(.networkChanged(nil, stale: [])))
            #expect(free.count == 1)
            let failed = driver.handle(.attemptEnded(free[0].id, .failure(.unavailable("Network is unreachable"))))
            #expect(Driver.events(failed).isEmpty, "no step of the ladder taken")
            #expect(driver.machine.nextWake == until)
        }
        let counted = Driver.attempts(in: driver.run(until: until))
        #expect(counted.count == 1)
        let next = driver.handle(.attemptEnded(counted[0].id, .failure(.unavailable("refused"))))
        #expect(Driver.events(next) == [.reconnecting(attempt: 2, reason: "refused")], "the ladder's second step")
    }

    @Test("a connect under way that the news left on a gone path is made again at once")
    func staleConnectIsMadeAgain() {
        var driver = Driver()
        let first = Driver.attempts(in: driver.handle(.start))[0].id
        let news = driver.handle(.networkChanged(nil, stale: [first]))
        #expect(news.first == .cancel(first))
        let again = Driver.attempts(in: news)
        #expect(again.count == 1)
        #expect(driver.handle(.attemptEnded(first, .failure(.unavailable("called off")))).isEmpty)
        let up = driver.handle(.attemptEnded(again[0].id, .success(.init(road: Driver.relay, registeredNow: false))))
        #expect(up.first == .adopt(again[0].id))
    }

    @Test("over the relay the home addresses are tried every 5 s; one that answers takes the session over")
    func homeProbe() {
        var driver = Driver { $0.homeProbeInterval = 5 }
        let id = driver.connect()
        driver.started(on: id)
        let probes = { (actions: [Machine.Action]) in Driver.attempts(in: actions).filter(\.attempt.homeOnly) }
        #expect(probes(driver.run(until: 1004.999)).isEmpty)
        let first = probes(driver.run(until: 1005))
        #expect(first.map(\.attempt) == [.init(homeFirst: true, home: [Driver.homeAddress], homeOnly: true)])
        driver.handle(.attemptEnded(first[0].id, .failure(.unavailable("no home address answered"))))
        #expect(probes(driver.run(until: 1009.999)).isEmpty)
        let second = probes(driver.run(until: 1010))
        let moved = driver.handle(.attemptEnded(second[0].id, .success(.init(road: Driver.home, registeredNow: false))))
        #expect(Array(moved.prefix(2)) == [.close(id), .adopt(second[0].id)])
        #expect(Driver.events(moved) == [.moved(to: Driver.home, because: .homeIsBack), .connected(via: Driver.home)])
        #expect(probes(driver.advance(30)).isEmpty, "no probe from home")
    }

    @Test("the computer's new home addresses are the ones later attempts try")
    func homeAddressesFollowTheComputer() throws {
        var driver = Driver()
        let id = driver.connect()
        let moved = try HomeAddress(parsing: "169.254.3.1:4610")
        #expect(Driver.events(driver.computer(id, [CompanionMessage.home([moved]).bytes])) == [.homeAddresses([moved])])
        driver.advance(3)
        let drop = driver.handle(.ended(id, .unavailable("reset")))
        #expect(Driver.attempts(in: drop).map(\.attempt.home) == [[moved]])
    }

    // MARK: - The end

    @Test("cancel tells the computer to hang up the session, closes the connection and finishes")
    func cancel() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        let end = driver.handle(.stop(.cancelled))
        #expect(end == [.send(SessionMessage.close(stream: 1).bytes), .close(id), .finish(.cancelled)])
        #expect(driver.machine.nextWake == nil)
        #expect(
            driver.handle(.attemptEnded(.init(value: 99), .success(.init(road: Driver.relay, registeredNow: false))))
                == [.close(.init(value: 99))], "whatever comes up after the end is closed")
    }

    @Test("an exit is answered with close, and ends the session with its status")
    func exit() {
        var driver = Driver()
        let id = driver.connect()
        driver.started(on: id)
        let end = driver.computer(id, [SessionMessage.exit(stream: 1, end: 0, status: 3, signal: nil).bytes])
        #expect(
            end == [.send(SessionMessage.close(stream: 1).bytes), .close(id), .finish(.exited(status: 3, signal: nil))])
    }

    @Test("a message that breaks the channel's rule ends the session, saying what came")
    func brokenChannelRule() {
        var driver = Driver()
        let id = driver.connect()
        let end = driver.computer(id, [[0x00, 0x01]])
        guard case .failed(let failure) = Driver.finish(end) else {
            Issue.record("not failed: \(end)")
            return
        }
        #expect(failure.kind == .protocolViolation)
        #expect(failure.message.hasPrefix("the computer sent a message starting with byte 0x00"))
    }

    @Test("output goes out as writes in order; the credit follows what was shown, every quarter window")
    func outputAndCredit() {
        var driver = Driver { $0.window = 64 * 1024 }
        let id = driver.connect(over: Driver.home)
        driver.started(on: id, window: 64 * 1024)
        let data = [UInt8](repeating: 0x41, count: 16 * 1024)
        let out = driver.computer(id, [SessionMessage.output(stream: 1, offset: 0, data: data).bytes])
        #expect(out == [.write(data)])
        let shown = driver.handle(.shown(data.count))
        #expect(Driver.sessionSent(shown) == [.credit(stream: 1, consumed: 16 * 1024)])
    }
}
