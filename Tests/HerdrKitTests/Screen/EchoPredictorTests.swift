import HerdrKit
import ScreenModel
import SessionProtocol
import Testing

/// `EchoPredictor` with a fake clock: keys shown at once on a prompt and underlined until the
/// computer's screen shows them, withdrawn where the program does not echo (a password), not
/// shown again until one comes true, held after a key it cannot guess, off on the alternate
/// screen, and shown by `adaptive` only when the echo is slow.
@Suite struct EchoPredictorTests {
    static func frame(_ text: String, cursor: Int? = nil, input: UInt64, alternate: Bool = false) -> ScreenFrame {
        let cells = text.map { ScreenCell(text: String($0)) }
        var screen = TerminalScreen(
            lines: [cells + Array(repeating: .blank, count: 20 - cells.count), Array(repeating: .blank, count: 20)],
            cursor: TerminalScreen.Cursor(row: 0, column: cursor ?? cells.count, visible: true))
        screen.modes.alternateScreen = alternate
        return ScreenFrame(screen: screen, state: 1, inputBytes: input, rang: false)
    }

    /// The first row as drawn, a predicted (underlined) character in brackets.
    static func row(_ predictor: EchoPredictor) -> String {
        guard let screen = predictor.display else { return "" }
        var text = ""
        for cell in screen.lines[0] {
            let character = cell.text.isEmpty ? " " : cell.text
            text += cell.style.underline == .single ? "[\(character)]" : character
        }
        while text.hasSuffix(" ") { text.removeLast() }
        return text + "|\(screen.cursor.column)"
    }

    @Test func keysOnAPromptShowAtOnceAndAreConfirmedByTheComputer() {
        var predictor = EchoPredictor(mode: .always)
        predictor.received(Self.frame("$ ", input: 0), now: 0)
        predictor.typed(Array("ls".utf8), now: 1)
        #expect(Self.row(predictor) == "$ [l][s]|4")
        // The computer's screen shows the first: it is no longer drawn as a guess.
        predictor.received(Self.frame("$ l", input: 0), now: 1.1)
        #expect(Self.row(predictor) == "$ l[s]|4")
        predictor.received(Self.frame("$ ls", input: 2), now: 1.2)
        #expect(Self.row(predictor) == "$ ls|4" && predictor.isShowing)
        // A backspace erases the character before the cursor.
        predictor.typed([0x7F], now: 2)
        #expect(Self.row(predictor) == "$ l|3")
    }

    @Test func aPasswordIsWithdrawnAndTrustComesBackWithAnEcho() {
        var predictor = EchoPredictor(mode: .always)
        predictor.received(Self.frame("Password: ", input: 0), now: 0)
        predictor.typed(Array("abc".utf8), now: 1)
        #expect(Self.row(predictor) == "Password: [a][b][c]|13")
        // The program had the keys for 50 ms and drew none: the guesses go.
        predictor.received(Self.frame("Password: ", input: 3), now: 1.2)
        #expect(Self.row(predictor) == "Password:|10" && !predictor.isShowing)
        predictor.typed(Array("d".utf8), now: 2)
        #expect(Self.row(predictor) == "Password:|10", "not shown while not believed")
        // An echo that comes true (the program echoes again) earns the trust back.
        predictor.received(Self.frame("Password: d", input: 4), now: 2.1)
        #expect(predictor.isShowing)
        predictor.typed(Array("e".utf8), now: 3)
        #expect(Self.row(predictor) == "Password: d[e]|12")
    }

    @Test func theLastColumnWrapsToTheNextRow() {
        var predictor = EchoPredictor(mode: .always)
        let line = String(repeating: "-", count: 19)
        predictor.received(Self.frame(line, input: 0), now: 0)
        predictor.typed(Array("x".utf8), now: 1)
        #expect(Self.row(predictor) == line + "[x]|0" && predictor.display?.cursor.row == 1, "wrapped")
        // The computer shows the x and its cursor waits on it to wrap: the next key goes below.
        predictor.received(Self.frame(line + "x", cursor: 19, input: 0), now: 1.1)
        predictor.typed(Array("y".utf8), now: 1.2)
        #expect(predictor.display?.lines[1][0].text == "y" && predictor.display?.cursor.row == 1)
        #expect(predictor.display?.cursor.column == 1)
    }

    @Test func aKeyItCannotGuessHoldsPredictionsUntilTheComputerCoversIt() {
        var predictor = EchoPredictor(mode: .always)
        predictor.received(Self.frame("$ ", input: 0), now: 0)
        predictor.typed(Array("\rx".utf8), now: 1)
        #expect(Self.row(predictor) == "$|2", "Enter, then nothing guessed")
        // Once the computer covered the Enter, the next key is guessed after the x still on its
        // way, which is not drawn; keys typed meanwhile do not prolong the hold.
        predictor.received(Self.frame("$ ", cursor: 2, input: 1), now: 1.1)
        predictor.typed(Array("y".utf8), now: 1.2)
        #expect(Self.row(predictor) == "$  [y]|4")
        predictor.received(Self.frame("$ xy", input: 3), now: 1.3)
        predictor.typed(Array("z".utf8), now: 1.4)
        #expect(Self.row(predictor) == "$ xy[z]|5")
    }

    @Test func theAlternateScreenAndNeverPredictNothing() {
        var fullScreen = EchoPredictor(mode: .always)
        fullScreen.received(Self.frame("vim", cursor: 0, input: 0, alternate: true), now: 0)
        fullScreen.typed(Array("ij".utf8), now: 1)
        #expect(Self.row(fullScreen) == "vim|0")
        var never = EchoPredictor(mode: .never)
        never.received(Self.frame("$ ", input: 0), now: 0)
        never.typed(Array("ls".utf8), now: 1)
        #expect(Self.row(never) == "$|2")
    }

    @Test func adaptiveShowsPredictionsOnlyWhenTheEchoIsSlow() {
        var predictor = EchoPredictor(mode: .adaptive)
        predictor.received(Self.frame("$ ", input: 0), now: 0)
        var now = 1.0
        var line = "$ "
        // Echoes 10 ms after each key: nothing to hide, nothing predicted on screen.
        for key in "abc" {
            predictor.typed(Array(String(key).utf8), now: now)
            line.append(key)
            predictor.received(Self.frame(line, input: UInt64(line.count - 2)), now: now + 0.010)
            now += 1
        }
        predictor.typed(Array("d".utf8), now: now)
        #expect(Self.row(predictor) == "$ abc|5" && !predictor.isShowing)
        // The path slows to 150 ms: the echo time passes 30 ms and guesses are drawn.
        for _ in 0..<4 {
            line.append("d")
            predictor.received(Self.frame(line, input: UInt64(line.count - 2)), now: now + 0.150)
            now += 1
            predictor.typed(Array("d".utf8), now: now)
        }
        #expect(predictor.isShowing && (predictor.echoTime ?? 0) > EchoPredictor.adaptiveThreshold)
        #expect(Self.row(predictor).hasSuffix("[d]|\(line.count + 1)"))
    }
}
