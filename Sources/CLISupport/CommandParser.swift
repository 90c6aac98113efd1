/// Turns a command line into an ``Invocation``: pure, no printing, no exiting, so tests can call it.
///
/// Rules, in the spirit of swift-argument-parser:
/// - `--name VALUE` and `--name=VALUE`; `-n VALUE`, `-nVALUE` and `-n=VALUE`; short flags bundle (`-vq`).
/// - A value is never taken from a word that looks like an option (starts with `-` and is longer
///   than `-`): `--port -v` is a missing value. Write `--offset=-5` for such values.
/// - `--` ends options: every later word is positional.
/// - A word in subcommand position selects that subcommand; options before it belong to the parent.
/// - `-h`/`--help` anywhere before `--` asks for the help of the innermost subcommand reached, and
///   wins over a usage error on the same line, except a word that names nothing: an unknown
///   subcommand, or a word for a command that takes none. `tool agents --help` is refused as
///   `tool agents` is, so that a typo cannot pass for a real command.
/// - `--version` is recognised on the root command when it has a version.
public enum CommandParser {
    /// Parses `arguments` (without the program name) against `spec`.
    ///
    /// - Throws: ``UsageError`` for a wrong command line.
    /// - Precondition: `spec.validationProblems()` is empty.
    public static func parse(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> Invocation {
        let problems = spec.validationProblems()
        precondition(problems.isEmpty, "CLISupport: invalid command spec:\n" + problems.joined(separator: "\n"))
        return try parseUnchecked(arguments, spec: spec)
    }

    /// ``parse(_:spec:)`` without checking the spec first: for the check itself, which parses
    /// completion command lines (``CompletionSource/command(_:)``) against the spec being checked.
    static func parseUnchecked(_ arguments: [String], spec: CommandSpec) throws(UsageError) -> Invocation {
        let optionWords = arguments.prefix { $0 != "--" }
        let asksForHelp = optionWords.contains { $0 == "-h" || $0 == "--help" }
        var state = ParseState(root: spec)
        do {
            try state.consume(arguments)
            if asksForHelp || state.sawHelp { return state.helpInvocation() }
            if state.sawVersion, let version = spec.version { return .version("\(spec.name) \(version)") }
            return try state.finish()
        } catch {
            // Help asked for anywhere beats the mistake next to it: the person is looking for the fix.
            // Not a word that names nothing: help would answer 0 for a command that does not exist.
            // (With help asked, finish never ran: every error here is consume's.)
            let namesNothing = error.kind == .unknownSubcommand || error.kind == .extraArgument
            if (asksForHelp || state.sawHelp) && !namesNothing { return state.helpInvocation() }
            throw error
        }
    }
}

/// The parser's progress through one command line.
private struct ParseState {
    private(set) var commands: [CommandSpec]
    private var values: [String: [String]] = [:]
    private var flagCounts: [String: Int] = [:]
    private var positionals: [String] = []
    private(set) var sawHelp = false
    private(set) var sawVersion = false

    init(root: CommandSpec) {
        commands = [root]
    }

    private var current: CommandSpec { commands[commands.count - 1] }
    private var path: [String] { commands.map(\.name) }
    private var isAtRoot: Bool { commands.count == 1 }

    func helpInvocation() -> Invocation {
        .help(HelpFormatter.help(for: current, path: path, showsVersion: isAtRoot && current.version != nil))
    }

    mutating func consume(_ arguments: [String]) throws(UsageError) {
        var index = 0
        var onlyPositionals = false
        while index < arguments.count {
            let word = arguments[index]
            index += 1
            if onlyPositionals {
                positionals.append(word)
            } else if word == "--" {
                onlyPositionals = true
            } else if word == "-h" || word == "--help" {
                sawHelp = true
            } else if word.hasPrefix("--") {
                try takeLong(word, arguments, &index)
            } else if ParseState.looksLikeOption(word) {
                try takeShortCluster(word, arguments, &index)
            } else {
                try takeWord(word)
            }
        }
    }

    /// Checks what can only be checked at the end and builds the result.
    func finish() throws(UsageError) -> Invocation {
        let command = current
        var assigned: [String: [String]] = [:]
        var remaining = positionals[...]
        for argument in command.arguments {
            if argument.isRepeating {
                assigned[argument.name] = Array(remaining)
                remaining = []
            } else if let first = remaining.first {
                assigned[argument.name] = [first]
                remaining = remaining.dropFirst()
            }
            if argument.isRequired && (assigned[argument.name] ?? []).isEmpty {
                throw UsageError(.missingArgument, "missing argument '<\(argument.name)>'", commandPath: path)
            }
        }
        if let extra = remaining.first {
            throw UsageError(.extraArgument, "unexpected argument '\(extra)'", commandPath: path)
        }
        if command.handler == nil {
            let names = command.subcommands.map(\.name).joined(separator: ", ")
            throw UsageError(.missingSubcommand, "missing subcommand (one of: \(names))", commandPath: path)
        }
        var declarations: [String: ParsedArguments.Declaration] = [:]
        for (depth, spec) in commands.enumerated() {
            for option in spec.options {
                if option.isRequired && (values[option.name] ?? []).isEmpty {
                    let ownerPath = Array(path.prefix(depth + 1))
                    throw UsageError(.missingOption, "missing option '\(option.synopsis)'", commandPath: ownerPath)
                }
                declarations[option.name] = .option(option)
            }
            for flag in spec.flags { declarations[flag.name] = .flag(flag) }
            for argument in spec.arguments { declarations[argument.name] = .positional(argument) }
        }
        let parsed = ParsedArguments(
            commandPath: path, declarations: declarations, values: values.merging(assigned) { $1 },
            flagCounts: flagCounts)
        return .run(command: command, arguments: parsed)
    }

