import Foundation
import Glibc
import Synchronization

/// Programs a test runs as another account (`herdr-pair` as the test user, and as the forced
/// command sshd runs for it) must lie on a path that account can traverse. The build directory
/// may not be one: a checkout in `mktemp -d` sits under a 0700 directory. This copies a built
/// program once per test process into a 0755 directory under /tmp, removed when the process exits.
public enum UserRunnableCopy {
    private static let copies = Mutex<[String: String]>([:])
    nonisolated(unsafe) private static var directory: String?

    /// A copy of `program` (an absolute path) that every account can run.
    public static func of(_ program: String) throws -> String {
        try copies.withLock { copies in
            if let copy = copies[program] { return copy }
            if directory == nil {
                var template = Array("/tmp/herdr-test-bin-XXXXXX".utf8CString)
                guard let made = mkdtemp(&template) else {
                    throw FixtureError("mkdtemp failed: \(String(cString: strerror(errno)))")
                }
                let path = String(cString: made)
                guard chmod(path, 0o755) == 0 else { throw FixtureError("chmod \(path) failed") }
                directory = path
                atexit {
                    if let path = UserRunnableCopy.directory { try? FileManager.default.removeItem(atPath: path) }
                }
            }
            let copy = directory! + "/" + URL(fileURLWithPath: program).lastPathComponent
            try? FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: program, toPath: copy)
            guard chmod(copy, 0o755) == 0 else { throw FixtureError("chmod \(copy) failed") }
            copies[program] = copy
            return copy
        }
    }
}
