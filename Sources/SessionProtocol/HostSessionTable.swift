import Foundation
import HerdrAgents
import HerdrCrypto
import ScreenModel

/// Every terminal session herdr-host serves, for all devices: the session protocol's computer
/// side as a pure state machine (docs/companion.md, "The session protocol"). The shell feeds it
/// the devices' messages, their connections coming and going, the PTYs' output and exits, and the
/// time; it answers with what to do (start a PTY, write to one, send a message…).
///
/// A device only ever reaches its own sessions: streams are per device, and a resume token is
/// looked up among the resuming device's sessions only. While a device is away its sessions keep
/// running for `gracePeriod`, their output kept up to `resumeBuffer` bytes (then the PTY is not
/// read until the device is back); past the grace period the session is hung up and a resume is
/// told why. A screen session (docs/companion.md, "Screen sessions") has its PTY read all the
/// time into the shell's terminal emulator, and sends screen states instead of output.
public struct HostSessionTable: Sendable {
    public struct Settings: Sendable, Hashable {
        /// Seconds a session waits for its device to come back.
        public var gracePeriod: Double = 15 * 60
        /// Output kept for a device, sent or not: the PTY is read only as far as this (while
        /// attached, only as far as the device's window and a frame), so a stalled or absent
        /// device stops the writer and nothing is lost.
        public var resumeBuffer = 8 * 1024 * 1024
        /// Sessions one device may hold; opening one more hangs up its oldest detached session.
        public var sessionsPerDevice = 8

        public init() {}
    }

    public typealias SessionID = Int

    /// What a session attaches to: one of herdr's sessions (`open`), or an agent's pane (`open agent`).
    public enum Target: Sendable, Hashable {
        /// herdr's session by name; nil: the default session.
        case session(String?)
        /// The agent in this pane of this herdr session, as the computer's own board listed it.
        case agent(AgentKey)
    }

    public enum Action: Sendable, Equatable {
        /// Start a PTY for the session attached to `target` (with a terminal emulator for a
        /// screen session); answer `spawned`.
        case spawn(SessionID, device: UUID, target: Target, cols: Int, rows: Int, screen: Bool)
        case write(SessionID, [UInt8])
        case resize(SessionID, cols: Int, rows: Int)
        /// Let the PTY be read up to this many bytes in all.
        case allowReading(SessionID, upTo: UInt64)
        case hangUp(SessionID)
        /// Read up to `count` lines of the screen session's scrollback before line `end`; answer
        /// `scrollbackRead`.
        case readScrollback(SessionID, stream: UInt32, end: UInt64, count: Int)
        /// Tell the device, before the `started` of its resume, how many input bytes of the
        /// session arrived (`{"inputReceived"}`), so it sends the rest again.
        case tellInputReceived(UUID, stream: UInt32, bytes: UInt64)
        /// The device broke the protocol: end its connection.
        case dropConnection(UUID, reason: String)
        /// Something for the log, about `device`'s sessions.
        case log(UUID, String)
    }

    /// Why a session is gone, kept a while so that a late resume hears it.
    private struct Ended {
        let device: UUID
        let token: [UInt8]
        let why: String
        let lost: SessionRefusal
        let at: Double
    }

    private struct Session {
        let id: SessionID
        let device: UUID
        let token: [UInt8]
        let target: Target
        var stream: UInt32?
        var flow: HostOutputFlow
        var exit: (status: Int32?, signal: Int32?)?
        var exitSent = false
        var detachedAt: Double?
        var readLimit: UInt64 = 0
        /// Input bytes received for the session, from its first.
        var inputReceived: UInt64 = 0
        var started = false
        let openedAt: Double
        /// A screen session's states; nil for a session of bytes.
        var screen: ScreenStateSender?
    }

    private struct Device {
        var connected = false
        var budget = FrameBudget.computer
        var outbox: [SessionMessage] = []
        /// Where the round-robin over sessions resumes.
        var nextTurn = 0
    }

