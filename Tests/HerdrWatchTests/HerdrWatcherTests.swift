import HerdrAgents
import Testing

@testable import HerdrWatch

/// The watcher's state machine with an injected clock: what it asks herdr, what it makes of the
/// answers, and the board that follows.
@Suite struct HerdrWatcherTests {
    typealias Action = HerdrWatcher.Action

    static let defaultSocket = "/home/u/.config/herdr/herdr.sock"
    static let workSocket = "/home/u/.config/herdr/sessions/work/herdr.sock"

    /// The watcher and its clock.
    struct Driver {
        var watcher: HerdrWatcher
        var now = HerdrWatcher.Instant(monotonic: 1000, unix: 1_800_000_000)
        var log: [String] = []

        init(settings: HerdrWatcher.Settings = HerdrWatcher.Settings()) {
            watcher = HerdrWatcher(settings: settings)
        }

        mutating func advance(_ seconds: Double) -> [Action] {
            now.monotonic += seconds
            now.unix += Int64(seconds.rounded(.up))
            return record(watcher.tick(now: now))
        }

        /// Runs the clock to the watcher's next deadline.
        mutating func advanceToDeadline() -> [Action] {
            guard let deadline = watcher.nextDeadline else { return [] }
            return advance(max(0, deadline - now.monotonic))
        }

        /// Runs the clock from deadline to deadline until `wanted` is among the actions, the
        /// directory's look answered on the way with the last scan (bounded).
        mutating func advance(until wanted: ([Action]) -> Bool) -> [Action] {
            for _ in 0..<100 {
                var actions = advanceToDeadline()
                if actions.contains(.scan), let lastScan { actions += scanned(lastScan) }
                if wanted(actions) { return actions }
            }
            return []
        }

        mutating func start() -> [Action] { record(watcher.setDemand(true, now: now)) }
        var lastScan: HerdrScan?
        mutating func scanned(_ scan: HerdrScan) -> [Action] {
            lastScan = scan
            return record(watcher.scanned(scan, now: now))
        }
        mutating func answer(_ id: Int, _ answer: HerdrProtocol.Answer) -> [Action] {
            record(watcher.answered(id, .success(answer), now: now))
        }
        mutating func fail(_ id: Int, _ failure: HerdrRequestFailure) -> [Action] {
            record(watcher.answered(id, .failure(failure), now: now))
        }
        mutating func subscription(_ id: Int, _ event: HerdrWatcher.SubscriptionEvent) -> [Action] {
            record(watcher.subscription(id, event, now: now))
        }

        private mutating func record(_ actions: [Action]) -> [Action] {
            for case .log(let line) in actions { log.append(line) }
            return actions
        }

        /// Starts, scans `scan`, and answers every ping and list with `agents` until the
        /// session's subscription is up: the steady state. The subscription's id.
        mutating func ready(
            _ agents: [HerdrAgentInfo], scan: HerdrScan = HerdrWatcherTests.scan(), session: String = "default"
        ) throws -> Int {
            _ = start()
            var actions = scanned(scan)
            var subscription: Int?
            // Bounded: ping, list, subscribe, started, list.
            for _ in 0..<8 {
                guard let action = actions.first(where: { $0.isWork }) else { break }
                switch action {
                case .request(let id, _, .ping): actions = answer(id, .pong(protocol: 20))
                case .request(let id, _, .agentList): actions = answer(id, .agents(agents, unread: 0))
                case .subscribe(let id, _, _):
                    subscription = id
                    actions = self.subscription(id, .started)
                default: actions = []
                }
            }
            return try #require(subscription)
        }
    }

    static func scan(_ names: [String] = [], defaultFile: HerdrScan.FileIdentity? = file(1)) -> HerdrScan {
        var entries = [HerdrScan.Entry(name: "default", isDefault: true, socket: defaultSocket, file: defaultFile)]
        for name in names {
            entries.append(
                HerdrScan.Entry(
                    name: name, isDefault: false, socket: "/home/u/.config/herdr/sessions/\(name)/herdr.sock",
                    file: file(100 + UInt64(entries.count))))
        }
        return HerdrScan(herdr: .ready, sessions: entries)
    }

    static func file(_ inode: UInt64) -> HerdrScan.FileIdentity { .init(device: 1, inode: inode, changed: 7) }

