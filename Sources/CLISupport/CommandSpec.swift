/// A command of a program: its name, help text, arguments, options, flags and subcommands, and the
/// handler that runs it.
///
/// Specs are plain data, checked once by ``validationProblems()`` (the parser traps on a broken spec:
/// that is a programming error, never a user's). A command with subcommands takes no positional
/// arguments; it runs its own handler only when it has one and no subcommand was named.
///
///     let add = CommandSpec(
///         name: "add", abstract: "Add a host profile.",
///         arguments: [PositionalSpec("name", help: "Profile name.")],
///         options: [OptionSpec("port", short: "p", help: "SSH port.", defaultValue: "22")],
///         handler: { arguments in
///             let port = try arguments.int("port", range: 1...65535)
///             ...
///             return .success
///         })
///     let tool = CommandSpec(name: "herdr-remote", abstract: "...", version: "0.1.0", subcommands: [add])
public struct CommandSpec: Sendable {
    /// What runs a command once its command line parsed; the code it returns ends the program.
    public typealias Handler = @Sendable (ParsedArguments) async throws -> ExitCode

    /// The word that selects this command (the program name for the root).
    public var name: String
    /// One line saying what the command does; shown in OVERVIEW and in the parent's SUBCOMMANDS.
    public var abstract: String
    /// Longer text after the overview. Blank lines separate paragraphs; a paragraph whose lines
    /// start with spaces is kept as written (examples), the others are re-wrapped.
    public var discussion: String
    /// The program version; when set on the root, `--version` prints it.
    public var version: String?
    public var arguments: [PositionalSpec]
    public var options: [OptionSpec]
    public var flags: [FlagSpec]
    public var subcommands: [CommandSpec]
    /// Listed in an EXIT CODES section of this command's help, in this order.
    public var exitCodes: [ExitCode]
    public var handler: Handler?

    public init(
        name: String, abstract: String, discussion: String = "", version: String? = nil,
        arguments: [PositionalSpec] = [], options: [OptionSpec] = [], flags: [FlagSpec] = [],
        subcommands: [CommandSpec] = [], exitCodes: [ExitCode] = [], handler: Handler? = nil
    ) {
        self.name = name
        self.abstract = abstract
        self.discussion = discussion
        self.version = version
        self.arguments = arguments
        self.options = options
        self.flags = flags
        self.subcommands = subcommands
        self.exitCodes = exitCodes
        self.handler = handler
    }

    /// The subcommand called `name`, if any.
    public func subcommand(named name: String) -> CommandSpec? {
        subcommands.first { $0.name == name }
    }

    /// The command reached by following `path` (subcommand names below this one).
    public func command(at path: [String]) -> CommandSpec? {
        var current = self
        for name in path {
            guard let next = current.subcommand(named: name) else { return nil }
            current = next
        }
        return current
    }

    /// Everything wrong with this spec and its subcommands; empty when the spec is sound.
    ///
    /// Checked: names are non-empty words; no name is declared twice along a command path (they
    /// share one namespace in ``ParsedArguments``); `help`/`-h` (and `version` on a root with a
    /// version) are reserved; short names are single ASCII letters or digits and unique in a
    /// command; required positionals come before optional ones and only the last may repeat; a
    /// command with subcommands has no positionals; subcommand names are unique. On the root,
    /// `generate-completion-script` and `generate-manual` are reserved too (``CommandLineTool``
    /// answers them). Completion sources: values are plain words, none listed twice, and a
    /// ``CompletionSource/command(_:)`` is a command line of this program that runs a command.
    public func validationProblems() -> [String] {
        var problems: [String] = []
        validate(path: [name], inherited: [], isRoot: true, into: &problems)
        for (path, what, arguments) in completionCommands(path: [name]) where !arguments.isEmpty {
            do {
                guard case .run = try CommandParser.parseUnchecked(arguments, spec: self) else {
                    problems.append(
                        "\(path): \(what): completion command '\(arguments.joined(separator: " "))' runs nothing")
                    continue
                }
            } catch {
                problems.append(
                    "\(path): \(what): completion command '\(arguments.joined(separator: " "))' is not a command line of \(name) (\(error.problem))"
                )
            }
        }
        return problems
    }

    /// Every ``CompletionSource/command(_:)`` in this command and below: where, for what, its arguments.
    private func completionCommands(path: [String]) -> [(String, String, [String])] {
        var found: [(String, String, [String])] = []
        let here = path.joined(separator: " ")
        for option in options {
            if case .command(let arguments) = option.completion {
                found.append((here, "option '--\(option.name)'", arguments))
            }
        }
        for argument in self.arguments {
            if case .command(let arguments) = argument.completion {
                found.append((here, "argument '<\(argument.name)>'", arguments))
            }
        }
        for subcommand in subcommands { found += subcommand.completionCommands(path: path + [subcommand.name]) }
        return found
    }

    private func validate(path: [String], inherited: Set<String>, isRoot: Bool, into problems: inout [String]) {
        let here = path.joined(separator: " ")
        if !CommandSpec.isWord(name) { problems.append("\(here): command name '\(name)' is not a word") }
        var reserved: Set<String> = ["help"]
        if isRoot && version != nil { reserved.insert("version") }
        if isRoot { reserved.formUnion([GeneratedDocument.completionSwitch, GeneratedDocument.manualSwitch]) }
        var seen = inherited
        var shorts: Set<Character> = ["h"]
        let declared: [(String, Character?)] =
            options.map { ($0.name, $0.short) } + flags.map { ($0.name, $0.short) } + arguments.map { ($0.name, nil) }
        for (key, short) in declared {
            if !CommandSpec.isWord(key) { problems.append("\(here): '\(key)' is not a valid name") }
            if reserved.contains(key) { problems.append("\(here): '\(key)' is reserved") }
            if !seen.insert(key).inserted { problems.append("\(here): '\(key)' is declared twice on this path") }
            if let short {
                if !(short.isASCII && (short.isLetter || short.isNumber)) {
                    problems.append("\(here): short name '-\(short)' is not an ASCII letter or digit")
                }
                if !shorts.insert(short).inserted { problems.append("\(here): short name '-\(short)' is used twice") }
            }
        }
        for option in options { problems += option.completion.problems(for: "\(here): option '--\(option.name)'") }
        for argument in arguments {
            problems += argument.completion.problems(for: "\(here): argument '<\(argument.name)>'")
        }
        var sawOptional = false
        for (index, argument) in arguments.enumerated() {
            if argument.isRequired && sawOptional {
                problems.append("\(here): required argument '\(argument.name)' follows an optional one")
            }
            if !argument.isRequired { sawOptional = true }
            if argument.isRepeating && index != arguments.count - 1 {
                problems.append("\(here): only the last argument may repeat ('\(argument.name)' does)")
            }
        }
        if !subcommands.isEmpty && !arguments.isEmpty {
            problems.append("\(here): a command with subcommands cannot take positional arguments")
        }
        var subcommandNames: Set<String> = []
        for subcommand in subcommands {
            if !subcommandNames.insert(subcommand.name).inserted {
                problems.append("\(here): subcommand '\(subcommand.name)' is declared twice")
            }
            subcommand.validate(path: path + [subcommand.name], inherited: seen, isRoot: false, into: &problems)
        }
        if subcommands.isEmpty && handler == nil { problems.append("\(here): a leaf command needs a handler") }
    }

    /// Letters, digits and inner dashes or underscores, starting with a letter or digit.
    private static func isWord(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first.isNumber else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }
    }
}
