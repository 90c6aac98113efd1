import Foundation

/// Runs blocking work (a prompt on the terminal, a blocking read) on a thread of its own, so it
/// never occupies a thread of Swift's cooperative pool, and awaits its result.
public enum BlockingCall {
    public static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }
}
