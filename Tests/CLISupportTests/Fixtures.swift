import CLISupport

/// A small herdr-remote-like program used across the parser, help and runner tests.
enum Fixtures {
    static let hostKeyRefused = ExitCode(10, meaning: "The host key was refused.")

    static let add = CommandSpec(
        name: "add", abstract: "Add a host profile.",
        discussion: "Profiles are stored in the host store.",
        arguments: [
            PositionalSpec("name", help: "The profile name."),
            PositionalSpec("host", help: "Host name or address."),
            PositionalSpec("note", help: "Free text.", isRequired: false),
        ],
        options: [
            OptionSpec("port", short: "p", help: "SSH port.", defaultValue: "22"),
            OptionSpec("user", short: "u", valueName: "login", help: "Remote login name."),
            OptionSpec("tag", short: "t", help: "A label.", isRepeatable: true),
        ],
        flags: [
            FlagSpec("force", short: "f", help: "Replace an existing profile."),
            FlagSpec("verbose", short: "v", help: "Say more.", isRepeatable: true),
        ],
        exitCodes: [.success, .usage, hostKeyRefused],
        handler: { _ in .success })

    static let exec = CommandSpec(
        name: "exec", abstract: "Run a command on a host.",
        arguments: [
            PositionalSpec("host", help: "The profile."),
            PositionalSpec("command", help: "The command and its arguments.", isRepeating: true),
        ],
        handler: { _ in .success })

    static let login = CommandSpec(
        name: "login", abstract: "Log in.",
        options: [OptionSpec("token", help: "The access token.", isRequired: true)],
        handler: { _ in .success })

    static let pins = CommandSpec(
        name: "pins", abstract: "Manage host key pins.",
        subcommands: [
            CommandSpec(name: "list", abstract: "List pins.", handler: { _ in .success }),
            CommandSpec(
                name: "forget", abstract: "Forget a pin.", arguments: [PositionalSpec("host", help: "The host.")],
                handler: { _ in .success }),
        ])

    static let tool = CommandSpec(
        name: "herdr-remote", abstract: "Reach a live terminal session from anywhere.", version: "1.2.3",
        flags: [FlagSpec("quiet", short: "q", help: "Say less.")],
        subcommands: [add, exec, login, pins])

    static func parse(_ arguments: [String]) throws(UsageError) -> Invocation {
        try CommandParser.parse(arguments, spec: tool)
    }

    /// Parses and expects a run; returns the command name and its arguments.
    static func run(_ arguments: [String]) throws -> (command: String, arguments: ParsedArguments) {
        guard case .run(let command, let parsed) = try parse(arguments) else {
            throw FixtureError.notARun
        }
        return (command.name, parsed)
    }

    static func usageError(_ arguments: [String]) -> UsageError? {
        do {
            _ = try parse(arguments)
            return nil
        } catch {
            return error
        }
    }

    enum FixtureError: Error { case notARun }
}