    /// Endings remembered for late resumes, at most.
    static let maximumEndings = 256
    /// Seconds an ending is remembered, at least (else twice the grace period): a device that
    /// comes back a little late still hears why its session went.
    static let minimumEndingMemory: Double = 3600

    public let settings: Settings
    private var sessions: [SessionID: Session] = [:]
    private var devices: [UUID: Device] = [:]
    private var ended: [Ended] = []
    private var nextID = 1
    private let random: @Sendable (Int) -> [UInt8]

    public init(settings: Settings = Settings(), random: @escaping @Sendable (Int) -> [UInt8] = SecureRandom.bytes) {
        self.settings = settings
        self.random = random
    }

    /// Sessions running (attached or not), for the status file and tests.
    public var sessionCount: Int { sessions.count }
    public func sessionCount(for device: UUID) -> Int { sessions.values.filter { $0.device == device }.count }

    // MARK: - Connections

    /// The device's channel is up: nothing is attached until it opens or resumes. `budget` is the
    /// frames per second the channel's road allows (the relay's cap; `.unlimited` at home).
    public mutating func connected(_ device: UUID, budget: FrameBudget = .computer) {
        devices[device, default: Device()].connected = true
        devices[device]?.outbox = []
        devices[device]?.budget = budget
    }

    /// The device's connection ended: its sessions wait for it, their unacknowledged output kept.
    public mutating func disconnected(_ device: UUID, now: Double) -> [Action] {
        devices[device]?.connected = false
        devices[device]?.outbox = []
        var actions: [Action] = []
        for id in sessionIDs(of: device) where sessions[id]?.stream != nil {
            sessions[id]?.stream = nil
            sessions[id]?.flow.detach()
            sessions[id]?.detachedAt = now
            sessions[id]?.exitSent = false  // sent again on a resume: it may not have arrived
            // Read on while away, as far as the resume buffer holds: then the program waits, as
            // under an SSH window, until the device is back or the grace period ends.
            actions += allowance(id)
        }
        return actions
    }

    /// The device was unpaired: everything of it goes.
    public mutating func forget(_ device: UUID) -> [Action] {
        devices[device] = nil
        ended.removeAll { $0.device == device }
        return sessionIDs(of: device).map { id in
            sessions[id] = nil
            return .hangUp(id)
        }
    }

    // MARK: - Messages from a device

