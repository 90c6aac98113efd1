import Foundation
import Glibc
import HerdrKit

/// Reads stdin on a thread of its own (a blocking read never belongs on the cooperative pool)
/// and sends each chunk straight to the session's input, in order. Escape sequences (`~.`) are
/// recognised here too; only what needs the MainActor (disconnect, help) hops there.
///
/// After `~.` it reads nothing more, as ssh: what the person types while the connection closes
/// stays in the terminal for the shell that comes back.
final class StandardInputPump: Sendable {
    private let descriptor: Int32
    private let send: @Sendable ([UInt8]) -> Void
    private let interpretEscapes: Bool
    private let onAction: @MainActor @Sendable (EscapeSequence.Action) -> Void
    private let onEnd: @MainActor @Sendable () -> Void

    /// `send` takes each chunk on the pump's thread; `onAction` and `onEnd` run on the MainActor.
    init(
        descriptor: Int32 = STDIN_FILENO, send: @escaping @Sendable ([UInt8]) -> Void, interpretEscapes: Bool,
        onAction: @escaping @MainActor @Sendable (EscapeSequence.Action) -> Void,
        onEnd: @escaping @MainActor @Sendable () -> Void
    ) {
        self.descriptor = descriptor
        self.send = send
        self.interpretEscapes = interpretEscapes
        self.onAction = onAction
        self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stdin"
        thread.start()
    }

    /// Reads until end of input, a read error or `~.`.
    func run() {
        var escapes = EscapeSequence()
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let n = read(descriptor, &buffer, buffer.count)
            if n > 0 {
                let chunk = Array(buffer[0..<n])
                guard interpretEscapes else {
                    send(chunk)
                    continue
                }
                for action in escapes.feed(chunk) {
                    if case .send(let bytes) = action {
                        send(bytes)
                        continue
                    }
                    let onAction = onAction
                    Task { @MainActor in onAction(action) }
                    if action == .disconnect { return }
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
