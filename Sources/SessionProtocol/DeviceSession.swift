import HerdrAgents
import ScreenModel

/// One terminal session on the device's side of the session protocol, across connections: which
/// stream it is on, its resume token, the output received and on the screen. Pure: the shell
/// hands it the computer's messages and sends what it says. A screen session (docs/companion.md,
/// "Screen sessions") keeps a `ScreenReplica` instead of counting output.
public struct DeviceSession: Sendable {
    /// What a message from the computer means for the session.
    public enum Outcome: Sendable, Equatable {
        /// Nothing to do (a duplicate, or a message for another stream).
        case none
        /// The session runs on this connection: for the first time, resumed where the device
        /// was, or afresh after the computer lost it (`lostBecause`).
        case started(StartKind)
        /// New output for the screen.
        case output([UInt8])
        /// A screen session's state is complete: draw it and acknowledge it.
        case screen(ScreenFrame)
        case exited(status: Int32?, signal: String?)
        /// The computer lost the session (`text` says why): open afresh with `attachMessage`.
        case attachAfresh(text: String)
        /// The computer refused the session for good.
        case refused(SessionRefusal, text: String)
        /// The computer broke the protocol: the channel cannot be trusted any more.
        case broken(String)
    }

    public enum StartKind: Sendable, Equatable {
        case first
        case resumed
        case afresh
    }

    public let name: String?
    /// The agent whose pane the session opens (`open agent`), instead of the herdr session `name`.
    public let agent: AgentKey?
    public let window: Int
    public private(set) var stream: UInt32 = 0
    public private(set) var token: [UInt8]?
    public private(set) var flow: DeviceOutputFlow
    public private(set) var hasStarted = false
    /// A screen session's copy of the screen; nil for a session of bytes.
    public private(set) var replica: ScreenReplica?
    /// The input bytes the computer said it received when the session last started (a screen
    /// session's `screen started`; a session of bytes says so in `{"inputReceived"}`).
    public private(set) var inputReceivedAtStart: UInt64 = 0
    private var waitingFor: UInt32?
    private var afresh = false

    /// A session of the herdr session `name` (nil: herdr's default), of screens when `screen`.
    public init(name: String?, window: Int = 4 * 1024 * 1024, screen: Bool = false) {
        self.name = name
        self.agent = nil
        self.window = window
        flow = DeviceOutputFlow(window: window)
        replica = screen ? ScreenReplica() : nil
    }

    /// A session in the pane of `agent` (`open agent`); the computer checks it against its board.
    public init(agent: AgentKey, window: Int = 4 * 1024 * 1024, screen: Bool = false) {
        self.name = nil
        self.agent = agent
        self.window = window
        flow = DeviceOutputFlow(window: window)
        replica = screen ? ScreenReplica() : nil
    }

    /// Whether this is a screen session.
    public var isScreen: Bool { replica != nil }

    /// The message that attaches the session on a new connection (or after `attachAfresh`): a
    /// resume from the last byte received when the computer gave a token, else an open (an
    /// `open agent` for an agent's pane).
    public mutating func attachMessage(cols: Int, rows: Int) -> SessionMessage {
        stream &+= 1
        if stream == 0 { stream = 1 }
        waitingFor = stream
        if isScreen { return screenAttachMessage(cols: cols, rows: rows) }
        if let token {
            return .resume(
                stream: stream, token: token, received: flow.received, cols: cols, rows: rows, window: window)
        }
        if let agent {
            return .openAgent(
                stream: stream, session: agent.session, pane: agent.pane, cols: cols, rows: rows, window: window)
        }
        return .open(stream: stream, name: name, cols: cols, rows: rows, window: window)
    }

    private mutating func screenAttachMessage(cols: Int, rows: Int) -> SessionMessage {
        replica?.restart()
        if let token { return .resumeScreen(stream: stream, token: token, cols: cols, rows: rows) }
        if let agent {
            return .openScreen(
                stream: stream, target: .agent(session: agent.session, pane: agent.pane), cols: cols, rows: rows)
        }
        return .openScreen(stream: stream, target: .session(name: name), cols: cols, rows: rows)
    }