    /// A message from `device`. `agents` is the computer's own board as it is now: an `open
    /// agent` opens only an agent listed there (none without a board).
    public mutating func received(
        _ message: SessionMessage, from device: UUID, now: Double, agents: AgentBoard? = nil
    ) -> [Action] {
        guard devices[device]?.connected == true else { return [] }
        switch message {
        case .open(let stream, let name, let cols, let rows, let window):
            return open(
                .session(name), stream: stream, cols: cols, rows: rows, window: window, screen: false, device: device,
                now: now)
        case .openAgent(let stream, let session, let pane, let cols, let rows, let window):
            return openAgent(
                AgentKey(session: session, pane: pane), stream: stream, cols: cols, rows: rows, window: window,
                screen: false, device: device, agents: agents, now: now)
        case .resume(let stream, let token, let received, let cols, let rows, let window):
            guard session(device, stream) == nil else {
                return [.dropConnection(device, reason: "resumed on stream \(stream), which is in use")]
            }
            return resume(
                device, stream: stream, token: token, received: received, cols: cols, rows: rows, window: window,
                now: now)
        case .input(let stream, let data):
            guard let id = session(device, stream) else { return [] }
            sessions[id]!.inputReceived += UInt64(data.count)
            let total = sessions[id]!.inputReceived
            sessions[id]!.screen?.inputWritten(total: total, now: now)
            return [.write(id, data)]
        case .endOfInput(let stream):
            // A terminal's end of input is its EOF character, as typed.
            guard let id = session(device, stream) else { return [] }
            return [.write(id, [0x04])]
        case .resize(let stream, let cols, let rows):
            guard let id = session(device, stream) else { return [] }
            return [.resize(id, cols: cols, rows: rows)]
        case .credit(let stream, let consumed):
            guard let id = session(device, stream) else { return [] }
            guard sessions[id]!.screen == nil, sessions[id]!.flow.credit(consumed) else {
                return [.dropConnection(device, reason: "credited output it was never sent")]
            }
            return allowance(id)
        case .close(let stream):
            guard let id = session(device, stream) else { return [] }
            let ended = sessions[id]!.exit != nil
            sessions[id] = nil
            return ended ? [] : [.hangUp(id), .log(device, "closed a session")]
        case .openScreen(let stream, let target, let cols, let rows):
            switch target {
            case .session(let name):
                return open(
                    .session(name), stream: stream, cols: cols, rows: rows, window: 0, screen: true, device: device,
                    now: now)
            case .agent(let session, let pane):
                return openAgent(
                    AgentKey(session: session, pane: pane), stream: stream, cols: cols, rows: rows, window: 0,
                    screen: true, device: device, agents: agents, now: now)
            }
        case .resumeScreen(let stream, let token, let cols, let rows):
            guard session(device, stream) == nil else {
                return [.dropConnection(device, reason: "resumed on stream \(stream), which is in use")]
            }
            return resumeScreen(device, stream: stream, token: token, cols: cols, rows: rows, now: now)
        case .screenAck(let stream, let state):
            guard let id = session(device, stream), sessions[id]!.screen != nil else { return [] }
            guard sessions[id]!.screen!.acknowledged(state, now: now) else {
                return [.dropConnection(device, reason: "acknowledged screen state \(state), which is not in flight")]
            }
            return []
        case .scrollbackRequest(let stream, let end, let count):
            guard let id = session(device, stream), sessions[id]!.screen != nil else { return [] }
            return [.readScrollback(id, stream: stream, end: end, count: count)]
        case .started, .output, .exit, .refused, .screenStarted, .screen, .scrollback:
            return [.dropConnection(device, reason: "sent a message only the computer sends")]
        }
    }

    /// A new session on `stream` for the agent `key`, only if `agents` (the computer's board as it
    /// is now; none is a board not read) lists it.
    private mutating func openAgent(
        _ key: AgentKey, stream: UInt32, cols: Int, rows: Int, window: Int, screen: Bool, device: UUID,
        agents: AgentBoard?, now: Double
    ) -> [Action] {
        if session(device, stream) == nil, let refusal = (agents ?? AgentBoard.notRead).refusalToOpen(key) {
            queue(.refused(stream: stream, reason: .unknownAgent, text: refusal), for: device)
            return [.log(device, "was refused an agent: \(refusal)")]
        }
        return open(
            .agent(key), stream: stream, cols: cols, rows: rows, window: window, screen: screen, device: device,
            now: now)
    }

    /// A new session on `stream` for `target`, within the device's sessions.
    private mutating func open(
        _ target: Target, stream: UInt32, cols: Int, rows: Int, window: Int, screen: Bool, device: UUID, now: Double
    ) -> [Action] {
        guard session(device, stream) == nil else {
            return [.dropConnection(device, reason: "opened stream \(stream) twice")]
        }
        guard let room = makeRoom(for: device, now: now) else {
            queue(
                .refused(
                    stream: stream, reason: .tooManySessions,
                    text: "this device already has \(settings.sessionsPerDevice) sessions open on the computer"),
                for: device)
            return []
        }
        var actions = room
        let id = nextID
        nextID += 1
        // A screen session keeps no output: its terminal emulator absorbs it.
        var flow = HostOutputFlow(capacity: screen ? 0 : settings.resumeBuffer)
        if !screen { _ = flow.attach(received: 0, window: min(window, settings.resumeBuffer)) }
        sessions[id] = Session(
            id: id, device: device, token: random(SessionMessage.tokenSize), target: target, stream: stream,
            flow: flow, openedAt: now, screen: screen ? ScreenStateSender(stream: stream) : nil)
        actions.append(.spawn(id, device: device, target: target, cols: cols, rows: rows, screen: screen))
        return actions
    }

