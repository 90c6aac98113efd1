import Synchronization

/// An `OutputTail` that the connection thread (direct output) and the MainActor both write.
final class SharedOutputTail: Sendable {
    private let tail = Mutex(OutputTail())

    func append(_ bytes: [UInt8]) { tail.withLock { $0.append(bytes) } }
    func reset() { tail.withLock { $0 = OutputTail() } }
    func readableLines() -> [String] { tail.withLock { $0.readableLines() } }
}
