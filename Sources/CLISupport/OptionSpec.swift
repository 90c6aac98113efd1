/// An option that takes a value: `--port 22`, `--port=22`, `-p 22`, `-p22`.
public struct OptionSpec: Sendable, Equatable {
    /// The long name without dashes (`port` for `--port`), and the key for ``ParsedArguments``.
    public var name: String
    /// An optional one-letter alias (`p` for `-p`).
    public var short: Character?
    /// The placeholder for the value in help (`<port>`); defaults to the name.
    public var valueName: String
    /// Shown in the OPTIONS section.
    public var help: String
    /// Used when the option is absent, and shown in help as `(default: ...)`.
    public var defaultValue: String?
    /// Whether the option may be given several times (read them with ``ParsedArguments/strings(_:)``).
    public var isRepeatable: Bool
    /// Whether leaving the option out is a usage error.
    public var isRequired: Bool
    /// What the shell completion scripts offer for the value.
    public var completion: CompletionSource

    public init(
        _ name: String, short: Character? = nil, valueName: String? = nil, help: String,
        defaultValue: String? = nil, isRepeatable: Bool = false, isRequired: Bool = false,
        completion: CompletionSource = .none
    ) {
        self.name = name
        self.short = short
        self.valueName = valueName ?? name
        self.help = help
        self.defaultValue = defaultValue
        self.isRepeatable = isRepeatable
        self.isRequired = isRequired
        self.completion = completion
    }

    /// `--port <port>`, the form used in messages and the USAGE line.
    var synopsis: String { "--\(name) <\(valueName)>" }

    /// The help text with what help and the manual add to it: the default, whether it repeats.
    var annotatedHelp: String {
        var text = help
        if let defaultValue { text += " (default: \(defaultValue))" }
        if isRepeatable { text += " (repeatable)" }
        return text
    }

    /// How the option appears in the USAGE line.
    var usageToken: String {
        let core = isRepeatable ? "\(synopsis) ..." : synopsis
        return isRequired ? core : "[\(core)]"
    }
}
