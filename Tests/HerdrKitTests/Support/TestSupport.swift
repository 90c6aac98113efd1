import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under the system temp directory, removed (with everything in it) on deinit.
final class TemporaryDirectory: Sendable {
    let url: URL
    var path: String { url.path }

    init() throws {
        var template = Array((NSTemporaryDirectory() + "/herdrkit-test-XXXXXX").utf8CString)
        guard let created = mkdtemp(&template) else {
            throw TestFailure("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        url = URL(fileURLWithPath: String(cString: created), isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the directory (or a subdirectory), sorted.
    func listing(_ subdirectory: String? = nil) throws -> [String] {
        let directory = subdirectory.map { url.appendingPathComponent($0).path } ?? path
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

struct ProcessResult: Sendable {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs a program to completion and captures its output.
@discardableResult
func run(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: URL? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    // Drain stderr on another thread so neither pipe can fill up and stall the child.
    let errorData = Mutex(Data())
    let errorDone = DispatchSemaphore(value: 0)
    let errHandle = err.fileHandleForReading
    Thread {
        let data = errHandle.readDataToEndOfFile()
        errorData.withLock { $0 = data }
        errorDone.signal()
    }.start()
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    errorDone.wait()
    process.waitUntilExit()
    return ProcessResult(
        status: process.terminationStatus,
        stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
}

/// Runs `ssh-keygen` and fails the test when it does not exit 0.
@discardableResult
func sshKeygen(_ arguments: [String]) throws -> ProcessResult {
    let result = try run("/usr/bin/ssh-keygen", arguments)
    guard result.status == 0 else {
        throw TestFailure("ssh-keygen \(arguments) exited \(result.status): \(result.stderr)")
    }
    return result
}

/// Runs `body(i)` for i in 0..<count on `count` threads released at the same moment, and returns the
/// results in index order.
func runConcurrently<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
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

/// The permission bits of the file at `path`.
func fileMode(_ path: String) throws -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { throw TestFailure("stat \(path): \(String(cString: strerror(errno)))") }
    return info.st_mode & 0o7777
}

func readText(_ url: URL) throws -> String {
    String(decoding: try Data(contentsOf: url), as: UTF8.self)
}

func writeText(_ text: String, to url: URL) throws {
    try Data(text.utf8).write(to: url)
}
