/// The values of a parsed command line, read by name with typed accessors.
///
/// Options, flags and positionals of every command on the path (the program down to the selected
/// subcommand) share one namespace. Asking for a name the path does not declare, or asking for a
/// flag as an option, traps: it is a typo in the program, and a test reaching it should fail loudly.
public struct ParsedArguments: Sendable {
    enum Declaration: Sendable {
        case option(OptionSpec)
        case flag(FlagSpec)
        case positional(PositionalSpec)
    }

    /// The program name followed by the selected subcommands, e.g. `["herdr-remote", "add"]`.
    public let commandPath: [String]
    let declarations: [String: Declaration]
    let values: [String: [String]]
    let flagCounts: [String: Int]

    /// The value of an option (its default when absent) or of a positional argument.
    /// For a repeatable option given several times, the last value.
    public func string(_ name: String) -> String? {
        strings(name).last
    }

    /// Every value of a repeatable option or repeating positional, in command-line order; an absent
    /// option with a default gives `[default]`.
    public func strings(_ name: String) -> [String] {
        switch declaration(name) {
        case .option(let option):
            let given = values[name] ?? []
            if given.isEmpty, let fallback = option.defaultValue { return [fallback] }
            return given
        case .positional:
            return values[name] ?? []
        case .flag:
            preconditionFailure("CLISupport: '\(name)' is a flag; read it with flag(_:)")
        }
    }

    /// The value of a positional argument, or `nil` when an optional one was left out.
    public func positional(_ name: String) -> String? {
        positionals(name).first
    }

    /// Every value of a (repeating) positional argument.
    public func positionals(_ name: String) -> [String] {
        guard case .positional = declaration(name) else {
            preconditionFailure("CLISupport: '\(name)' is not a positional argument")
        }
        return values[name] ?? []
    }

    /// Whether a flag was given.
    public func flag(_ name: String) -> Bool {
        flagCount(name) > 0
    }

    /// How many times a flag was given (`-vvv` is 3).
    public func flagCount(_ name: String) -> Int {
        guard case .flag = declaration(name) else { preconditionFailure("CLISupport: '\(name)' is not a flag") }
        return flagCounts[name] ?? 0
    }

    /// Whether an option, flag or positional was given on the command line (a default does not count).
    public func wasGiven(_ name: String) -> Bool {
        if case .flag = declaration(name) { return (flagCounts[name] ?? 0) > 0 }
        return !(values[name] ?? []).isEmpty
    }

    /// The value of an option or positional as an integer, `nil` when absent without a default.
    ///
    /// - Throws: ``UsageError`` of kind ``UsageError/Kind/invalidValue`` naming the option and the
    ///   accepted range when the value is not a decimal integer or falls outside `range`.
    public func int(_ name: String, range: ClosedRange<Int>? = nil) throws(UsageError) -> Int? {
        guard let text = string(name) else { return nil }
        if let value = Int(text), range?.contains(value) ?? true { return value }
        let expected = range.map { "an integer in \($0.lowerBound)...\($0.upperBound)" } ?? "an integer"
        throw usageError("\(displayName(name)) must be \(expected), got '\(text)'")
    }

    /// A usage error for a problem the handler found itself (validation before work), pointing at
    /// this command's help. Throw it from the handler; ``CommandLineTool`` exits 64.
    public func usageError(_ problem: String) -> UsageError {
        UsageError(.invalidValue, problem, commandPath: commandPath)
    }

    /// `option '--port'` or `argument '<host>'`, for messages.
    public func displayName(_ name: String) -> String {
        switch declaration(name) {
        case .option: return "option '--\(name)'"
        case .flag: return "flag '--\(name)'"
        case .positional: return "argument '<\(name)>'"
        }
    }

    private func declaration(_ name: String) -> Declaration {
        guard let declaration = declarations[name] else {
            preconditionFailure("CLISupport: '\(name)' is not declared by '\(commandPath.joined(separator: " "))'")
        }
        return declaration
    }
}