    /// The device asked for another output window for `stream` (a control message): kept within
    /// the resume buffer, and the PTY read as far as the new one allows.
    public mutating func setWindow(_ bytes: Int, stream: UInt32, from device: UUID) -> [Action] {
        guard devices[device]?.connected == true, let id = session(device, stream), sessions[id]!.screen == nil
        else { return [] }
        let window = min(max(bytes, SessionMessage.windowRange.lowerBound), settings.resumeBuffer)
        sessions[id]!.flow.setWindow(window)
        return allowance(id)
    }

    /// The device's session of the kind asked for (`screen`) holding `token`: a token resumes
    /// only a session of its own kind.
    private func session(of device: UUID, token: [UInt8], screen: Bool) -> SessionID? {
        sessionIDs(of: device).first {
            ConstantTime.equal(sessions[$0]!.token, token) && (sessions[$0]!.screen != nil) == screen
        }
    }

    /// Tells the device its token names no session it can resume, and why when the session is
    /// remembered.
    private mutating func refuseResume(_ device: UUID, stream: UInt32, token: [UInt8]) {
        let gone = ended.last { $0.device == device && ConstantTime.equal($0.token, token) }
        queue(
            .refused(
                stream: stream, reason: gone?.lost ?? .unknownSession,
                text: gone?.why ?? "the computer does not have this session (herdr-host restarted, or it ended)"),
            for: device)
    }

    private mutating func resumeScreen(
        _ device: UUID, stream: UInt32, token: [UInt8], cols: Int, rows: Int, now: Double
    )
        -> [Action]
    {
        guard let id = session(of: device, token: token, screen: true) else {
            refuseResume(device, stream: stream, token: token)
            return []
        }
        sessions[id]!.stream = stream
        sessions[id]!.detachedAt = nil
        sessions[id]!.screen!.restart(stream: stream)
        queue(
            .screenStarted(stream: stream, token: sessions[id]!.token, inputReceived: sessions[id]!.inputReceived),
            for: device)
        return sessions[id]!.exit == nil ? [.resize(id, cols: cols, rows: rows)] : []
    }

    private mutating func resume(
        _ device: UUID, stream: UInt32, token: [UInt8], received: UInt64, cols: Int, rows: Int, window: Int,
        now: Double
    ) -> [Action] {
        guard let id = session(of: device, token: token, screen: false) else {
            refuseResume(device, stream: stream, token: token)
            return []
        }
        guard sessions[id]!.flow.attach(received: received, window: min(window, settings.resumeBuffer)) else {
            let text = "the output from byte \(received) on is no longer kept"
            end(id, why: text, lost: .resumePointLost, now: now)
            queue(.refused(stream: stream, reason: .resumePointLost, text: text), for: device)
            return [.hangUp(id)]
        }
        sessions[id]!.stream = stream
        sessions[id]!.detachedAt = nil
        var actions: [Action] = [.tellInputReceived(device, stream: stream, bytes: sessions[id]!.inputReceived)]
        queue(
            .started(stream: stream, token: sessions[id]!.token, offset: received, window: sessions[id]!.flow.window),
            for: device)
        if sessions[id]!.exit == nil { actions.append(.resize(id, cols: cols, rows: rows)) }
        return actions + allowance(id)
    }

    /// Makes room for one more session of `device` by hanging up its oldest detached one; nil
    /// when all of its sessions are attached.
    private mutating func makeRoom(for device: UUID, now: Double) -> [Action]? {
        let mine = sessionIDs(of: device)
        guard mine.count >= settings.sessionsPerDevice else { return [] }
        guard let oldest = mine.first(where: { sessions[$0]!.stream == nil }) else { return nil }
        end(oldest, why: "the device opened more sessions than the computer keeps", lost: .unknownSession, now: now)
        return [.hangUp(oldest)]
    }