    static func agent(_ pane: String, _ status: HerdrAgentStatus = .idle, name: String? = nil) -> HerdrAgentInfo {
        HerdrAgentInfo(pane: pane, status: status, kind: "claude", name: name ?? "agent-\(pane)")
    }

    static func requests(_ actions: [Action]) -> [HerdrProtocol.Method] {
        actions.compactMap { if case .request(_, _, let method) = $0 { method } else { nil } }
    }

    static func requestID(_ actions: [Action], _ method: HerdrProtocol.Method) -> Int? {
        for case .request(let id, _, let asked) in actions where asked == method { return id }
        return nil
    }

    static func subscribed(_ actions: [Action]) -> (id: Int, panes: [String])? {
        for case .subscribe(let id, _, let panes) in actions { return (id, panes) }
        return nil
    }

    static func unsubscribed(_ actions: [Action]) -> [Int] {
        actions.compactMap { if case .unsubscribe(let id) = $0 { id } else { nil } }
    }

    // MARK: - Steady state

    @Test func aSessionIsPingedListedSubscribedAndListedAgainOnceTheSubscriptionStarted() throws {
        var driver = Driver()
        #expect(driver.start() == [.scan])
        let pinged = driver.scanned(Self.scan())
        let ping = try #require(Self.requestID(pinged, .ping))
        #expect(pinged.contains(.request(ping, socket: Self.defaultSocket, .ping)))
        #expect(!driver.watcher.isSettled)
        #expect(driver.watcher.board.sessions.first?.state == .unresponsive, "no answer yet")

        let listing = driver.answer(ping, .pong(protocol: 20))
        let list = try #require(Self.requestID(listing, .agentList))
        let agents = [Self.agent("w1:p2", .blocked), Self.agent("w1:p1", .working)]
        let subscribing = driver.answer(list, .agents(agents, unread: 0))
        let subscription = try #require(Self.subscribed(subscribing))
        #expect(subscription.panes == ["w1:p1", "w1:p2"])
        #expect(driver.watcher.isSettled)
        let board = driver.watcher.board
        #expect(board.herdr == .ready)
        #expect(board.sessions == [HerdrSessionInfo(name: "default", isDefault: true, state: .ready)])
        #expect(board.sorted.map(\.pane) == ["w1:p2", "w1:p1"], "blocked first")
        #expect(board.sorted.allSatisfy { $0.since == driver.now.unix })

        // What changed between the list and the subscription's start is read again.
        let started = driver.subscription(subscription.id, .started)
        #expect(Self.requests(started) == [.agentList])
        #expect(Self.unsubscribed(started).isEmpty)
        #expect(driver.log == ["herdr: ready", "herdr session default: ready"])
    }

