import CSystem
import Foundation
import Glibc

/// Runs code inside a network namespace: on a thread of its own that joins the namespace with
/// setns and then ends, so no other thread ever changes namespace. Sockets the code opens live
/// in the namespace, and programs it spawns start there (a child takes its parent thread's
/// namespaces); unlike `ip netns exec`, /etc/netns/NAME is not mounted over /etc.
public enum NamespaceThread {
    /// Runs `body` inside the namespace `/run/netns/NAME` and returns what it returns or throws.
    public static func run<T: Sendable>(in namespace: String, _ body: @escaping @Sendable () throws -> T) throws -> T {
        let outcome = Outcome<T>()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            defer { done.signal() }
            let path = "/run/netns/\(namespace)"
            let fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                outcome.result = .failure(FixtureError("opening \(path): \(String(cString: strerror(errno)))"))
                return
            }
            let joined = csystem_setns_network(fd)
            let error = errno
            close(fd)
            guard joined == 0 else {
                outcome.result = .failure(FixtureError("setns into \(namespace): \(String(cString: strerror(error)))"))
                return
            }
            outcome.result = Result { try body() }
        }
        thread.start()
        done.wait()
        return try outcome.result.get()
    }

    /// What the thread hands back; written by it before it signals, read after.
    private final class Outcome<T>: @unchecked Sendable {
        var result: Result<T, any Error> = .failure(FixtureError("the namespace thread did not run"))
    }
}