    // MARK: - PTY events

    /// The PTY for `id` started, or could not (`failure` says why).
    public mutating func spawned(_ id: SessionID, failure: String?) -> [Action] {
        guard let session = sessions[id] else { return [] }
        if let failure {
            sessions[id] = nil
            if let stream = session.stream {
                queue(.refused(stream: stream, reason: .startFailed, text: failure), for: session.device)
            }
            return [.log(session.device, "could not start a session: \(failure)")]
        }
        sessions[id]!.started = true
        if let stream = session.stream {
            queue(
                session.screen != nil
                    ? .screenStarted(stream: stream, token: session.token, inputReceived: 0)
                    : .started(stream: stream, token: session.token, offset: 0, window: session.flow.window),
                for: session.device)
        }
        return allowance(id)
    }

    /// PTY output: never more than the read limit allowed, so what is kept stays within the
    /// resume buffer.
    public mutating func output(_ id: SessionID, _ data: [UInt8]) {
        sessions[id]?.flow.append(data)
    }

    public mutating func exited(_ id: SessionID, status: Int32?, signal: Int32?) {
        sessions[id]?.exit = (status, signal)
    }

    /// A screen session's screen changed at `now` (its terminal emulator took output, or a resize).
    public mutating func screenChanged(_ id: SessionID, now: Double) {
        sessions[id]?.screen?.screenChanged(now: now)
    }

    /// The lines a `readScrollback` read, for the device if the session is still attached on
    /// the stream it asked on.
    public mutating func scrollbackRead(_ id: SessionID, _ lines: ScrollbackLines) {
        guard let session = sessions[id], session.stream == lines.stream else { return }
        queue(.scrollback(lines), for: session.device)
    }

    /// Whether `id` is still among the sessions (running, or ended and not yet closed).
    public func contains(_ id: SessionID) -> Bool { sessions[id] != nil }

    /// A screen session's screen as the shell's terminal emulator has it, with the bells rung.
    public typealias ScreenSource = (SessionID) -> (screen: TerminalScreen, bells: UInt32)?

    // MARK: - Time and sending

    /// Hangs up sessions whose device stayed away past the grace period; forgets old endings.
    public mutating func tick(now: Double) -> [Action] {
        let memory = max(2 * settings.gracePeriod, Self.minimumEndingMemory)
        ended.removeAll { now - $0.at > memory }
        var actions: [Action] = []
        for (id, session) in sessions {
            guard let since = session.detachedAt, now - since >= settings.gracePeriod else { continue }
            if let exit = session.exit {
                // It ended by itself; nobody came for its last words.
                let how =
                    exit.status.map { "exit status \($0)" } ?? exit.signal.map { "signal \(SignalName.name($0))" }
                    ?? "no status"
                end(
                    id, why: "the session ended (\(how)) while the device was away, and its output was not kept longer",
                    lost: .unknownSession, now: now)
            } else {
                end(
                    id,
                    why: "the session was hung up after \(Self.duration(settings.gracePeriod)) without the device",
                    lost: .unknownSession, now: now)
                actions.append(.hangUp(id))
            }
            actions.append(
                .log(
                    session.device,
                    "a session waited \(Self.duration(settings.gracePeriod)) for its device and was ended"))
        }
        return actions
    }

