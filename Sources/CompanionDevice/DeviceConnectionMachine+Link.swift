import HerdrAgents
import NetworkPath
import NoiseRoads
import SessionProtocol

/// One connection in use: what goes out on it within the device's frame budget (docs/companion.md,
/// "Frame budget"), and what the computer's messages on it mean.
extension DeviceConnectionMachine {
    /// The state of the connection in use.
    struct Link {
        let id: AttemptID
        let road: NoiseRoad
        let connectedAt: Double
        /// The relay caps frames per second; the home road has no relay to keep under.
        var budget: FrameBudget
        var liveness: PathLiveness
        /// The session's stream on this connection once it started here; nothing but the attach
        /// goes out before.
        var stream: UInt32?
        var attachSent = false
        var resize: (cols: Int, rows: Int)?
        var credit: UInt64?
        /// The newest complete screen state to acknowledge (a screen session).
        var screenAck: UInt64?
        /// A pong owed to the computer.
        var pong: UInt32?
        /// The output window sized to the path, once the session runs here, and a change of it
        /// still to tell the computer.
        var window: PathWindow?
        var windowChange: Int?
        /// A change of the agents watch to tell the computer.
        var watchChange: Bool?
        /// This connection's agents board, put together from its messages (its `seq` counts from 1).
        var board = AgentBoardReceiver()
        /// When this connection must have sent its first board.
        var boardDeadline: Double?
        /// When what the budget held back may go.
        var flushAt: Double?
        /// Why this side dropped it (the network went from under it).
        var closedBecause: String?

        init(id: AttemptID, road: NoiseRoad, now: Double) {
            self.id = id
            self.road = road
            connectedAt = now
            budget = road.isHome ? .unlimited : .device
            liveness = PathLiveness(now: now)
        }
    }

    // MARK: - Sending

    /// Sends the attach message on the connection in use, once, when there is something to attach.
    mutating func sendAttach(now: Double) {
        guard var link, !link.attachSent, attach != nil else { return }
        let message = session.attachMessage(cols: size.cols, rows: size.rows)
        link.attachSent = true
        _ = link.budget.take(now: now)
        self.link = link
        actions.append(.send(message.bytes))
    }

    /// Sends what waits, as far as the budget allows; the rest when `flushAt` comes. A ping
    /// follows the session messages when one is due (`PathLiveness`).
    mutating func flush(now: Double) {
        guard var link else { return }
        defer { self.link = link }
        let stream = link.stream
        while link.budget.wait(now: now) == 0 {
            let bytes: [UInt8]
            if let id = link.pong {
                bytes = CompanionMessage.pong(id).bytes
                link.pong = nil
            } else if let watch = link.watchChange {
                bytes = CompanionMessage.agents(watch: watch).bytes
                link.watchChange = nil
            } else if let stream, let state = link.screenAck {
                // An answer itself: no ping follows it, as one follows keystrokes.
                bytes = SessionMessage.screenAck(stream: stream, state: state).bytes
                link.screenAck = nil
            } else if let stream, let window = link.windowChange {
                bytes = CompanionMessage.window(stream: stream, bytes: window).bytes
                link.windowChange = nil
            } else if let stream, !input.isEmpty {
                let count = min(input.count, SessionMessage.maximumData - 8)
                let data = Array(input[0..<count])
                bytes = SessionMessage.input(stream: stream, data: data).bytes
                input.removeFirst(count)
                inputLog.record(data)
                link.liveness.sentSessionMessage()
            } else if let stream, endOfInput {
                bytes = SessionMessage.endOfInput(stream: stream).bytes
                endOfInput = false
                link.liveness.sentSessionMessage()
            } else if let stream, let size = link.resize {
                bytes = SessionMessage.resize(stream: stream, cols: size.cols, rows: size.rows).bytes
                link.resize = nil
                link.liveness.sentSessionMessage()
            } else if let stream, let credit = link.credit {
                bytes = SessionMessage.credit(stream: stream, consumed: credit).bytes
                link.credit = nil
                link.liveness.sentSessionMessage()
            } else if let id = link.liveness.pingIfDue(now: now) {
                bytes = CompanionMessage.ping(id).bytes
            } else {
                link.flushAt = nil
                return
            }
            _ = link.budget.take(now: now)
            actions.append(.send(bytes))
        }
        link.flushAt = hasWaiting(link, now: now) ? now + link.budget.wait(now: now) : nil
    }