    // MARK: - Words

    private mutating func takeLong(_ word: String, _ arguments: [String], _ index: inout Int) throws(UsageError) {
        let body = word.dropFirst(2)
        let name: String
        let inline: String?
        if let equals = body.firstIndex(of: "=") {
            name = String(body[..<equals])
            inline = String(body[body.index(after: equals)...])
        } else {
            name = String(body)
            inline = nil
        }
        if name == "version" && isAtRoot && current.version != nil {
            if inline != nil { throw UsageError(.unexpectedValue, "'--version' takes no value", commandPath: path) }
            sawVersion = true
        } else if let option = current.options.first(where: { $0.name == name }) {
            if let inline {
                try record(option, inline)
            } else {
                try record(option, nextValue(for: option, arguments, &index))
            }
        } else if let flag = current.flags.first(where: { $0.name == name }) {
            if inline != nil {
                throw UsageError(.unexpectedValue, "flag '--\(name)' takes no value", commandPath: path)
            }
            try record(flag)
        } else {
            var candidates = current.options.map(\.name) + current.flags.map(\.name) + ["help"]
            if isAtRoot && current.version != nil { candidates.append("version") }
            let suggestion = EditDistance.closest(to: name, among: candidates).map { "--\($0)" }
            throw UsageError(.unknownOption, "unknown option '--\(name)'", suggestion: suggestion, commandPath: path)
        }
    }

    private mutating func takeShortCluster(_ word: String, _ arguments: [String], _ index: inout Int)
        throws(UsageError)
    {
        let letters = Array(word.dropFirst())
        var position = 0
        while position < letters.count {
            let letter = letters[position]
            position += 1
            if letter == "h" {
                sawHelp = true
            } else if let flag = current.flags.first(where: { $0.short == letter }) {
                try record(flag)
            } else if let option = current.options.first(where: { $0.short == letter }) {
                var rest = String(letters[position...])
                if rest.hasPrefix("=") { rest.removeFirst() }
                let value = try rest.isEmpty ? nextValue(for: option, arguments, &index) : rest
                try record(option, value)
                return
            } else {
                // `-verbose` is usually `--verbose` with a dash missing: say so.
                let longNames = current.options.map(\.name) + current.flags.map(\.name)
                let whole = String(letters)
                let suggestion = longNames.contains(whole) ? "--\(whole)" : nil
                throw UsageError(
                    .unknownOption, "unknown option '-\(letter)'", suggestion: suggestion, commandPath: path)
            }
        }
    }

    private mutating func takeWord(_ word: String) throws(UsageError) {
        if positionals.isEmpty && !current.subcommands.isEmpty {
            if let subcommand = current.subcommand(named: word) {
                commands.append(subcommand)
                return
            }
            let suggestion = EditDistance.closest(to: word, among: current.subcommands.map(\.name))
            throw UsageError(
                .unknownSubcommand, "unknown subcommand '\(word)'", suggestion: suggestion, commandPath: path)
        }
        // Said here, not in finish: a command that takes no words is told so even beside --help.
        if current.arguments.isEmpty {
            throw UsageError(.extraArgument, "unexpected argument '\(word)'", commandPath: path)
        }
        positionals.append(word)
    }

    private func nextValue(for option: OptionSpec, _ arguments: [String], _ index: inout Int) throws(UsageError)
        -> String
    {
        guard index < arguments.count, !ParseState.looksLikeOption(arguments[index]) else {
            throw UsageError(.missingValue, "missing value for option '\(option.synopsis)'", commandPath: path)
        }
        index += 1
        return arguments[index - 1]
    }

    private mutating func record(_ option: OptionSpec, _ value: String) throws(UsageError) {
        if !option.isRepeatable && !(values[option.name] ?? []).isEmpty {
            throw UsageError(.repeatedOption, "option '--\(option.name)' was given more than once", commandPath: path)
        }
        values[option.name, default: []].append(value)
    }

    private mutating func record(_ flag: FlagSpec) throws(UsageError) {
        if !flag.isRepeatable && flagCounts[flag.name, default: 0] > 0 {
            throw UsageError(.repeatedOption, "flag '--\(flag.name)' was given more than once", commandPath: path)
        }
        flagCounts[flag.name, default: 0] += 1
    }

    /// `-x`, `--x`; but not `-` alone, which conventionally means stdin and is a plain word.
    private static func looksLikeOption(_ word: String) -> Bool {
        word.hasPrefix("-") && word.count > 1
    }
}
