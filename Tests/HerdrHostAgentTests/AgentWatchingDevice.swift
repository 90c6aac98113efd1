import Foundation
import HerdrAgents
import SessionProtocol
import TestSupport

/// A paired device that watches the computer's agents and holds terminal sessions on one
/// channel, as herdr-remote's `watch` does, driven by the test through the Companion library:
/// everything the computer sends is sorted as it comes (the board put together by
/// `AgentBoardReceiver`, each stream's output, refusals), and its pings are answered.
final class AgentWatchingDevice {
    private let device: ScriptedDevice
    private var receiver = AgentBoardReceiver()
    /// Every agents message, in order.
    private(set) var boardMessages: [AgentBoardMessage] = []
    private(set) var output: [UInt32: [UInt8]] = [:]
    private(set) var refusals: [UInt32: (reason: SessionRefusal, text: String)] = [:]
    private(set) var started: Set<UInt32> = []

    init(_ road: RelayRoadFixture) throws { device = try ScriptedDevice.overRelay(road) }

    /// The board as the computer's messages made it (nil before the first whole one).
    var board: AgentBoard? { receiver.board }

    func watch(_ on: Bool = true) throws { try device.send(CompanionMessage.agents(watch: on).bytes) }

    /// Opens `stream` on herdr's default session.
    func open(_ stream: UInt32) throws {
        try device.send(SessionMessage.open(stream: stream, name: nil, cols: 80, rows: 24, window: 1 << 20).bytes)
    }

    func openAgent(_ stream: UInt32, session: String = "default", pane: String) throws {
        try device.send(
            SessionMessage.openAgent(stream: stream, session: session, pane: pane, cols: 80, rows: 24, window: 1 << 20)
                .bytes)
    }

    /// Types `text` and a carriage return on `stream`.
    func type(_ stream: UInt32, _ text: String) throws {
        try device.send(SessionMessage.input(stream: stream, data: Array((text + "\r").utf8)).bytes)
    }

    func text(_ stream: UInt32) -> String { String(decoding: output[stream] ?? [], as: UTF8.self) }

    /// Reads what the computer sends until `condition` holds; throws, saying what it saw, when
    /// it does not within `timeout` seconds or the channel ends.
    func wait(timeout: Double = 30, _ what: String, until condition: (AgentWatchingDevice) -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(self) {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw FixtureError(
                    "no \(what) within \(Int(timeout)) s; board \(String(describing: board)), output \(output.mapValues { String(decoding: $0.suffix(300), as: UTF8.self) }), refusals \(refusals)"
                )
            }
            let bytes: [UInt8]?
            do {
                bytes = try device.next(timeout: min(left, 1))
            } catch let error as FixtureError where error.description.hasPrefix("nothing arrived") {
                continue  // nothing in that second: look at the deadline again
            }
            guard let bytes else { throw FixtureError("the computer ended the channel while waiting for \(what)") }
            try take(try ChannelMessage(parsing: bytes))
        }
    }

    /// Waits for a board `condition` holds for; that board.
    @discardableResult
    func waitForBoard(timeout: Double = 30, _ what: String, _ condition: (AgentBoard) -> Bool) throws -> AgentBoard {
        try wait(timeout: timeout, what) { $0.board.map(condition) ?? false }
        return board!
    }

    /// Waits until `stream`'s output since `from` (a count of bytes) contains `text`.
    func waitForOutput(_ stream: UInt32, _ text: String, from: Int = 0, timeout: Double = 30) throws {
        try wait(timeout: timeout, "\(text.debugDescription) on stream \(stream)") {
            String(decoding: ($0.output[stream] ?? []).dropFirst(from), as: UTF8.self).contains(text)
        }
    }

    /// Types a command whose output (`42-MARK`) differs from its echo, and waits for that output:
    /// the terminal session answers keystrokes.
    func echoes(_ stream: UInt32, mark: String, timeout: Double = 30) throws {
        let from = output[stream]?.count ?? 0
        try type(stream, "echo $((6*7))-\(mark)")
        try waitForOutput(stream, "42-\(mark)", from: from, timeout: timeout)
    }

    private func take(_ message: ChannelMessage) throws {
        switch message {
        case .agents(let message):
            boardMessages.append(message)
            _ = try receiver.receive(message)
        case .control(.ping(let id)):
            try device.send(CompanionMessage.pong(id).bytes)
        case .session(.started(let stream, _, _, _)):
            started.insert(stream)
        case .session(.output(let stream, _, let data)):
            output[stream, default: []] += data
        case .session(.refused(let stream, let reason, let text)):
            refusals[stream] = (reason, text)
        default:
            break
        }
    }

    func close() { device.close() }
}