    /// Whether something waits for the budget on `link`: a message, or a ping due.
    private func hasWaiting(_ link: Link, now: Double) -> Bool {
        if link.pong != nil || link.watchChange != nil { return true }
        if !link.liveness.isOwed, link.liveness.nextDeadline() <= now { return true }
        guard link.stream != nil else { return false }
        return link.windowChange != nil || !input.isEmpty || endOfInput || link.resize != nil || link.credit != nil
            || link.screenAck != nil
    }

    // MARK: - Receiving

    /// One message from the computer on the connection in use.
    mutating func receive(_ bytes: [UInt8], now: Double) {
        // A computer that breaks the channel's rule would break it again after a reconnect: the
        // session ends, saying what came.
        let message: ChannelMessage
        do {
            message = try ChannelMessage(parsing: bytes)
        } catch {
            return finish(.failed(Failure(.protocolViolation, "the computer sent \(error)")))
        }
        switch message {
        case .control(.home(let addresses)):
            home = addresses
            emit(.homeAddresses(addresses))
        case .control(.ping(let id)):
            link?.pong = id
            flush(now: now)
        case .control(.pong(let id)):
            if let sample = link?.liveness.pong(id, now: now) { link?.window?.roundTrip(sample) }
        case .control(.inputReceived(let stream, let received)):
            // Before the resume's `started`: what the old connection did not deliver goes first,
            // ahead of anything typed since.
            guard stream == session.stream, let resend = inputLog.rewind(toReceived: received) else { return }
            input = resend + input
        case .agents(let message):
            guard var link else { return }
            let board: AgentBoard?
            do {
                board = try link.board.receive(message)
            } catch {
                return finish(.failed(Failure(.protocolViolation, "the computer broke the agents board: \(error)")))
            }
            guard let board else {
                self.link = link
                return
            }
            link.boardDeadline = nil
            self.link = link
            emit(.agents(board))
        case .control:
            return
        case .session(let message):
            sessionMessage(message, now: now)
        }
    }

    private mutating func sessionMessage(_ message: SessionMessage, now: Double) {
        switch session.receive(message) {
        case .none:
            return
        case .started(let kind):
            // A session opened afresh counts its input from 0, like the computer does.
            if kind == .afresh { inputLog.reset() }
            link?.stream = session.stream
            if session.isScreen {
                // A screen session's start says how much input arrived: the rest goes again, first.
                if kind != .afresh, let resend = inputLog.rewind(toReceived: session.inputReceivedAtStart) {
                    input = resend + input
                }
            } else {
                // The computer keeps to at most the window `started` names; the path's share of
                // it starts small and grows as the path shows it carries more.
                var window = PathWindow(ceiling: session.flow.window)
                session.setWindow(window.current)
                if let rtt = link?.liveness.smoothedRTT { window.roundTrip(rtt) }
                if window.current < window.ceiling { link?.windowChange = window.current }
                link?.window = window
            }
            flush(now: now)
            switch kind {
            case .first: emit(.started)
            case .resumed: emit(.resumed)
            case .afresh: break  // told with attachedAfresh already
            }
        case .output(let bytes):
            actions.append(.write(bytes))
        case .screen(let frame):
            actions.append(.draw(frame))
            link?.screenAck = frame.state
            flush(now: now)
        case .exited(let status, let signal):
            // The computer keeps an ended session until told: its exit may have been lost.
            actions.append(.send(SessionMessage.close(stream: session.stream).bytes))
            link?.stream = nil
            finish(.exited(status: status, signal: signal))
        case .attachAfresh(let text):
            emit(.attachedAfresh(reason: text))
            let attach = session.attachMessage(cols: size.cols, rows: size.rows)
            link?.stream = nil
            link?.credit = nil
            _ = link?.budget.take(now: now)
            actions.append(.send(attach.bytes))
        case .refused(let reason, let text):
            let kind: Failure.Kind = reason == .unknownAgent ? .agentNotFound : .sessionRefused
            finish(.failed(Failure(kind, "the computer refused the session: \(text)")))
        case .broken(let why):
            finish(.failed(Failure(.protocolViolation, "the computer broke the session protocol: \(why)")))
        }
    }
}
