import Foundation
import Glibc

/// A directory under /tmp made for one test or fixture, removed with `remove()`.
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// Creates `/tmp/<prefix>XXXXXX` with the given mode (fixtures that other users read need 0755).
    public init(prefix: String = "herdr-test-", mode: mode_t = 0o700) throws {
        var template = Array("/tmp/\(prefix)XXXXXX".utf8CString)
        guard let result = mkdtemp(&template) else {
            throw FixtureError("mkdtemp failed: \(String(cString: strerror(errno)))")
        }
        let path = String(cString: result)
        guard chmod(path, mode) == 0 else { throw FixtureError("chmod \(path) failed") }
        url = URL(fileURLWithPath: path, isDirectory: true)
    }

    deinit { remove() }

    public func appending(_ component: String) -> URL { url.appendingPathComponent(component) }
    public func file(_ name: String) -> URL { url.appendingPathComponent(name) }

    /// The names in the directory (or a subdirectory), sorted.
    public func listing(_ subdirectory: String? = nil) throws -> [String] {
        let directory = subdirectory.map { url.appendingPathComponent($0).path } ?? path
        return try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A fixture that could not be set up; the message says what to fix.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
