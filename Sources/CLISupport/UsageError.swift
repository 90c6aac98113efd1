/// A wrong command line, found before any work starts.
///
/// The message names the problem, suggests a close match where there is one, and points at the
/// help of the command where the problem was found:
///
///     error: unknown option '--prot'; did you mean '--port'? See 'herdr-remote add --help'.
///
/// ``CommandLineTool`` prints ``message`` to stderr and exits with ``ExitCode/usage`` (64).
public struct UsageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong; stable, so tests and callers can branch on it.
    public enum Kind: String, Sendable, Equatable {
        /// An option or flag the command does not declare.
        case unknownOption
        /// An option that takes a value was last, or followed by another option.
        case missingValue
        /// A flag was given a value with `--flag=value`.
        case unexpectedValue
        /// A non-repeatable option or flag was given more than once.
        case repeatedOption
        /// A required option was not given.
        case missingOption
        /// A required positional argument was not given.
        case missingArgument
        /// More positional arguments than the command takes.
        case extraArgument
        /// A word in subcommand position that names no subcommand.
        case unknownSubcommand
        /// A command that only groups subcommands was run without one.
        case missingSubcommand
        /// A value was given but is not acceptable (not a number, out of range, ...).
        case invalidValue
    }

    public let kind: Kind
    /// The problem alone, without the `error:` prefix or the pointer to help.
    public let problem: String
    /// A close match for a mistyped name (`--port` for `--prot`), if one was found.
    public let suggestion: String?
    /// The command whose help the message points to, from the program name down.
    public let commandPath: [String]

    public init(_ kind: Kind, _ problem: String, suggestion: String? = nil, commandPath: [String]) {
        self.kind = kind
        self.problem = problem
        self.suggestion = suggestion
        self.commandPath = commandPath
    }

    /// The full line to show a person.
    public var message: String {
        let hint = suggestion.map { "; did you mean '\($0)'?" } ?? "."
        return "error: \(problem)\(hint) See '\(commandPath.joined(separator: " ")) --help'."
    }

    public var description: String { message }
}