    /// The messages `device` may get now, within its frame budget: queued replies first, then
    /// output round-robin over its sessions (each chunk as large as what waits), then exits.
    public mutating func messages(
        for device: UUID, now: Double, screens: ScreenSource = { _ in nil }
    ) -> [SessionMessage] {
        queueScreenStates(of: device, now: now, screens: screens)
        guard var state = devices[device], state.connected else { return [] }
        // Most batches (a keystroke written to its PTY) leave nothing to send: found without
        // building the list of sessions.
        guard !state.outbox.isEmpty || sessions.values.contains(where: { $0.device == device && isDue($0) }) else {
            return []
        }
        defer { devices[device] = state }
        var out: [SessionMessage] = []
        // Which sessions may send is looked up once per call, not once per message: this runs
        // after every keystroke's batch.
        var sending: [SessionID]?
        while state.budget.wait(now: now) == 0 {
            if !state.outbox.isEmpty {
                out.append(state.outbox.removeFirst())
            } else {
                let mine = sending ?? sessionIDs(of: device) { $0.stream != nil && $0.started }
                sending = mine
                guard let message = nextOutput(mine, turn: &state.nextTurn) else { break }
                out.append(message)
            }
            _ = state.budget.take(now: now)
        }
        return out
    }

    /// The states of `device`'s attached screen sessions that are due, and the exit of one whose
    /// last screen went, into its outbox (where the budget lets them go in order).
    private mutating func queueScreenStates(of device: UUID, now: Double, screens: ScreenSource) {
        guard devices[device]?.connected == true else { return }
        for id in sessionIDs(of: device, where: { $0.screen != nil && $0.stream != nil && $0.started }) {
            guard var sender = sessions[id]!.screen else { continue }
            if let due = sender.nextSendTime(), due <= now, let source = screens(id) {
                let parts = sender.messages(for: source.screen, bells: source.bells, now: now)
                devices[device]!.outbox += parts
            }
            sessions[id]!.screen = sender
            let session = sessions[id]!
            if let exit = session.exit, !session.exitSent, sender.isCaughtUp, let stream = session.stream {
                sessions[id]!.exitSent = true
                queue(
                    .exit(
                        stream: stream, end: sender.lastState, status: exit.status,
                        signal: exit.signal.map(SignalName.name)), for: device)
            }
        }
    }

    /// Takes one frame of `device`'s budget for a message beside its sessions' (the agents
    /// board), so that both count against one budget and together stay under the relay's cap;
    /// false while none is left (`frameWait` says how long).
    public mutating func takeFrame(for device: UUID, now: Double) -> Bool {
        devices[device, default: Device()].budget.take(now: now)
    }

    /// Seconds until `device`'s budget has a frame again (0: now).
    public mutating func frameWait(for device: UUID, now: Double) -> Double {
        devices[device, default: Device()].budget.wait(now: now)
    }

    /// When `messages(for:now:)` may have more, or a session's grace runs out: the shell's next wake.
    public mutating func nextDeadline(now: Double) -> Double? {
        var deadline: Double?
        func consider(_ time: Double) { deadline = min(deadline ?? time, time) }
        for session in sessions.values {
            if let since = session.detachedAt { consider(since + settings.gracePeriod) }
            if session.stream != nil, session.started, let due = session.screen?.nextSendTime() {
                consider(max(now, due))
            }
            if session.screen?.isCaughtUp == true, session.exit != nil, !session.exitSent, session.stream != nil {
                consider(now)
            }
            if isDue(session), var state = devices[session.device] {
                consider(now + state.budget.wait(now: now))
                devices[session.device] = state
            }
        }
        for (id, state) in devices where state.connected && !state.outbox.isEmpty {
            var budget = state.budget
            consider(now + budget.wait(now: now))
            devices[id]?.budget = budget
        }
        return deadline
    }

    /// Whether an attached session has output or its exit to send.
    private func isDue(_ session: Session) -> Bool {
        guard session.stream != nil, session.screen == nil else { return false }
        return session.flow.hasSendable || (session.exit != nil && !session.exitSent && exitIsDue(session))
    }

    private func exitIsDue(_ session: Session) -> Bool { session.flow.sent == session.flow.produced }

