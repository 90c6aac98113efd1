import ScreenModel

/// The device's copy of a screen session's screen, kept from the computer's `screen` messages:
/// each part applied as it comes, a state complete at its last part. Checks what the computer
/// may not do (a base it does not hold, parts of two states mixed, a scroll on a screen of another
/// size) and says so, as `DeviceSession` does for bytes.
public struct ScreenReplica: Sendable {
    /// What one message did.
    public enum Outcome: Equatable, Sendable {
        /// A part applied; more of the state follow.
        case partial
        /// State `state` is complete: draw it and acknowledge it. `rang` is whether the bell
        /// rang since the state before.
        case complete(state: UInt64, rang: Bool)
        /// The computer broke the protocol: the session cannot go on.
        case broken(String)
    }

    public private(set) var screen: TerminalScreen
    /// The last complete state, 0 before one.
    public private(set) var state: UInt64 = 0
    /// The input bytes the program had had time to echo at that state.
    public private(set) var inputBytes: UInt64 = 0
    public private(set) var bells: UInt32 = 0
    /// The state whose parts are arriving, if one is.
    private var arriving: UInt64?

    public init() {
        screen = TerminalScreen(lines: [[.blank]], cursor: TerminalScreen.Cursor(row: 0, column: 0, visible: true))
    }

    /// Applies one part.
    public mutating func apply(_ update: ScreenUpdate) -> Outcome {
        if let arriving {
            guard update.state == arriving else {
                return .broken("screen state \(update.state) began before state \(arriving) ended")
            }
        } else {
            guard update.state > state else {
                return .broken("screen state \(update.state) came after state \(state)")
            }
            guard update.base == 0 || update.base == state else {
                return .broken(
                    "screen state \(update.state) changes state \(update.base), but this device has \(state)")
            }
            let sized = update.rows == screen.rows && update.columns == screen.columns
            guard update.base == 0 || sized || update.scroll == 0 else {
                return .broken("screen state \(update.state) scrolls a screen of another size")
            }
            if update.base == 0 || !sized {
                screen.lines = Array(
                    repeating: Array(repeating: .blank, count: update.columns), count: update.rows)
            }
            if update.scroll > 0 {
                screen.lines.removeFirst(update.scroll)
                screen.lines += Array(
                    repeating: Array(repeating: ScreenCell.blank, count: update.columns), count: update.scroll)
            }
            if update.base == 0 { screen.title = "" }
            arriving = update.state
        }
        guard update.rows == screen.rows, update.columns == screen.columns else {
            return .broken("the parts of screen state \(update.state) disagree on its size")
        }
        for row in update.lines {
            screen.lines[row.index].replaceSubrange(row.column..<row.end, with: row.cells)
            if !row.keepsRest {
                screen.lines[row.index].replaceSubrange(
                    row.end..., with: repeatElement(ScreenCell.blank, count: update.columns - row.end))
            }
        }
        if let title = update.title { screen.title = title }
        screen.cursor = update.cursor
        screen.modes = update.modes
        guard update.isLastPart else { return .partial }
        arriving = nil
        state = update.state
        inputBytes = update.inputBytes
        let rang = update.bells != bells && update.base != 0
        bells = update.bells
        return .complete(state: state, rang: rang)
    }

    /// A new connection: the computer starts again with a whole state; a half-arrived one is gone.
    public mutating func restart() {
        arriving = nil
    }
}
