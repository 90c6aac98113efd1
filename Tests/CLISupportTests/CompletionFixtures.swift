import CLISupport
import Foundation
import TestSupport

/// A program with every kind of completion, and a stand-in for it on PATH that answers the
/// completion command (`tool list --names`) the way a real program would.
enum CompletionFixtures {
    static let hostNames: CompletionSource = .command(["list", "--names"])

    static let tool = CommandSpec(
        name: "tool", abstract: "A tool.", discussion: "It does things.\n\n  tool connect alpha", version: "2.0",
        flags: [FlagSpec("quiet", short: "q", help: "Say less.")],
        subcommands: [
            CommandSpec(
                name: "connect", abstract: "Connect to a saved host.",
                arguments: [PositionalSpec("host", help: "A saved host.", completion: hostNames)],
                options: [
                    OptionSpec("road", short: "r", help: "Which road.", completion: .values(["home", "relay"]))
                ],
                flags: [FlagSpec("verbose", short: "v", help: "Say more.", isRepeatable: true)],
                handler: { _ in .success }),
            CommandSpec(
                name: "list", abstract: "List the saved hosts.",
                flags: [FlagSpec("names", help: "Only their names.")], handler: { _ in .success }),
            CommandSpec(
                name: "copy", abstract: "Copy files into a directory.",
                arguments: [
                    PositionalSpec("destination", help: "Where to.", completion: .directories),
                    PositionalSpec("file", help: "What.", isRepeating: true, completion: .files),
                ],
                options: [OptionSpec("log", valueName: "file", help: "Log here.", completion: .files)],
                handler: { _ in .success }),
            CommandSpec(
                name: "pins", abstract: "Manage pins.",
                subcommands: [
                    CommandSpec(
                        name: "forget", abstract: "Forget a pin.",
                        arguments: [PositionalSpec("host", help: "The host.", completion: hostNames)],
                        options: [
                            OptionSpec("format", help: "Output format.", completion: .values(["json", "text"]))
                        ],
                        handler: { _ in .success }),
                    CommandSpec(name: "list", abstract: "List pins.", handler: { _ in .success }),
                ]),
        ])

    /// A directory holding the script for `shell` and an executable `tool` that prints two host
    /// names for `list --names` (one with a space), and the environment with it first on PATH.
    final class Installation: Sendable {
        let directory: TemporaryDirectory
        let script: String

        init(_ shell: CompletionShell, spec: CommandSpec = CompletionFixtures.tool) throws {
            directory = try TemporaryDirectory(prefix: "completion-\(shell.rawValue)-")
            let name = shell == .zsh ? "_tool" : "tool.\(shell.rawValue)"
            script = directory.file(name).path
            try shell.script(for: spec).write(toFile: script, atomically: true, encoding: .utf8)
            let program = directory.file("tool").path
            try """
            #!/bin/sh
            [ "$1 $2" = "list --names" ] && printf 'alpha\\nbeta box\\n'
            exit 0

            """.write(toFile: program, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: program)
        }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["PATH"] = directory.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            return environment
        }
    }
}