    /// A message from the computer on the current connection.
    public mutating func receive(_ message: SessionMessage) -> Outcome {
        guard message.stream == stream else { return .none }  // a stream this side left
        if isScreen { return receiveScreen(message) }
        switch message {
        case .started(_, let token, let offset, let window):
            guard waitingFor == stream else { return .broken("the computer started a session twice") }
            let resuming = self.token != nil
            guard !resuming || offset == flow.received else {
                return .broken("the computer resumed from byte \(offset), not \(flow.received)")
            }
            guard resuming || offset == 0 else { return .broken("a new session's output started at byte \(offset)") }
            guard window <= self.window else { return .broken("the computer took a window of \(window) bytes") }
            // Credits come every quarter of the window the computer keeps to, or it would wait.
            flow.window = window
            return started(token: token, resuming: resuming)
        case .output(_, let offset, let data):
            guard waitingFor == nil else { return .broken("output came before the session started") }
            guard let fresh = flow.receive(offset: offset, data: data) else {
                return .broken("output bytes before \(offset) never came")
            }
            return fresh.isEmpty ? .none : .output(fresh)
        case .exit(_, let end, let status, let signal):
            guard end == flow.received else {
                return .broken("the session ended after byte \(end), but \(flow.received) bytes came")
            }
            return .exited(status: status, signal: signal)
        case .refused(_, let reason, let text):
            return refused(reason, text: text)
        case .screenStarted, .screen, .scrollback:
            return .broken("the computer sent a screen session's message to a session of bytes")
        case .open, .openAgent, .resume, .input, .resize, .credit, .endOfInput, .close, .openScreen, .resumeScreen,
            .screenAck, .scrollbackRequest:
            return .broken("the computer sent a message only a device sends")
        }
    }

    /// The session runs on this connection with `token`: how it started.
    private mutating func started(token: [UInt8], resuming: Bool) -> Outcome {
        waitingFor = nil
        self.token = token
        let kind: StartKind = afresh ? .afresh : (resuming ? .resumed : (hasStarted ? .afresh : .first))
        afresh = false
        hasStarted = true
        return .started(kind)
    }

    private mutating func refused(_ reason: SessionRefusal, text: String) -> Outcome {
        if token != nil, waitingFor == stream, reason == .unknownSession || reason == .resumePointLost {
            // Gone on the computer: a fresh attach, from a fresh output count and a blank screen.
            token = nil
            flow = DeviceOutputFlow(window: window)
            if isScreen { replica = ScreenReplica() }
            afresh = true
            return .attachAfresh(text: text)
        }
        return .refused(reason, text: text)
    }

    private mutating func receiveScreen(_ message: SessionMessage) -> Outcome {
        switch message {
        case .screenStarted(_, let token, let inputReceived):
            guard waitingFor == stream else { return .broken("the computer started a session twice") }
            let resuming = self.token != nil
            guard !resuming || token == self.token else { return .broken("the computer resumed another session") }
            inputReceivedAtStart = inputReceived
            return started(token: token, resuming: resuming)
        case .screen(let update):
            guard waitingFor == nil else { return .broken("a screen came before the session started") }
            switch replica!.apply(update) {
            case .partial: return .none
            case .complete(let state, let rang):
                return .screen(
                    ScreenFrame(screen: replica!.screen, state: state, inputBytes: replica!.inputBytes, rang: rang))
            case .broken(let why): return .broken(why)
            }
        case .exit(_, let end, let status, let signal):
            guard end == replica!.state else {
                return .broken("the session ended after screen state \(end), but this device has \(replica!.state)")
            }
            return .exited(status: status, signal: signal)
        case .refused(_, let reason, let text):
            return refused(reason, text: text)
        case .scrollback:
            return .none  // this device asks for none: its terminal keeps its own scrollback
        case .started, .output:
            return .broken("the computer sent a session of bytes' message to a screen session")
        case .open, .openAgent, .resume, .input, .resize, .credit, .endOfInput, .close, .openScreen, .resumeScreen,
            .screenAck, .scrollbackRequest:
            return .broken("the computer sent a message only a device sends")
        }
    }

    /// The window the device asked for since (`{"window"}`): credits come every quarter of it.
    public mutating func setWindow(_ window: Int) { flow.window = window }

    /// `count` bytes reached the screen: the credit to send, if one is due.
    public mutating func consumed(_ count: Int) -> UInt64? { flow.consumed(count) }
}
