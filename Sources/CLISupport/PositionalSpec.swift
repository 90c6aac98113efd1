/// A positional argument of a command: `<host>`, `[<name>]`, `<file> ...`.
public struct PositionalSpec: Sendable, Equatable {
    /// The key for ``ParsedArguments/positional(_:)``, also shown as `<name>` in help.
    public var name: String
    /// One line (or a few sentences) shown in the ARGUMENTS section.
    public var help: String
    /// A required argument missing from the command line is a usage error.
    public var isRequired: Bool
    /// A repeating argument takes every remaining word; only the last argument may repeat.
    public var isRepeating: Bool
    /// What the shell completion scripts offer for the argument.
    public var completion: CompletionSource

    public init(
        _ name: String, help: String, isRequired: Bool = true, isRepeating: Bool = false,
        completion: CompletionSource = .none
    ) {
        self.name = name
        self.help = help
        self.isRequired = isRequired
        self.isRepeating = isRepeating
        self.completion = completion
    }

    /// How the argument appears in the USAGE line.
    var usageToken: String {
        let core = isRepeating ? "<\(name)> ..." : "<\(name)>"
        return isRequired ? core : "[\(core)]"
    }
}
