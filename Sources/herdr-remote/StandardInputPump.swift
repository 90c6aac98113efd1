import Foundation
import Glibc

/// Reads stdin on a thread of its own (a blocking read never belongs on the cooperative pool)
/// and hands each chunk to the MainActor, in order.
final class StandardInputPump: Sendable {
    private let onBytes: @MainActor @Sendable ([UInt8]) -> Void
    private let onEnd: @MainActor @Sendable () -> Void

    init(onBytes: @escaping @MainActor @Sendable ([UInt8]) -> Void, onEnd: @escaping @MainActor @Sendable () -> Void) {
        self.onBytes = onBytes
        self.onEnd = onEnd
    }

    func start() {
        let onBytes = onBytes
        let onEnd = onEnd
        let thread = Thread {
            var buffer = [UInt8](repeating: 0, count: 16384)
            while true {
                let n = read(STDIN_FILENO, &buffer, buffer.count)
                if n > 0 {
                    let chunk = Array(buffer[0..<n])
                    // Wait for the MainActor to take each chunk, so stdin is read no faster than it is sent.
                    let taken = DispatchSemaphore(value: 0)
                    Task { @MainActor in
                        onBytes(chunk)
                        taken.signal()
                    }
                    taken.wait()
                } else if n < 0 && errno == EINTR {
                    continue
                } else {
                    Task { @MainActor in onEnd() }
                    return
                }
            }
        }
        thread.name = "stdin"
        thread.start()
    }
}
