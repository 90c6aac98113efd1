/// What a command line asks for, decided by ``CommandParser/parse(_:spec:)`` without side effects.
public enum Invocation: Sendable {
    /// Run `command`'s handler with the parsed values.
    case run(command: CommandSpec, arguments: ParsedArguments)
    /// Print this help text to stdout and exit 0 (`-h`/`--help` was given).
    case help(String)
    /// Print this version line to stdout and exit 0 (`--version` was given).
    case version(String)
}
