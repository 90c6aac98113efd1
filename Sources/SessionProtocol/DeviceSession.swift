import HerdrAgents

/// One terminal session on the device's side of the session protocol, across connections: which
/// stream it is on, its resume token, the output received and on the screen. Pure: the shell
/// hands it the computer's messages and sends what it says.
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
    private var waitingFor: UInt32?
    private var afresh = false

    public init(name: String?, window: Int = 4 * 1024 * 1024) {
        self.name = name
        self.agent = nil
        self.window = window
        flow = DeviceOutputFlow(window: window)
    }

    /// A session in the pane of `agent` (`open agent`); the computer checks it against its board.
    public init(agent: AgentKey, window: Int = 4 * 1024 * 1024) {
        self.name = nil
        self.agent = agent
        self.window = window
        flow = DeviceOutputFlow(window: window)
    }

    /// The message that attaches the session on a new connection (or after `attachAfresh`): a
    /// resume from the last byte received when the computer gave a token, else an open (an
    /// `open agent` for an agent's pane).
    public mutating func attachMessage(cols: Int, rows: Int) -> SessionMessage {
        stream &+= 1
        if stream == 0 { stream = 1 }
        waitingFor = stream
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

    /// A message from the computer on the current connection.
    public mutating func receive(_ message: SessionMessage) -> Outcome {
        guard message.stream == stream else { return .none }  // a stream this side left
        switch message {
        case .started(_, let token, let offset, let window):
            guard waitingFor == stream else { return .broken("the computer started a session twice") }
            let resuming = self.token != nil
            guard !resuming || offset == flow.received else {
                return .broken("the computer resumed from byte \(offset), not \(flow.received)")
            }
            guard resuming || offset == 0 else { return .broken("a new session's output started at byte \(offset)") }
            guard window <= self.window else { return .broken("the computer took a window of \(window) bytes") }
            waitingFor = nil
            self.token = token
            // Credits come every quarter of the window the computer keeps to, or it would wait.
            flow.window = window
            let kind: StartKind = afresh ? .afresh : (resuming ? .resumed : (hasStarted ? .afresh : .first))
            afresh = false
            hasStarted = true
            return .started(kind)
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
            if token != nil, waitingFor == stream, reason == .unknownSession || reason == .resumePointLost {
                // Gone on the computer: a fresh attach, from a fresh output count.
                token = nil
                flow = DeviceOutputFlow(window: window)
                afresh = true
                return .attachAfresh(text: text)
            }
            return .refused(reason, text: text)
        case .screenStarted, .screen, .scrollback:
            return .broken("the computer sent a screen session's message to a session of bytes")
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
