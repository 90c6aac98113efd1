import Foundation
import Glibc
import HerdrKit
import TestSupport

/// ssh_config files written under a temporary directory, resolved both by `SSHConfigResolver`
/// and by the real `ssh -G -F FILE ALIAS`. The fixture's `home` is `$HOME` for ssh (OpenSSH
/// 9.2 expands an Include's `~`, and so its relative paths, through `$HOME`; checked with
/// `ssh -G`) and the resolver's home, so relative Includes are compared too, without touching
/// any account's real home.
///
/// In the texts, `$ROOT` is the temporary directory and `$HOME` the fixture's home.
final class SSHConfigFixture {
    let directory: TemporaryDirectory
    let home: String
    let root: String

    /// Writes `files` (paths relative to the home, or starting with `$ROOT/`), mode 0644 as
    /// ssh wants included files.
    init(_ files: [String: String]) throws {
        directory = try TemporaryDirectory(prefix: "herdr-sshconfig-")
        root = directory.path
        home = root + "/home"
        try FileManager.default.createDirectory(atPath: home + "/.ssh", withIntermediateDirectories: true)
        for (name, text) in files {
            let path = self.path(name)
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            try Data(expand(text).utf8).write(to: URL(fileURLWithPath: path))
            guard chmod(path, 0o644) == 0 else { throw FixtureError("chmod \(path) failed") }
        }
    }

    /// The absolute path of a fixture file name.
    func path(_ name: String) -> String {
        name.hasPrefix("$ROOT/") ? root + name.dropFirst(5) : home + "/" + name
    }

    func expand(_ text: String) -> String {
        text.replacingOccurrences(of: "$ROOT", with: root).replacingOccurrences(of: "$HOME", with: home)
    }

    /// The account running the tests, with the fixture's home.
    func environment() throws -> SSHConfigEnvironment {
        var environment = try SSHConfigEnvironment.current()
        environment.homeDirectory = home
        environment.variables = ["HOME": home]
        return environment
    }

    /// The resolver for `ssh -F` on one fixture file.
    func resolver(file: String = ".ssh/config") throws -> SSHConfigResolver {
        SSHConfigResolver.file(path(file), environment: try environment())
    }

    /// What `ssh -G -F FILE ALIAS` prints, the keys lowercased, each with its values in order.
    func sshG(_ alias: String, file: String = ".ssh/config") throws -> OpenSSHDump {
        let result = try ProcessRunner.run(
            "/usr/bin/ssh", ["-G", "-F", path(file), alias],
            environment: ["HOME": home, "PATH": "/usr/bin:/bin", "LC_ALL": "C"], timeout: 30)
        var values: [String: [String]] = [:]
        for line in result.stdout.split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
            values[parts[0].lowercased(), default: []].append(parts.count > 1 ? String(parts[1]) : "")
        }
        return OpenSSHDump(status: result.status, values: values, stderr: result.stderr)
    }
}

/// The lines of `ssh -G` a resolution is compared with.
struct OpenSSHDump {
    let status: Int32
    let values: [String: [String]]
    let stderr: String

    func one(_ key: String) -> String? { values[key]?.first }
    func all(_ key: String) -> [String] { values[key] ?? [] }
}
