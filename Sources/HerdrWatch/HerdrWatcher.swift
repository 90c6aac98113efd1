import HerdrAgents

/// What herdr-host knows of its user's herdr, as a pure state machine (the time passed in, no
/// I/O): which sessions there are (from `HerdrScan`s), and for each whether its server answers
/// (`ping`, an older protocol being `unsupported`), its agents (`agent.list`) and their status
/// changes (`events.subscribe` on a connection of its own: herdr's pane lifecycle and one
/// `pane.agent_status_changed` subscription per agent's pane, renewed as panes come and go).
/// The shell (`HerdrWatch`) carries out its actions and feeds it what came back.
///
/// It asks herdr only what changes nothing there. Whatever a session's server does (nothing, an
/// error, garbage, a list past every bound, a restart) becomes that session's state on the board
/// with a detail in words, and failures are retried with backoff. It runs while something wants
/// the board (`setDemand`) and `linger` seconds more.
public struct HerdrWatcher: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Seconds a request (connect, ask, answer) or a subscription's start may take.
        public var requestTimeout: Double = 2
        /// Seconds between two looks at herdr's directory (sessions coming and going, a socket
        /// made again by a restart).
        public var rescanInterval: Double = 2
        /// Seconds between two lists of a session whose subscription is up: what herdr pushes no
        /// event for (a name or a title set) shows within this.
        public var resyncInterval: Double = 60
        /// Seconds a ready session may stay silent (no event, no answer) before a `ping` checks
        /// that it still answers: a frozen herdr is told within this and `requestTimeout`.
        public var livenessInterval: Double = 10
        /// Seconds a pane's lifecycle event waits for others before the list or the
        /// resubscription it calls for, so a burst of panes costs one of each.
        public var settleDelay: Double = 0.2
        /// The first retry of a failed session, doubling up to `retryMaximum`.
        public var retryMinimum: Double = 1
        public var retryMaximum: Double = 30
        /// A subscription that lasted this long and ended is herdr going away (a restart): it is
        /// read again at once. One that ends sooner is retried with backoff.
        public var steadySubscription: Double = 10
        /// Seconds it runs on once nothing wants the board (a device coming back finds it warm).
        public var linger: Double = 60
        /// The protocol whose events this reads (the facts' protocol, 20); a server that says less
        /// is `unsupported`.
        public var minimumProtocol = 20
        /// At most this many panes' status subscriptions per session (the agents a person needs
        /// first); the others are kept current by the resync's lists.
        public var maximumSubscribedPanes = 1024

        public init() {}
    }

    /// Now, on both clocks: monotonic seconds for deadlines, Unix seconds for `since`.
    public struct Instant: Sendable, Hashable {
        public var monotonic: Double
        public var unix: Int64

        public init(monotonic: Double, unix: Int64) {
            self.monotonic = monotonic
            self.unix = unix
        }
    }

    /// A request's or a subscription's number, unique for the watcher's life.
    public typealias RequestID = Int

    public enum Action: Sendable, Hashable {
        /// Read herdr's directory; answer `scanned`.
        case scan
        /// Ask the server at `socket`; answer `answered` (within `requestTimeout`).
        case request(RequestID, socket: String, HerdrProtocol.Method)
        /// Open a subscription connection to `socket` for herdr's pane lifecycle and these panes'
        /// status; report on it with `subscription`.
        case subscribe(RequestID, socket: String, panes: [String])
        /// Close that subscription's connection; nothing more is wanted of it.
        case unsubscribe(RequestID)
        /// One line for the log: herdr's state, or a session's, changed.
        case log(String)
    }

    /// What a subscription's connection brought.
    public enum SubscriptionEvent: Sendable, Hashable {
        /// herdr answered `subscription_started`.
        case started
        case event(HerdrEvent)
        /// The connection ended, or never started (`requestTimeout`), and why.
        case ended(HerdrRequestFailure)
    }

    /// An agent as the board shows it, built once per list (its texts bounded then), its
    /// status and `since` (when this status was first seen) kept current by events.
    private typealias Tracked = HerdrAgent

    private struct Subscription: Sendable, Hashable {
        let id: RequestID
        let panes: [String]
        var startedAt: Double?
    }

    private enum Step: Sendable, Hashable {
        case idle
        /// The first look at its server (a fresh list follows the pong).
        case pinging(RequestID)
        /// A quiet ready session's check that it still answers.
        case checking(RequestID)
        case listing(RequestID)
    }

    private struct Session: Sendable {
        let name: String
        let isDefault: Bool
        var socket: String
        var file: HerdrScan.FileIdentity?
        /// Nil until its first look ended.
        var state: HerdrSessionInfo.State?
        var detail: String?
        /// Its agents were listed since its server was last reached.
        var listed = false
        var step = Step.idle
        var retryAt: Double?
        var failures = 0
        /// Subscriptions that ended early (or were refused) in a row.
        var subscriptionFailures = 0
        var agents: [String: Tracked] = [:]
        /// Entries of the last list that were not read.
        var unread = 0
        var subscription: Subscription?
        /// A subscription with another set of panes, starting: it replaces `subscription` once
        /// started, so no event falls between the two.
        var replacing: Subscription?
        /// A list is wanted then (events settling, or the resync).
        var listAt: Double?
        /// A list is wanted as soon as the one under way ends.
        var listAgain = false
        /// Events heard while a list was under way, in order: the list's answer comes on a
        /// connection of its own and may be older than they are, so they are applied again on
        /// top of it.
        var heardDuringList: [(event: HerdrEvent, at: Instant)] = []
        /// A new set of status subscriptions is wanted then.
        var subscribeAt: Double?
        /// When its server was last heard (an answer or an event).
        var heardAt: Double?

        init(_ entry: HerdrScan.Entry) {
            name = entry.name
            isDefault = entry.isDefault
            socket = entry.socket
            file = entry.file
        }

        var isReady: Bool { state == .ready && listed }
        var subscriptions: [Subscription] { [subscription, replacing].compactMap { $0 } }
    }

    public let settings: Settings
    /// Events kept per session while a list is under way; past it the list is asked again.
    static let maximumHeardDuringList = 4096
    public private(set) var isRunning = false
    private var wanted = false
    private var stopAt: Double?
    private var scanAt: Double?
    private var herdr: HerdrAvailability?
    private var sessions: [String: Session] = [:]
    /// The sessions' names in the scan's order (the default first).
    private var order: [String] = []
    private var nextID = 1
    /// What the log last said of herdr and of each session (kept across stops, so that watching
    /// again logs only what changed).
    private var loggedHerdr: HerdrAvailability?
    private var loggedSessions: [String: String] = [:]

    public init(settings: Settings = Settings()) { self.settings = settings }

    // MARK: - Inputs

    /// Whether anything wants the board now. Starting reads herdr's directory at once; stopping
    /// waits `linger` seconds first.
    public mutating func setDemand(_ wanted: Bool, now: Instant) -> [Action] {
        self.wanted = wanted
        guard wanted else {
            if isRunning, stopAt == nil { stopAt = now.monotonic + settings.linger }
            return []
        }
        stopAt = nil
        guard !isRunning else { return [] }
        isRunning = true
        scanAt = nil
        return [.scan]
    }

    /// What a look at herdr's directory found.
    public mutating func scanned(_ scan: HerdrScan, now: Instant) -> [Action] {
        guard isRunning else { return [] }
        scanAt = now.monotonic + settings.rescanInterval
        var actions: [Action] = []
        if herdr != scan.herdr {
            herdr = scan.herdr
            if loggedHerdr != scan.herdr {
                loggedHerdr = scan.herdr
                actions.append(.log("herdr: " + Self.describe(scan.herdr.state.rawValue, scan.herdr.detail)))
            }
        }
        let entries = scan.herdr.state == .ready ? scan.sessions : []
        let names = Set(entries.map(\.name))
        loggedSessions = loggedSessions.filter { names.contains($0.key) }
        for name in order where !names.contains(name) {
            if let gone = sessions.removeValue(forKey: name) {
                actions += gone.subscriptions.map { .unsubscribe($0.id) }
            }
        }
        order = entries.map(\.name)
        for entry in entries {
            guard var session = sessions[entry.name] else {
                var session = Session(entry)
                actions += look(&session, now: now)
                sessions[entry.name] = session
                continue
            }
            if session.socket != entry.socket || session.file != entry.file {
                // Its server went, came, or started again: what was known of it is stale.
                session.socket = entry.socket
                session.file = entry.file
                actions += closeSubscriptions(&session)
                session.failures = 0
                session.subscriptionFailures = 0
                actions += look(&session, now: now)
            }
            sessions[entry.name] = session
        }
        return actions
    }

    /// The answer to request `id` (or why there is none).
    public mutating func answered(
        _ id: RequestID, _ result: Result<HerdrProtocol.Answer, HerdrRequestFailure>, now: Instant
    ) -> [Action] {
        guard let name = sessionName(step: id), var session = sessions[name] else { return [] }
        defer { sessions[name] = session }
        let step = session.step
        session.step = .idle
        let answer: HerdrProtocol.Answer
        switch result {
        case .failure(let failure):
            return fail(&session, failure, now: now)
        case .success(let value):
            answer = value
        }
        switch (step, answer) {
        case (.pinging, .pong(let version)), (.checking, .pong(let version)):
            guard let version, version >= settings.minimumProtocol else {
                let said = version.map { "protocol \($0)" } ?? "no protocol"
                return fail(
                    &session,
                    HerdrRequestFailure(
                        .herdrError(code: "unsupported"),
                        "its herdr speaks \(said); herdr-host needs protocol \(settings.minimumProtocol) or later (update herdr)"
                    ), state: .unsupported, now: now)
            }
            session.heardAt = now.monotonic
            if case .checking = step { return afterRequest(&session, now: now) }
            return list(&session, now: now)
        case (.listing, .agents(let agents, let unread)):
            return listed(&session, agents, unread: unread, now: now)
        default:
            return fail(&session, HerdrRequestFailure(.malformed, "answered with something else than asked"), now: now)
        }
    }

    /// What subscription `id`'s connection brought.
    public mutating func subscription(_ id: RequestID, _ event: SubscriptionEvent, now: Instant) -> [Action] {
        guard
            let name = order.first(where: { sessions[$0]?.subscriptions.contains { $0.id == id } == true }),
            var session = sessions[name]
        else { return [] }
        defer { sessions[name] = session }
        session.heardAt = now.monotonic
        switch event {
        case .started:
            guard var replacing = session.replacing, replacing.id == id else { return [] }
            replacing.startedAt = now.monotonic
            var actions = session.subscription.map { [Action.unsubscribe($0.id)] } ?? []
            session.subscription = replacing
            session.replacing = nil
            // What changed while no subscription covered it.
            actions += list(&session, now: now)
            return actions
        case .event(let event):
            apply(event, to: &session, now: now)
            if case .listing = session.step {
                if session.heardDuringList.count < Self.maximumHeardDuringList {
                    session.heardDuringList.append((event, now))
                } else {
                    // Past the bound: another list, asked after all of these were heard.
                    session.heardDuringList = []
                    session.listAgain = true
                }
            }
            return []
        case .ended(let failure):
            return subscriptionEnded(id, failure, &session, now: now)
        }
    }

    /// Time passed: retries, lists and resubscriptions that are due, the next look at the
    /// directory, the end of the linger.
    public mutating func tick(now: Instant) -> [Action] {
        guard isRunning else { return [] }
        if let stopAt, now.monotonic >= stopAt { return stop() }
        var actions: [Action] = []
        if let scanAt, now.monotonic >= scanAt {
            self.scanAt = nil
            actions.append(.scan)
        }
        for name in order {
            guard var session = sessions[name] else { continue }
            if session.step == .idle, let retryAt = session.retryAt, now.monotonic >= retryAt {
                actions += look(&session, now: now)
            }
            // While its server is looked at again (a ping under way), what was due waits for it.
            if session.isReady, session.step == .idle, let listAt = session.listAt, now.monotonic >= listAt {
                actions += list(&session, now: now)
            }
            if session.isReady, session.step == .idle, !session.subscriptions.isEmpty,
                let subscribeAt = session.subscribeAt, now.monotonic >= subscribeAt
            {
                session.subscribeAt = nil
                actions += subscribeIfChanged(&session, now: now)
            }
            if session.isReady, session.step == .idle, let heardAt = session.heardAt,
                now.monotonic >= heardAt + settings.livenessInterval
            {
                let id = takeID()
                session.step = .checking(id)
                actions.append(.request(id, socket: session.socket, .ping))
            }
            sessions[name] = session
        }
        return actions
    }

    /// When `tick` has something to do next (monotonic seconds); nil while stopped.
    public var nextDeadline: Double? {
        guard isRunning else { return nil }
        var times = [stopAt, scanAt]
        // As `tick` sees them: what waits for a request under way is not due before its answer.
        for session in sessions.values where session.step == .idle {
            times.append(session.retryAt)
            if session.isReady { times += [session.listAt, session.heardAt.map { $0 + settings.livenessInterval }] }
            if session.isReady, !session.subscriptions.isEmpty { times.append(session.subscribeAt) }
        }
        return times.compactMap { $0 }.min()
    }

    // MARK: - What it knows

    /// Whether every session had its first look (the board says something true of each).
    public var isSettled: Bool {
        isRunning && herdr != nil && sessions.values.allSatisfy { $0.state != nil && ($0.state != .ready || $0.listed) }
    }

    /// The board: herdr's state, its sessions, and the agents of those that are ready, at most
    /// `AgentBoard.maximumAgents` (those a person needs first; the rest counted in `omitted`,
    /// with entries herdr listed that could not be read).
    public var board: AgentBoard {
        guard let herdr else {
            return AgentBoard(herdr: HerdrAvailability(.failing, detail: "herdr-host has not read herdr yet"))
        }
        guard herdr.state == .ready else { return AgentBoard(herdr: herdr) }
        var infos: [HerdrSessionInfo] = []
        var agents: [HerdrAgent] = []
        var unread = 0
        for name in order {
            guard let session = sessions[name] else { continue }
            if let state = session.state, state != .ready || session.listed {
                infos.append(
                    HerdrSessionInfo(
                        name: name, isDefault: session.isDefault, state: state,
                        detail: state == .ready ? nil : session.detail))
            } else {
                infos.append(
                    HerdrSessionInfo(
                        name: name, isDefault: session.isDefault, state: .unresponsive,
                        detail: "herdr-host is still reading it"))
            }
            guard session.isReady else { continue }
            unread += session.unread
            agents += session.agents.values
        }
        var board = AgentBoard(herdr: herdr, sessions: infos, agents: agents, omitted: unread)
        board.bound()
        return board
    }

    // MARK: - Steps

    /// Looks at a session's server: a ping, or, with no socket file, not running.
    private mutating func look(_ session: inout Session, now: Instant) -> [Action] {
        session.retryAt = nil
        guard session.file != nil else {
            return fail(
                &session, HerdrRequestFailure(.notRunning, "herdr is not running (its socket is not there)"),
                retry: false, now: now)
        }
        let id = takeID()
        session.step = .pinging(id)
        return [.request(id, socket: session.socket, .ping)]
    }

    private mutating func list(_ session: inout Session, now: Instant) -> [Action] {
        session.listAt = nil
        guard session.step == .idle else {
            session.listAgain = true
            return []
        }
        let id = takeID()
        session.step = .listing(id)
        session.heardDuringList = []
        return [.request(id, socket: session.socket, .agentList)]
    }

    private mutating func listed(
        _ session: inout Session, _ found: [HerdrAgentInfo], unread: Int, now: Instant
    ) -> [Action] {
        var agents: [String: Tracked] = [:]
        for info in found {
            let earlier = session.agents[info.pane]
            let since = earlier.flatMap { $0.status == info.status ? $0.since : nil } ?? now.unix
            agents[info.pane] = info.agent(session: session.name, since: since)
        }
        session.agents = agents
        // What herdr pushed while this answer was under way may be newer than it.
        for heard in session.heardDuringList { apply(heard.event, to: &session, now: heard.at) }
        session.heardDuringList = []
        session.unread = unread
        session.listed = true
        session.failures = 0
        var actions = setState(&session, .ready, detail: nil)
        session.heardAt = now.monotonic
        let resync = now.monotonic + settings.resyncInterval
        session.listAt = min(session.listAt ?? resync, resync)
        if session.listAgain {
            session.listAgain = false
            actions += list(&session, now: now)
        }
        if session.subscriptions.isEmpty {
            // Unless a subscription that ended early waits out its backoff (`retryAt`).
            if session.retryAt == nil { actions += subscribe(&session, now: now) }
        } else if session.subscribeAt == nil {
            actions += subscribeIfChanged(&session, now: now)
        }
        return actions
    }

    /// A check that the server answers ended well: a list that waited for it goes now.
    private mutating func afterRequest(_ session: inout Session, now: Instant) -> [Action] {
        guard session.listAgain else { return [] }
        session.listAgain = false
        return list(&session, now: now)
    }

    /// The panes whose status it subscribes to: every agent's, or past the bound those a person
    /// needs first; sorted, so that two sets compare.
    private func subscribedPanes(_ session: Session) -> [String] {
        var agents = Array(session.agents.values)
        if agents.count > settings.maximumSubscribedPanes {
            agents.sort(by: AgentBoard.listOrder)
            agents = Array(agents.prefix(settings.maximumSubscribedPanes))
        }
        return agents.map(\.pane).sorted()
    }

    private mutating func subscribeIfChanged(_ session: inout Session, now: Instant) -> [Action] {
        let current = (session.replacing ?? session.subscription)?.panes
        return current == subscribedPanes(session) ? [] : subscribe(&session, now: now)
    }

    /// A subscription for the panes as they are now, replacing whatever was starting.
    private mutating func subscribe(_ session: inout Session, now: Instant) -> [Action] {
        var actions: [Action] = []
        if let replacing = session.replacing { actions.append(.unsubscribe(replacing.id)) }
        let id = takeID()
        let panes = subscribedPanes(session)
        session.replacing = Subscription(id: id, panes: panes)
        actions.append(.subscribe(id, socket: session.socket, panes: panes))
        return actions
    }

    private mutating func subscriptionEnded(
        _ id: RequestID, _ failure: HerdrRequestFailure, _ session: inout Session, now: Instant
    ) -> [Action] {
        let ended = session.subscriptions.first { $0.id == id }
        if session.replacing?.id == id { session.replacing = nil } else { session.subscription = nil }
        if failure.isUnknownMethod {
            return fail(
                &session,
                HerdrRequestFailure(
                    .herdrError(code: "unsupported"),
                    "its herdr does not know events.subscribe (an older herdr; update herdr)"), state: .unsupported,
                now: now)
        }
        guard let startedAt = ended?.startedAt else {
            if case .herdrError(let code) = failure.kind, code == "not_found" {
                // A pane went between the list and the subscription: list again (with backoff,
                // so a server that lists panes it does not have cannot keep this busy; afresh
                // when the subscription in place has been steady).
                if let steadySince = session.subscription?.startedAt,
                    now.monotonic - steadySince >= settings.steadySubscription
                {
                    session.subscriptionFailures = 0
                }
                let delay = backoff(session.subscriptionFailures)
                session.subscriptionFailures += 1
                session.listAt = now.monotonic + delay
                return []
            }
            // It never started: the server is failing or frozen.
            return fail(&session, failure, now: now)
        }
        // A subscription that was up ended: herdr went away or restarted. Everything is read
        // again (ping, a fresh list, a new subscription), at once after a steady one.
        var actions = closeSubscriptions(&session)
        if now.monotonic - startedAt >= settings.steadySubscription {
            session.subscriptionFailures = 0
            if session.step == .idle { actions += look(&session, now: now) } else { session.retryAt = now.monotonic }
        } else {
            session.retryAt = now.monotonic + backoff(session.subscriptionFailures)
            session.subscriptionFailures += 1
        }
        return actions
    }

    private mutating func apply(_ event: HerdrEvent, to session: inout Session, now: Instant) {
        let settle = now.monotonic + settings.settleDelay
        switch event {
        case .statusChanged(let pane, let status, let kind, let title):
            guard var tracked = session.agents[pane] else {
                session.listAt = min(session.listAt ?? settle, settle)
                return
            }
            if tracked.status != status {
                tracked.status = status
                tracked.since = now.unix
            }
            // Bounded and printable already (`HerdrEvent`).
            if let kind { tracked.kind = kind }
            if let title { tracked.title = title }
            session.agents[pane] = tracked
        case .paneClosed(let pane):
            session.agents[pane] = nil
            session.subscribeAt = min(session.subscribeAt ?? settle, settle)
        case .paneCreated, .agentDetected:
            session.listAt = min(session.listAt ?? settle, settle)
        case .other:
            break
        }
    }

    /// The session's server failed so: its state and detail, its subscriptions closed, and a
    /// retry with backoff (none with `retry: false`: the next scan notices a socket appearing).
    private mutating func fail(
        _ session: inout Session, _ failure: HerdrRequestFailure, state: HerdrSessionInfo.State? = nil,
        retry: Bool = true, now: Instant
    ) -> [Action] {
        let state = state ?? failure.sessionState
        var actions = setState(&session, state, detail: failure.detail)
        actions += closeSubscriptions(&session)
        session.step = .idle
        session.listed = false
        session.listAt = nil
        session.listAgain = false
        session.heardDuringList = []
        session.subscribeAt = nil
        // A server that is gone took its agents with it; one that fails or freezes may come back
        // with them, and their `since` with them.
        if state == .notRunning { session.agents = [:] }
        if retry {
            session.retryAt = now.monotonic + backoff(session.failures)
            session.failures += 1
        }
        return actions
    }

    private func closeSubscriptions(_ session: inout Session) -> [Action] {
        defer {
            session.subscription = nil
            session.replacing = nil
        }
        return session.subscriptions.map { .unsubscribe($0.id) }
    }

    private mutating func setState(
        _ session: inout Session, _ state: HerdrSessionInfo.State, detail: String?
    ) -> [Action] {
        session.state = state
        session.detail = detail
        let line = "herdr session \(session.name): " + Self.describe(state.rawValue, detail)
        guard loggedSessions[session.name] != line else { return [] }
        loggedSessions[session.name] = line
        return [.log(line)]
    }

    private mutating func stop() -> [Action] {
        let actions = order.flatMap { sessions[$0]?.subscriptions.map { Action.unsubscribe($0.id) } ?? [] }
        isRunning = false
        stopAt = nil
        scanAt = nil
        herdr = nil
        sessions = [:]
        order = []
        return actions
    }

    // MARK: - Helpers

    private func backoff(_ failures: Int) -> Double {
        min(settings.retryMaximum, settings.retryMinimum * Double(1 << min(failures, 16)))
    }

    private mutating func takeID() -> RequestID {
        defer { nextID += 1 }
        return nextID
    }

    private func sessionName(step id: RequestID) -> String? {
        order.first { name in
            switch sessions[name]?.step {
            case .pinging(let step), .checking(let step), .listing(let step): step == id
            default: false
            }
        }
    }

    private static func describe(_ state: String, _ detail: String?) -> String {
        detail.map { "\(state) (\($0))" } ?? state
    }
}
