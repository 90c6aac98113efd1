/// A flag that takes no value: `--verbose`, `-v`.
public struct FlagSpec: Sendable, Equatable {
    /// The long name without dashes (`verbose` for `--verbose`), and the key for ``ParsedArguments``.
    public var name: String
    /// An optional one-letter alias (`v` for `-v`); short flags may be bundled (`-vq`).
    public var short: Character?
    /// Shown in the OPTIONS section.
    public var help: String
    /// Whether the flag may be given several times (`-vvv`; count with ``ParsedArguments/flagCount(_:)``).
    public var isRepeatable: Bool

    public init(_ name: String, short: Character? = nil, help: String, isRepeatable: Bool = false) {
        self.name = name
        self.short = short
        self.help = help
        self.isRepeatable = isRepeatable
    }

    /// The help text with `(repeatable)` when it repeats, as help and the manual show it.
    var annotatedHelp: String { isRepeatable ? help + " (repeatable)" : help }

    /// How the flag appears in the USAGE line.
    var usageToken: String { isRepeatable ? "[--\(name) ...]" : "[--\(name)]" }
}
