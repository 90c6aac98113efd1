/// What a program prints about itself for packaging, asked for by its only arguments:
/// `--generate-completion-script bash|zsh|fish` or `--generate-manual`.
///
/// ``CommandLineTool`` looks for these before parsing, as swift-argument-parser does, so they work
/// for every program (with subcommands or without) and never appear in `--help`; docs mention them.
enum GeneratedDocument: Equatable {
    case completionScript(CompletionShell)
    case manual

    static let completionSwitch = "generate-completion-script"
    static let manualSwitch = "generate-manual"

    /// The document `arguments` ask for, nil when they ask for none (then they are parsed as usual).
    ///
    /// - Throws: ``UsageError`` for a missing or unknown shell.
    static func requested(by arguments: [String], program: String) throws(UsageError) -> GeneratedDocument? {
        guard let first = arguments.first else { return nil }
        if first == "--\(manualSwitch)" && arguments.count == 1 { return .manual }
        let shellText: String
        if first == "--\(completionSwitch)" && arguments.count <= 2 {
            guard arguments.count == 2 else {
                throw UsageError(
                    .missingValue, "missing value for option '--\(completionSwitch) <shell>'", commandPath: [program])
            }
            shellText = arguments[1]
        } else if first.hasPrefix("--\(completionSwitch)=") && arguments.count == 1 {
            shellText = String(first.dropFirst(completionSwitch.count + 3))
        } else {
            return nil
        }
        guard let shell = CompletionShell(rawValue: shellText) else {
            let names = CompletionShell.allCases.map(\.rawValue).joined(separator: ", ")
            throw UsageError(
                .invalidValue, "no completion script for shell '\(shellText)' (one of: \(names))",
                commandPath: [program])
        }
        return .completionScript(shell)
    }

    /// The text of the document for the program whose root is `spec`.
    func render(_ spec: CommandSpec) -> String {
        let problems = spec.validationProblems()
        precondition(problems.isEmpty, "CLISupport: invalid command spec:\n" + problems.joined(separator: "\n"))
        switch self {
        case .completionScript(let shell): return shell.script(for: spec)
        case .manual: return ManPage.render(spec)
        }
    }
}
