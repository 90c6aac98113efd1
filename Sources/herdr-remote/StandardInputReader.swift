import CLISupport
import Foundation
import Glibc
import HerdrKit
import Synchronization

/// Reads stdin for `watch`, on a thread of its own, for as long as the program runs, and hands each
/// chunk to where it goes now (`route`): the board's keys, or the agent's terminal that is open
/// (`routeToSession`). Unlike `connect`'s `StandardInputPump`, it reads on after `~.`: what is
/// typed then goes back to the board.
final class StandardInputReader: Sendable {
    private let descriptor: Int32
    private let route = Mutex<(@Sendable ([UInt8]) -> Void)?>(nil)
    private let onEnd: @MainActor @Sendable () -> Void

    /// `onEnd` runs on the MainActor when stdin ends or fails.
    init(descriptor: Int32 = STDIN_FILENO, onEnd: @escaping @MainActor @Sendable () -> Void) {
        self.descriptor = descriptor
        self.onEnd = onEnd
    }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "stdin"
        thread.start()
    }

    /// Where chunks go from now on (nil: dropped).
    func route(_ destination: (@Sendable ([UInt8]) -> Void)?) {
        route.withLock { $0 = destination }
    }

    /// Chunks to `session`'s input, with ssh's escapes (`~.` disconnects it, `~?` lists them).
    @MainActor
    func routeToSession(_ session: TerminalSession) {
        let input = session.input
        let escapes = Mutex(EscapeSequence())
        route { bytes in
            for action in escapes.withLock({ $0.feed(bytes) }) {
                switch action {
                case .send(let bytes): input.send(bytes)
                case .disconnect: DispatchQueue.main.async { MainActor.assumeIsolated { session.disconnect() } }
                case .showHelp: StandardError.write(EscapeSequence.help)
                }
            }
        }
    }

    private func run() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(descriptor, &buffer, buffer.count)
            if n > 0 {
                let chunk = Array(buffer[0..<n])
                route.withLock { $0 }?(chunk)
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
