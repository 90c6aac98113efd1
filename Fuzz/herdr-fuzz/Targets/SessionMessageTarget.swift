import HerdrAgents
import HerdrBase
import ScreenModel
import SessionProtocol

extension FuzzTargets {
    /// The companion session protocol (docs/companion.md, "The session protocol"): any bytes
    /// parse or are refused with a reason. A parsed message re-encodes to the very bytes it came
    /// from (but for a refusal reason this side does not know, read as `other`, and the status
    /// field of an exit that says it has no status, which the parser ignores), the encoding parses back to the same message, and every documented bound holds:
    /// at most one frame's chunk, cells 1-1000, the flow-control window, 16-byte tokens, herdr's
    /// session-name rule, texts and signal names within their limits, data within `maximumData`.
    static func cellsInBounds(_ row: ScreenUpdate.Row) -> Bool { cellsInBounds(row.cells) }

    static func cellsInBounds(_ cells: [ScreenCell]) -> Bool {
        cells.allSatisfy { $0.width <= 2 && $0.text.utf8.count <= 32 }
    }

    static let sessionMessage = FuzzTarget("session-message", "Companion session protocol messages") { data in
        let message: SessionMessage
        do throws(SessionMessageError) {
            message = try SessionMessage(parsing: data)
        } catch {
            FuzzCheck.expect(!error.description.isEmpty, "a refusal without a reason")
            return
        }
        FuzzCheck.expect(
            ChannelMessage.Kind(firstByteOf: data) == .session, "a message that is not a session message parsed")
        FuzzCheck.expect(data.count <= SessionMessage.maximumLength, "a message over the length limit parsed")
        let encoded = message.bytes
        FuzzCheck.expect(
            (try? SessionMessage(parsing: encoded)) == message, "the encoding does not parse back to the message")
        // The two places where the parser reads less than the bytes say: a refusal reason this
        // side does not know is `other`, and an exit without a status ignores its status field.
        var expected = data
        if case .refused(_, .other, _) = message { expected[5] = SessionRefusal.other.rawValue }
        if case .exit(_, _, nil, _) = message { expected.replaceSubrange(14..<18, with: [0, 0, 0, 0]) }
        FuzzCheck.expect(encoded == expected, "the message re-encodes to other bytes")
        func cellsInBounds(_ cols: Int, _ rows: Int) -> Bool {
            (1...SessionMessage.maximumCells).contains(cols) && (1...SessionMessage.maximumCells).contains(rows)
        }
        switch message {
        case .open(_, let name, let cols, let rows, let window):
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
            FuzzCheck.expect(SessionMessage.windowRange.contains(window), "a window out of bounds")
            FuzzCheck.expect(name.map(HerdrSessionName.isValid) ?? true, "a session name herdr refuses")
        case .openAgent(_, let session, let pane, let cols, let rows, let window):
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
            FuzzCheck.expect(SessionMessage.windowRange.contains(window), "a window out of bounds")
            FuzzCheck.expect(
                HerdrSessionName.isValid(session) && HerdrAgent.isValidPane(pane), "an agent target breaking its rule")
        case .resume(_, let token, _, let cols, let rows, let window):
            FuzzCheck.expect(token.count == SessionMessage.tokenSize, "a token of the wrong size")
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
            FuzzCheck.expect(SessionMessage.windowRange.contains(window), "a window out of bounds")
        case .started(_, let token, _, let window):
            FuzzCheck.expect(token.count == SessionMessage.tokenSize, "a token of the wrong size")
            FuzzCheck.expect(SessionMessage.windowRange.contains(window), "a window out of bounds")
        case .output(_, _, let bytes), .input(_, let bytes):
            FuzzCheck.expect(bytes.count <= SessionMessage.maximumData, "data over maximumData")
        case .resize(_, let cols, let rows):
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
        case .exit(_, _, _, let signal):
            FuzzCheck.expect((signal?.utf8.count ?? 0) <= SessionMessage.maximumSignalName, "a signal name too long")
            FuzzCheck.expect(signal?.isEmpty != true, "an empty signal name")
        case .refused(_, _, let text):
            FuzzCheck.expect(text.utf8.count <= SessionMessage.maximumText, "a refusal text too long")
        case .openScreen(_, let target, let cols, let rows):
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
            switch target {
            case .session(let name):
                FuzzCheck.expect(name.map(HerdrSessionName.isValid) ?? true, "a session name herdr refuses")
            case .agent(let session, let pane):
                FuzzCheck.expect(
                    HerdrSessionName.isValid(session) && HerdrAgent.isValidPane(pane),
                    "an agent target breaking its rule")
            }
        case .resumeScreen(_, let token, let cols, let rows):
            FuzzCheck.expect(token.count == SessionMessage.tokenSize, "a token of the wrong size")
            FuzzCheck.expect(cellsInBounds(cols, rows), "cells out of bounds")
        case .screenStarted(_, let token, _):
            FuzzCheck.expect(token.count == SessionMessage.tokenSize, "a token of the wrong size")
        case .screen(let update):
            FuzzCheck.expect(cellsInBounds(update.columns, update.rows), "a screen out of bounds")
            FuzzCheck.expect(update.state > update.base, "a state that is not after its base")
            FuzzCheck.expect(
                update.cursor.row < update.rows && update.cursor.column < update.columns, "a cursor off the screen")
            FuzzCheck.expect(update.scroll < update.rows, "a scroll beyond the screen")
            FuzzCheck.expect((update.title?.utf8.count ?? 0) <= SessionMessage.maximumText, "a title too long")
            FuzzCheck.expect(
                zip(update.lines, update.lines.dropFirst()).allSatisfy { $0.index < $1.index }
                    && update.lines.allSatisfy { $0.index < update.rows && $0.cells.count <= update.columns },
                "rows out of order or out of bounds")
            FuzzCheck.expect(update.lines.allSatisfy(Self.cellsInBounds), "a cell out of bounds")
        case .screenAck(_, let state):
            FuzzCheck.expect(state > 0, "an acknowledgement of state 0")
        case .scrollbackRequest(_, _, let count):
            FuzzCheck.expect((1...ScrollbackLines.maximumRequest).contains(count), "a request out of bounds")
        case .scrollback(let lines):
            FuzzCheck.expect(
                lines.oldest <= lines.first && lines.first + UInt64(lines.lines.count) <= lines.total,
                "lines outside what is kept")
            FuzzCheck.expect(
                lines.lines.allSatisfy { $0.count <= SessionMessage.maximumCells && Self.cellsInBounds($0) },
                "a line out of bounds")
        case .credit, .endOfInput, .close:
            break
        }
    }
}
