import CSystem
import Foundation
import Glibc
import Synchronization

/// The permission bits of the file at `path`.
public func fileMode(_ path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw FixtureError("stat \(path): \(String(cString: strerror(errno)))") }
    return info.st_mode & 0o7777
}

public func readText(_ url: URL) throws -> String {
    String(decoding: try Data(contentsOf: url), as: UTF8.self)
}

public func writeText(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}

/// Runs `ssh-keygen` and throws when it does not exit 0.
@discardableResult
public func sshKeygen(_ arguments: [String]) throws -> ProcessResult {
    try ProcessRunner.run("/usr/bin/ssh-keygen", arguments, check: true)
}

/// Runs `body(i)` for i in 0..<count on `count` threads released at the same moment, and returns the
/// results in index order.
public func runConcurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
    let results = Mutex([Int: T]())
    let ready = DispatchSemaphore(value: 0)
    let start = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for index in 0..<count {
        done.enter()
        Thread {
            ready.signal()
            start.wait()
            let value = body(index)
            results.withLock { $0[index] = value }
            done.leave()
        }.start()
    }
    for _ in 0..<count { ready.wait() }
    for _ in 0..<count { start.signal() }
    done.wait()
    return results.withLock { dictionary in (0..<count).map { dictionary[$0]! } }
}

/// Runs `body` on a thread of its own whose file accesses are checked as user `uid` (nobody by
/// default), so tests running as root can still show what a permission failure does.
public func asFileSystemUser<T: Sendable>(_ uid: uid_t = 65534, _ body: @escaping @Sendable () throws -> T) throws -> T
{
    let result = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let previous = csystem_setfsuid(uid)
        defer {
            csystem_setfsuid(UInt32(previous))
            done.signal()
        }
        result.withLock { $0 = Result { try body() } }
    }.start()
    done.wait()
    return try result.withLock { $0! }.get()
}
