import ScreenModel
import SessionProtocol

/// Predictive local echo for a screen session, as mosh's client does it: a character typed on a
/// line is shown at once where the program would echo it, marked (underlined) until a screen
/// from the computer shows it; a prediction the computer's screen refutes (the program did not
/// echo: a password, a full-screen program, a command that drew something else) is withdrawn,
/// and predictions are then made but not shown until one comes true again. Pure: the keys and
/// the computer's screens in, with the time; the screen to draw out.
///
/// A prediction is judged by the input count of the computer's screens (`ScreenFrame.inputBytes`,
/// the bytes the program had had 50 ms to echo): once a screen covers a key, the key's echo was
/// either seen by then or it is not coming. Only printable ASCII and backspace on the current
/// line are predicted (the last column wrapping to the next row); any other key (Enter, an
/// arrow, a control character) stops predicting until the computer covers it, the keys typed
/// meanwhile counted so that guesses resume after them, and nothing is predicted on the
/// alternate screen, where full-screen programs draw as they like.
public struct EchoPredictor: Sendable {
    /// When predictions are shown (`connect --predict`).
    public enum Mode: String, Sendable, CaseIterable {
        /// Whenever they are believed.
        case always
        /// Never: the screen is the computer's alone.
        case never
        /// When keys take longer than `adaptiveThreshold` to echo (mosh's default).
        case adaptive
    }

    /// The echo time above which `adaptive` shows predictions: mosh's 30 ms.
    public static let adaptiveThreshold = 0.030

    private struct Prediction: Sendable {
        /// The input count once this key is sent: a screen covering it judges it.
        var input: UInt64
        var row: Int
        var column: Int
        /// The text the cell will show: the character, or "" for a backspace's erase.
        var text: String
        var typedAt: Double
        /// When a screen from the computer first showed it.
        var seenAt: Double?
        /// Where the cursor stands after this key (the next row's start after the last column,
        /// as a terminal wraps).
        var after: (row: Int, column: Int)
    }

    public let mode: Mode
    /// Input bytes typed in the session so far (the computer counts the same bytes).
    private var typed: UInt64 = 0
    private var pending: [Prediction] = []
    /// Nothing is predicted until the computer covered input up to here (a key not guessed).
    private var holdUntil: UInt64 = 0
    /// Printable keys and backspaces typed while holding, not drawn: once the hold ends, those
    /// the computer has not covered yet still move its cursor (by `advance`) when they arrive.
    private var blind: [(input: UInt64, advance: Int)] = []
    /// Whether predictions are shown: false after a wrong one, until one comes true.
    private var trusted = true
    /// The latest screen from the computer, and the input it covers.
    private var latest: ScreenFrame?
    /// Smoothed seconds from a key to a screen showing it (RFC 6298's gain of 1/8).
    public private(set) var echoTime: Double?

    public init(mode: Mode) { self.mode = mode }

    /// Whether predictions are drawn now.
    public var isShowing: Bool {
        guard trusted else { return false }
        switch mode {
        case .always: return true
        case .never: return false
        case .adaptive: return (echoTime ?? 0) > Self.adaptiveThreshold
        }
    }

    /// The person typed `bytes` at `now`; they go to the computer in this order.
    public mutating func typed(_ bytes: [UInt8], now: Double) {
        for byte in bytes {
            typed += 1
            guard mode != .never else { continue }
            let guessable = (0x20...0x7E).contains(byte) || byte == 0x7F || byte == 0x08
            guard let frame = latest, !frame.screen.modes.alternateScreen, frame.inputBytes >= holdUntil else {
                // Keys typed while holding do not prolong the hold (someone typing faster than
                // the round trip would never see a guess again): a guessable one is counted.
                if guessable { blind.append((typed, byte >= 0x20 && byte != 0x7F ? 1 : -1)) } else { holdUntil = typed }
                continue
            }
            let screen = frame.screen
            let (row, column) = cursor(of: screen)
            // The last column wraps to the next row; on the last row it would scroll: not guessed.
            let wraps = column >= screen.columns - 1
            switch byte {
            case 0x20...0x7E where row < screen.rows && column < screen.columns && (!wraps || row + 1 < screen.rows):
                pending.append(
                    Prediction(
                        input: typed, row: row, column: column, text: String(UnicodeScalar(byte)), typedAt: now,
                        after: wraps ? (row + 1, 0) : (row, column + 1)))
            case 0x7F where column > 0 && column < screen.columns, 0x08 where column > 0 && column < screen.columns:
                pending.append(
                    Prediction(
                        input: typed, row: row, column: column - 1, text: "", typedAt: now, after: (row, column - 1)))
            default:
                // Enter, an escape sequence, a multibyte character, the end of the line: what the
                // program does with it is not a guess worth drawing.
                holdUntil = typed
            }
        }
    }

    /// A complete screen from the computer at `now`: predictions it shows are seen, and those
    /// it covers are judged.
    public mutating func received(_ frame: ScreenFrame, now: Double) {
        latest = frame
        blind.removeAll { $0.input <= frame.inputBytes }
        for index in pending.indices where pending[index].seenAt == nil && Self.shows(frame.screen, pending[index]) {
            pending[index].seenAt = now
            let sample = now - pending[index].typedAt
            echoTime = echoTime.map { 0.875 * $0 + 0.125 * sample } ?? sample
        }
        while let first = pending.first, first.input <= frame.inputBytes {
            guard first.seenAt != nil else {
                // The program had time to echo it and did not: every guess after it goes too.
                pending.removeAll()
                trusted = false
                return
            }
            trusted = true
            pending.removeFirst()
        }
    }

    /// The screen to draw: the computer's latest, with the predictions it does not show yet
    /// drawn underlined and the cursor after them (while they are shown).
    public var display: TerminalScreen? {
        guard var screen = latest?.screen else { return nil }
        guard isShowing else { return screen }
        var cursor: (row: Int, column: Int)?
        for prediction in pending where prediction.seenAt == nil {
            guard prediction.row < screen.rows, prediction.column < screen.columns else { continue }
            var style = CellStyle.plain
            style.underline = .single
            screen.lines[prediction.row][prediction.column] =
                prediction.text.isEmpty ? .blank : ScreenCell(text: prediction.text, style: style)
            cursor = prediction.after
        }
        if let cursor {
            screen.cursor.row = min(cursor.row, screen.rows - 1)
            screen.cursor.column = min(cursor.column, screen.columns - 1)
        }
        return screen
    }

    /// Where the next key's echo goes: after the last prediction not yet seen, else the
    /// computer's cursor. A cursor on a written last column is taken to wait to wrap, as a
    /// terminal's does after writing there.
    private func cursor(of screen: TerminalScreen) -> (row: Int, column: Int) {
        if let last = pending.last(where: { $0.seenAt == nil }) { return last.after }
        let cursor = screen.cursor
        if cursor.column == screen.columns - 1, cursor.row < screen.rows,
            !screen.lines[cursor.row][cursor.column].text.isEmpty
        {
            return (cursor.row + 1, 0)
        }
        // Keys typed blind that the computer has not covered land after its cursor.
        let column = cursor.column + blind.reduce(0) { $0 + $1.advance }
        return (cursor.row, column < 0 ? screen.columns : column)
    }

    private static func shows(_ screen: TerminalScreen, _ prediction: Prediction) -> Bool {
        guard prediction.row < screen.rows, prediction.column < screen.columns else { return false }
        let text = screen.lines[prediction.row][prediction.column].text
        return prediction.text.isEmpty ? (text.isEmpty || text == " ") : text == prediction.text
    }
}