    /// The next message from one of `mine` (attached, started), round-robin from `turn`.
    private mutating func nextOutput(_ mine: [SessionID], turn: inout Int) -> SessionMessage? {
        guard !mine.isEmpty else { return nil }
        for step in 0..<mine.count {
            let id = mine[(turn + step) % mine.count]
            guard let stream = sessions[id]?.stream, sessions[id]?.screen == nil else { continue }
            if let chunk = sessions[id]!.flow.next(maximum: SessionMessage.maximumData) {
                turn = (turn + step + 1) % mine.count
                return .output(stream: stream, offset: chunk.offset, data: chunk.data)
            }
            let session = sessions[id]!
            if let exit = session.exit, !session.exitSent, exitIsDue(session) {
                turn = (turn + step + 1) % mine.count
                sessions[id]!.exitSent = true
                let signal = exit.signal.map(SignalName.name)
                // Kept until the device closes the stream: if the exit is lost in a drop, the
                // resume gets the rest of the output and the exit again.
                return .exit(stream: stream, end: session.flow.produced, status: exit.status, signal: signal)
            }
        }
        return nil
    }

    // MARK: - Helpers

    /// The device's sessions (those `include` takes), in id order: the round-robin's.
    private func sessionIDs(of device: UUID, where include: (Session) -> Bool = { _ in true }) -> [SessionID] {
        var ids: [SessionID] = []
        for (id, session) in sessions where session.device == device && include(session) { ids.append(id) }
        ids.sort()
        return ids
    }

    private func session(_ device: UUID, _ stream: UInt32) -> SessionID? {
        sessions.values.first { $0.device == device && $0.stream == stream }?.id
    }

    private mutating func queue(_ message: SessionMessage, for device: UUID) {
        devices[device]?.outbox.append(message)
    }

    /// Output read from the PTY, while attached, beyond what the device's window lets go now: a
    /// full frame ready when the next credit comes.
    public static let readAhead = SessionMessage.maximumData

    /// How far the PTY is read: while attached, the device's window and a frame more, so that
    /// what waits behind a keystroke's answer (a Ctrl-C's prompt) is what the path holds and no
    /// more; while away, as far as the resume buffer holds. Only a credit moves it on.
    private mutating func allowance(_ id: SessionID) -> [Action] {
        guard let session = sessions[id], session.started else { return [] }
        if session.screen != nil {
            // Read all the time: the screen absorbs any amount of output.
            guard session.readLimit != .max else { return [] }
            sessions[id]!.readLimit = .max
            return [.allowReading(id, upTo: .max)]
        }
        let ahead =
            session.stream == nil
            ? settings.resumeBuffer : min(settings.resumeBuffer, session.flow.window + Self.readAhead)
        let limit = session.flow.start + UInt64(ahead)
        guard limit != session.readLimit else { return [] }
        sessions[id]!.readLimit = limit
        return [.allowReading(id, upTo: limit)]
    }

    private mutating func end(_ id: SessionID, why: String, lost: SessionRefusal, now: Double) {
        guard let session = sessions.removeValue(forKey: id) else { return }
        ended.append(Ended(device: session.device, token: session.token, why: why, lost: lost, at: now))
        if ended.count > Self.maximumEndings { ended.removeFirst(ended.count - Self.maximumEndings) }
    }
}

extension HostSessionTable {
    /// Seconds for people: "15 min", "1 h", "90 s".
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if whole >= 3600, whole % 3600 == 0 { return "\(whole / 3600) h" }
        if whole >= 60, whole % 60 == 0 { return "\(whole / 60) min" }
        return "\(whole) s"
    }
}

/// Signal names as SSH carries them ("HUP", "KILL").
enum SignalName {
    static func name(_ number: Int32) -> String {
        let names: [Int32: String] = [
            1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 6: "ABRT", 8: "FPE", 9: "KILL", 11: "SEGV", 13: "PIPE",
            14: "ALRM", 15: "TERM", 10: "USR1", 12: "USR2",
        ]
        return names[number] ?? "SIG\(number)"
    }
}