    @Test func herdrIsAskedOnlyWhatChangesNothingThere() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1")])
        var methods = Set<String>()
        var actions = driver.subscription(subscription, .event(.agentDetected(pane: "w1:p3")))
        for _ in 0..<20 {
            actions += driver.advance(30)
            for case .request(let id, _, let method) in actions {
                methods.insert(method.rawValue)
                _ = driver.answer(id, method == .ping ? .pong(protocol: 20) : .agents([], unread: 0))
            }
            actions = []
        }
        #expect(methods.isSubset(of: ["ping", "agent.list"]))
    }

    @Test func aStatusChangeUpdatesTheAgentAndItsSinceWhileAListWithTheSameStatusKeepsIt() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1", .working)])
        let firstSeen = driver.now.unix
        _ = driver.advance(5)
        _ = driver.subscription(
            subscription, .event(.statusChanged(pane: "w1:p1", status: .blocked, kind: nil, title: "Approve?")))
        let changed = try #require(driver.watcher.board.agents[AgentKey(session: "default", pane: "w1:p1")])
        #expect(changed.status == .blocked)
        #expect(changed.title == "Approve?")
        #expect(changed.kind == "claude", "a kind the event does not name is kept")
        #expect(changed.since == firstSeen + 5)

        // The resync's list says the same: since stays.
        let resync = driver.advance(60)
        let list = try #require(Self.requestID(resync, .agentList))
        _ = driver.answer(list, .agents([Self.agent("w1:p1", .blocked)], unread: 0))
        #expect(driver.watcher.board.agents[changed.key]?.since == firstSeen + 5)
        // A list with another status: since is now.
        let next = try #require(Self.requestID(driver.advance(60), .agentList))
        _ = driver.answer(next, .agents([Self.agent("w1:p1", .idle)], unread: 0))
        #expect(driver.watcher.board.agents[changed.key]?.since == driver.now.unix)
    }

    /// A list's answer and the subscription's events come on connections (and threads) of their
    /// own: an event herdr pushed after it answered a list can be heard first. The answer is then
    /// older than the event and must not undo it (herdr-bench agents met this: an agent's change
    /// right after a device began to watch was lost until the next resync, a minute later).
    @Test func anEventHeardWhileAListIsUnderWayIsNotUndoneByTheListsOlderAnswer() throws {
        var driver = Driver()
        _ = driver.start()
        let ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        let first = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        let subscription = try #require(
            Self.subscribed(driver.answer(first, .agents([Self.agent("w1:p1"), Self.agent("w1:p2")], unread: 0))))
        // Started: a list for what changed meanwhile goes out.
        let relist = try #require(Self.requestID(driver.subscription(subscription.id, .started), .agentList))
        // herdr answered it (both idle), then w1:p1 blocked; the event is heard before the answer.
        _ = driver.advance(0.01)
        _ = driver.subscription(
            subscription.id, .event(.statusChanged(pane: "w1:p1", status: .blocked, kind: nil, title: "Approve?")))
        let heardAt = driver.now.unix
        _ = driver.advance(0.01)
        _ = driver.answer(relist, .agents([Self.agent("w1:p1", .idle), Self.agent("w1:p2")], unread: 0))
        let blocked = try #require(driver.watcher.board.agents[AgentKey(session: "default", pane: "w1:p1")])
        #expect(blocked.status == .blocked, "the older answer does not undo the event")
        #expect(blocked.title == "Approve?")
        #expect(blocked.since == heardAt)
        #expect(driver.watcher.board.agents[AgentKey(session: "default", pane: "w1:p2")]?.status == .idle)

        // A later list with no event under way is herdr's word again.
        let resync = try #require(Self.requestID(driver.advance(60), .agentList))
        _ = driver.answer(resync, .agents([Self.agent("w1:p1", .done), Self.agent("w1:p2")], unread: 0))
        #expect(driver.watcher.board.agents[blocked.key]?.status == .done)
    }

    @Test func anEventForAPaneItDoesNotKnowIsReadFromAList() throws {
        var driver = Driver()
        let subscription = try driver.ready([])
        _ = driver.subscription(
            subscription, .event(.statusChanged(pane: "w2:p1", status: .blocked, kind: nil, title: nil)))
        #expect(driver.watcher.board.agents.isEmpty)
        let list = try #require(Self.requestID(driver.advanceToDeadline(), .agentList))
        _ = driver.answer(list, .agents([Self.agent("w2:p1", .blocked)], unread: 0))
        #expect(driver.watcher.board.agents.count == 1)
    }

    // MARK: - Panes and subscriptions in step

    @Test func panesComingAndGoingKeepTheStatusSubscriptionsInStep() throws {
        var driver = Driver()
        let first = try driver.ready([Self.agent("w1:p1")])
        // A burst of lifecycle events costs one list after they settle.
        var actions = driver.subscription(first, .event(.paneCreated(pane: "w1:p2")))
        actions += driver.subscription(first, .event(.agentDetected(pane: "w1:p2")))
        actions += driver.subscription(first, .event(.paneCreated(pane: "w1:p3")))
        actions += driver.subscription(first, .event(.agentDetected(pane: "w1:p3")))
        #expect(actions.isEmpty)
        let settled = driver.advanceToDeadline()
        #expect(Self.requests(settled) == [.agentList])
        let list = try #require(Self.requestID(settled, .agentList))
        let listed = driver.answer(
            list, .agents([Self.agent("w1:p1"), Self.agent("w1:p2"), Self.agent("w1:p3", .blocked)], unread: 0))
        let second = try #require(Self.subscribed(listed))
        #expect(second.panes == ["w1:p1", "w1:p2", "w1:p3"])
        #expect(Self.unsubscribed(listed).isEmpty, "the old subscription stays until the new one started")
        #expect(driver.watcher.board.agents.count == 3)

        // Once the new one started, the old goes, and a list covers the gap between them.
        let started = driver.subscription(second.id, .started)
        #expect(Self.unsubscribed(started) == [first])
        let gap = try #require(Self.requestID(started, .agentList))
        #expect(
            driver.answer(gap, .agents([Self.agent("w1:p1"), Self.agent("w1:p2"), Self.agent("w1:p3")], unread: 0))
                .isEmpty)
        // An event of the old subscription after it was replaced is not taken.
        #expect(driver.subscription(first, .event(.paneClosed(pane: "w1:p1"))).isEmpty)
        #expect(driver.watcher.board.agents.count == 3)

        // A pane closes: its agent leaves the board at once, its subscription after the settle.
        _ = driver.subscription(second.id, .event(.paneClosed(pane: "w1:p2")))
        #expect(driver.watcher.board.agents.keys.map(\.pane).sorted() == ["w1:p1", "w1:p3"])
        let resubscribed = driver.advanceToDeadline()
        let third = try #require(Self.subscribed(resubscribed))
        #expect(third.panes == ["w1:p1", "w1:p3"])
        let replaced = driver.subscription(third.id, .started)
        #expect(Self.unsubscribed(replaced) == [second.id])
    }

    @Test func aPaneGoneBeforeItsSubscriptionIsListedAgainWithBackoffNotCalledFailing() throws {
        var driver = Driver()
        let first = try driver.ready([Self.agent("w1:p1")])
        _ = driver.subscription(first, .event(.agentDetected(pane: "w1:p2")))
        let list = try #require(Self.requestID(driver.advanceToDeadline(), .agentList))
        let replacing = try #require(
            Self.subscribed(driver.answer(list, .agents([Self.agent("w1:p1"), Self.agent("w1:p2")], unread: 0))))
        let refused = driver.subscription(
            replacing.id, .ended(HerdrRequestFailure(.herdrError(code: "not_found"), "pane not found")))
        #expect(refused.isEmpty)
        #expect(driver.watcher.board.sessions.first?.state == .ready)
        // Every refusal in a row waits longer for the next list (1 s, 2 s, 4 s…).
        var waits: [Double] = []
        for _ in 0..<4 {
            let before = driver.now.monotonic
            let again = driver.advance { HerdrWatcherTests.requestID($0, .agentList) != nil }
            waits.append(driver.now.monotonic - before)
            let id = try #require(Self.requestID(again, .agentList))
            let sub = try #require(
                Self.subscribed(driver.answer(id, .agents([Self.agent("w1:p1"), Self.agent("w1:p2")], unread: 0))))
            _ = driver.subscription(
                sub.id, .ended(HerdrRequestFailure(.herdrError(code: "not_found"), "pane not found")))
        }
        #expect(waits == [1, 2, 4, 8])
    }

    // MARK: - herdr restarting

    @Test func herdrRestartingIsReadAgainFromAFreshList() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1", .blocked)])
        _ = driver.advance(6)
        _ = driver.subscription(subscription, .event(.other("tab.created")))
        #expect(Self.requests(driver.advance(6)).isEmpty)
        // The subscription's connection ends: herdr went away. It is looked at again at once.
        let ended = driver.subscription(subscription, .ended(HerdrRequestFailure(.malformed, "closed the connection")))
        let ping = try #require(Self.requestID(ended, .ping))
        let down = driver.fail(
            ping, HerdrRequestFailure(.notRunning, "herdr is not running (nothing listens on its socket)"))
        #expect(
            down.contains(
                .log("herdr session default: not-running (herdr is not running (nothing listens on its socket))")))
        #expect(driver.watcher.board.sessions.first?.state == .notRunning)
        #expect(driver.watcher.board.agents.isEmpty)

        // It is back with a new socket: the next scan notices, and the session is read afresh.
        let back = driver.scanned(Self.scan(defaultFile: Self.file(2)))
        let ping2 = try #require(Self.requestID(back, .ping))
        let list = try #require(Self.requestID(driver.answer(ping2, .pong(protocol: 20)), .agentList))
        let resubscribe = driver.answer(list, .agents([Self.agent("w1:p1", .working)], unread: 0))
        #expect(Self.subscribed(resubscribe)?.panes == ["w1:p1"])
        #expect(driver.watcher.board.agents.first?.value.status == .working)
    }

    @Test func aSocketMadeAgainWhileSubscribedClosesTheOldSubscriptionAndReadsAfresh() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1")])
        let rescanned = driver.scanned(Self.scan(defaultFile: Self.file(9)))
        #expect(Self.unsubscribed(rescanned) == [subscription])
        #expect(Self.requests(rescanned) == [.ping])
    }

    @Test func aSubscriptionThatEndsSoonAfterItsStartIsRetriedWithBackoff() throws {
        var driver = Driver()
        var subscription = try driver.ready([Self.agent("w1:p1")])
        var waits: [Double] = []
        for _ in 0..<4 {
            let ended = driver.subscription(
                subscription, .ended(HerdrRequestFailure(.malformed, "closed the connection")))
            #expect(Self.requests(ended).isEmpty, "not at once")
            let before = driver.now.monotonic
            var actions = driver.advance { HerdrWatcherTests.requestID($0, .ping) != nil }
            waits.append(driver.now.monotonic - before)
            let ping = try #require(Self.requestID(actions, .ping))
            actions = driver.answer(ping, .pong(protocol: 20))
            let list = try #require(Self.requestID(actions, .agentList))
            actions = driver.answer(list, .agents([Self.agent("w1:p1")], unread: 0))
            subscription = try #require(Self.subscribed(actions)).id
            let gap = try #require(Self.requestID(driver.subscription(subscription, .started), .agentList))
            _ = driver.answer(gap, .agents([Self.agent("w1:p1")], unread: 0))
        }
        #expect(waits == [1, 2, 4, 8])
    }

    // MARK: - Sessions coming and going

    @Test func sessionsAppearingAndGoingFollowTheScans() throws {
        var driver = Driver()
        _ = try driver.ready([Self.agent("w1:p1")])
        let appeared = driver.scanned(Self.scan(["work"]))
        let ping = try #require(Self.requestID(appeared, .ping))
        #expect(appeared.contains(.request(ping, socket: Self.workSocket, .ping)))
        #expect(!driver.watcher.isSettled)
        let list = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        let subscribed = driver.answer(list, .agents([Self.agent("w1:p1", .done)], unread: 0))
        let work = try #require(Self.subscribed(subscribed))
        #expect(driver.watcher.isSettled)
        #expect(driver.watcher.board.sessions.map(\.name) == ["default", "work"])
        #expect(driver.watcher.board.agents.count == 2, "w1:p1 in each session")

        let gone = driver.scanned(Self.scan())
        #expect(Self.unsubscribed(gone) == [work.id])
        #expect(driver.watcher.board.sessions.map(\.name) == ["default"])
        #expect(driver.watcher.board.agents.keys.map(\.session) == ["default"])
    }

    @Test func aSessionWithoutASocketIsNotRunningWithoutAskingAndIsReadWhenOneAppears() throws {
        var driver = Driver()
        _ = driver.start()
        let actions = driver.scanned(Self.scan(defaultFile: nil))
        #expect(Self.requests(actions).isEmpty)
        #expect(driver.watcher.isSettled)
        let session = try #require(driver.watcher.board.sessions.first)
        #expect(session.state == .notRunning)
        #expect(session.detail == "herdr is not running (its socket is not there)")
        #expect(Self.requests(driver.advance(60)).isEmpty, "only the scans look")
        #expect(Self.requests(driver.scanned(Self.scan())) == [.ping])
    }

    @Test func herdrNotInstalledOrUnreadableIsTheBoardsOwnState() {
        var driver = Driver()
        _ = driver.start()
        let missing = HerdrAvailability(.notInstalled, detail: "no herdr on PATH and no ~/.config/herdr")
        #expect(Self.requests(driver.scanned(HerdrScan(herdr: missing))).isEmpty)
        #expect(driver.watcher.board == AgentBoard(herdr: missing))
        #expect(driver.watcher.isSettled)
        #expect(driver.log == ["herdr: not-installed (no herdr on PATH and no ~/.config/herdr)"])
        // Looked at again at every scan, logged once.
        _ = driver.advance(2)
        _ = driver.scanned(HerdrScan(herdr: missing))
        #expect(driver.log.count == 1)
    }

    // MARK: - Hostile herdr

    @Test func aFrozenServerIsUnresponsiveAndRetriedWithBackoffLoggedOnce() throws {
        var driver = Driver()
        _ = driver.start()
        var ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        var waits: [Double] = []
        for _ in 0..<7 {
            _ = driver.fail(
                ping, HerdrRequestFailure(.timedOut, "accepted the connection and did not answer ping in time"))
            let session = try #require(driver.watcher.board.sessions.first)
            #expect(session.state == .unresponsive)
            #expect(session.detail == "accepted the connection and did not answer ping in time")
            #expect(driver.watcher.isSettled)
            let before = driver.now.monotonic
            let actions = driver.advance { HerdrWatcherTests.requestID($0, .ping) != nil }
            waits.append(driver.now.monotonic - before)
            ping = try #require(Self.requestID(actions, .ping))
        }
        #expect(waits == [1, 2, 4, 8, 16, 30, 30])
        #expect(driver.log.filter { $0.contains("unresponsive") }.count == 1)
    }

    @Test func garbageIsFailingAndAnOlderProtocolUnsupported() throws {
        var driver = Driver()
        _ = driver.start()
        let pings = driver.scanned(Self.scan(["old"]))
        let ping = try #require(Self.request(pings, socket: Self.defaultSocket))
        let oldPing = try #require(Self.request(pings, socket: "/home/u/.config/herdr/sessions/old/herdr.sock"))
        _ = driver.fail(ping, HerdrRequestFailure(.malformed, "answered ping with a line that is not a JSON object"))
        _ = driver.answer(oldPing, .pong(protocol: 12))
        let sessions = driver.watcher.board.sessions
        #expect(sessions[0].state == .failing)
        #expect(sessions[0].detail == "answered ping with a line that is not a JSON object")
        #expect(sessions[1].state == .unsupported)
        #expect(
            sessions[1].detail == "its herdr speaks protocol 12; herdr-host needs protocol 20 or later (update herdr)")
        #expect(driver.watcher.isSettled)
    }

    @Test func aSubscriptionHerdrDoesNotKnowIsUnsupported() throws {
        var driver = Driver()
        _ = driver.start()
        let ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        let list = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        let subscription = try #require(Self.subscribed(driver.answer(list, .agents([], unread: 0))))
        _ = driver.subscription(
            subscription.id,
            .ended(HerdrRequestFailure(.herdrError(code: "unknown_method"), "answered events.subscribe with the error"))
        )
        #expect(driver.watcher.board.sessions.first?.state == .unsupported)
    }

    @Test func aHugeListIsBoundedOnTheBoardAndInItsSubscriptions() throws {
        var settings = HerdrWatcher.Settings()
        settings.maximumSubscribedPanes = 100
        var driver = Driver(settings: settings)
        _ = driver.start()
        let ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        let list = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        let agents = (1...4096).map { Self.agent("w9:p\($0)", $0 % 50 == 0 ? .blocked : .idle) }
        let subscribed = try #require(Self.subscribed(driver.answer(list, .agents(agents, unread: 904))))
        #expect(subscribed.panes.count == 100)
        let board = driver.watcher.board
        #expect(board.agents.count == AgentBoard.maximumAgents)
        #expect(board.omitted == 4096 - AgentBoard.maximumAgents + 904)
        #expect(board.sorted.prefix(81).allSatisfy { $0.status == .blocked }, "the blocked ones are kept first")
    }

    @Test func aSubscriptionThatNeverStartsMakesTheSessionUnresponsive() throws {
        var driver = Driver()
        _ = driver.start()
        let ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        let list = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        let subscription = try #require(Self.subscribed(driver.answer(list, .agents([Self.agent("w1:p1")], unread: 0))))
        _ = driver.subscription(
            subscription.id,
            .ended(
                HerdrRequestFailure(.timedOut, "accepted the connection and did not answer events.subscribe in time")))
        #expect(driver.watcher.board.sessions.first?.state == .unresponsive)
        #expect(driver.watcher.board.agents.isEmpty, "agents of a session that is not ready are not shown")
    }

    @Test func aListThatTimesOutClosesTheSubscriptionUntilTheServerAnswersAgain() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1", .blocked)])
        let since = try #require(driver.watcher.board.agents.first?.value.since)
        let list = try #require(Self.requestID(driver.advance(60), .agentList))
        let failed = driver.fail(
            list, HerdrRequestFailure(.timedOut, "accepted the connection and did not answer agent.list in time"))
        #expect(Self.unsubscribed(failed) == [subscription])
        #expect(driver.watcher.board.agents.isEmpty)
        let ping = try #require(Self.requestID(driver.advanceToDeadline(), .ping))
        let relist = try #require(Self.requestID(driver.answer(ping, .pong(protocol: 20)), .agentList))
        _ = driver.answer(relist, .agents([Self.agent("w1:p1", .blocked)], unread: 0))
        #expect(driver.watcher.board.agents.first?.value.since == since, "a frozen server's agents keep their since")
    }

    // MARK: - Demand

    @Test func itStopsALingerAfterTheLastDemandAndStartsFreshAfterwards() throws {
        var settings = HerdrWatcher.Settings()
        settings.linger = 60
        var driver = Driver(settings: settings)
        let subscription = try driver.ready([Self.agent("w1:p1")])
        #expect(driver.watcher.setDemand(false, now: driver.now).isEmpty)
        _ = driver.advance(59)
        #expect(driver.watcher.isRunning)
        // Wanted again within the linger: nothing to do.
        #expect(driver.watcher.setDemand(true, now: driver.now).isEmpty)
        _ = driver.watcher.setDemand(false, now: driver.now)
        var stopped: [Action] = []
        while driver.watcher.isRunning { stopped += driver.advanceToDeadline() }
        #expect(Self.unsubscribed(stopped).contains(subscription))
        #expect(driver.watcher.nextDeadline == nil)
        #expect(driver.watcher.board.agents.isEmpty)
        #expect(!driver.watcher.isSettled)
        // Answers to what was asked before the stop are not taken.
        #expect(driver.answer(1, .pong(protocol: 20)).isEmpty)
        #expect(driver.start() == [.scan])
    }

    @Test func answersToRequestsItNoLongerWaitsForAreIgnored() throws {
        var driver = Driver()
        _ = driver.start()
        let ping = try #require(Self.requestID(driver.scanned(Self.scan()), .ping))
        // The socket was made again meanwhile: a new ping, and the first one's answer is stale.
        let again = try #require(Self.requestID(driver.scanned(Self.scan(defaultFile: Self.file(5))), .ping))
        #expect(driver.answer(ping, .pong(protocol: 20)).isEmpty)
        #expect(Self.requests(driver.answer(again, .pong(protocol: 20))) == [.agentList])
    }

    static func request(_ actions: [Action], socket: String) -> Int? {
        for case .request(let id, let asked, _) in actions where asked == socket { return id }
        return nil
    }
}

