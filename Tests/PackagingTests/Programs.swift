import Foundation
import TestSupport

/// The four built programs, and what their `--help` says they take: the reference the generated
/// completion scripts and man pages are checked against, so they cannot drift from help.
enum Programs {
    static let names = ["herdr-remote", "herdr-pair", "herdr-host", "herdr-relay"]

    /// The directory the programs were built into (beside this test bundle).
    static var directory: String {
        URL(fileURLWithPath: BuiltProgram.path("herdr-remote")).deletingLastPathComponent().path
    }

    /// The repository this test was built from.
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Runs a built program; fails the test unless it exits 0.
    static func run(
        _ name: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> String {
        try ProcessRunner.run(BuiltProgram.path(name), arguments, environment: environment, check: true).stdout
    }

    /// One command of a program as its help shows it.
    struct Command {
        /// Program name first.
        var path: [String]
        /// Every `--long` and `-s` word in its OPTIONS section (with `-h`, `--help`, `--version`).
        var options: [String]
        var subcommands: [String]
    }

    /// Every command of `program`, read from `--help` at each level.
    static func commands(of program: String) throws -> [Command] {
        var result: [Command] = []
        var pending = [[program]]
        while let path = pending.first {
            pending.removeFirst()
            let help = try run(program, Array(path.dropFirst()) + ["--help"])
            let command = Command(
                path: path, options: section("OPTIONS", of: help).flatMap(optionWords),
                subcommands: section("SUBCOMMANDS", of: help).compactMap(subcommandName))
            result.append(command)
            pending += command.subcommands.map { path + [$0] }
        }
        return result
    }

    /// The lines of a help section, up to the blank line that ends it.
    private static func section(_ title: String, of help: String) -> [Substring] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false)
        guard let start = lines.firstIndex(of: Substring("\(title):")) else { return [] }
        return Array(lines[(start + 1)...].prefix { !$0.isEmpty })
    }

    /// `  -p, --port <port>    SSH port.` → `-p`, `--port` (a label starts at column 2).
    private static func optionWords(_ line: Substring) -> [String] {
        guard line.hasPrefix("  -") else { return [] }
        let label = line.dropFirst(2).components(separatedBy: "  ")[0]
        return label.split(whereSeparator: { $0 == " " || $0 == "," }).filter { $0.hasPrefix("-") }.map(String.init)
    }

    /// `  connect                 Attach to ...` → `connect`.
    private static func subcommandName(_ line: Substring) -> String? {
        guard line.hasPrefix("  "), !line.hasPrefix("   "), let word = line.split(separator: " ").first,
            !word.hasPrefix("-"), word != "See"
        else { return nil }
        return String(word)
    }
}
