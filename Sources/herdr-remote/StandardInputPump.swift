import Foundation
import Glibc
import HerdrKit

/// Reads stdin on a thread of its own (a blocking read never belongs on the cooperative pool)
/// and sends each chunk straight to the session's input, in order. Escape sequences (`~.`) are
/// recognised here too; only what needs the MainActor (disconnect, help) hops there.
final class StandardInputPump: Sendable {
    private let input: TerminalInput
    private let interpretEscapes: Bool
    private let onAction: @MainActor @Sendable (EscapeSequence.Action) -> Void
    private let onEnd: @MainActor @Sendable () -> Void

    init(
        input: TerminalInput, interpretEscapes: Bool,
        onAction: @escaping @MainActor @Sendable (EscapeSequence.Action) -> Void,
        onEnd: @escaping @MainActor @Sendable () -> Void
    ) {
        self.input = input
        self.interpretEscapes = interpretEscapes
        self.onAction = onAction
        self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stdin"
        thread.start()
    }

    private func run() {
        var escapes = EscapeSequence()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(STDIN_FILENO, &buffer, buffer.count)
            if n > 0 {
                let chunk = Array(buffer[0..<n])
                guard interpretEscapes else {
                    input.send(chunk)
                    continue
                }
                for action in escapes.feed(chunk) {
                    if case .send(let bytes) = action {
                        input.send(bytes)
                    } else {
                        let onAction = onAction
                        Task { @MainActor in onAction(action) }
                    }
                }
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                let onEnd = onEnd
                Task { @MainActor in onEnd() }
                return
            }
        }
    }
}