extension HerdrWatcher.Action {
    /// A request or a subscription: what the test answers.
    var isWork: Bool {
        switch self {
        case .request, .subscribe: true
        default: false
        }
    }
}

extension HerdrWatcherTests {
    @Test func aQuietSessionIsPingedAndOneThatStoppedAnsweringIsToldWithinTheLivenessInterval() throws {
        var driver = Driver()
        let subscription = try driver.ready([Self.agent("w1:p1")])
        // Events count as hearing from it: no ping while they come.
        for _ in 0..<3 {
            #expect(Self.requests(driver.advance(6)).isEmpty)
            _ = driver.subscription(
                subscription, .event(.statusChanged(pane: "w1:p1", status: .working, kind: nil, title: nil)))
        }
        // Ten quiet seconds: a ping, whose pong asks for nothing more.
        let check = driver.advance { HerdrWatcherTests.requestID($0, .ping) != nil }
        let ping = try #require(Self.requestID(check, .ping))
        #expect(driver.answer(ping, .pong(protocol: 20)).isEmpty)
        // The next one is not answered in time: the session is unresponsive, its subscription closed.
        let next = try #require(
            Self.requestID(driver.advance { HerdrWatcherTests.requestID($0, .ping) != nil }, .ping))
        let frozen = driver.fail(
            next, HerdrRequestFailure(.timedOut, "accepted the connection and did not answer ping in time"))
        #expect(Self.unsubscribed(frozen) == [subscription])
        #expect(driver.watcher.board.sessions.first?.state == .unresponsive)
        #expect(driver.watcher.board.agents.isEmpty)
    }
}
