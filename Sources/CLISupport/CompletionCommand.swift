/// One command of a program as the completion scripts see it: where it sits, and what may follow
/// it on a command line (the same words ``CommandParser`` accepts there).
struct CompletionCommand {
    /// An option, a flag, `--version` or `-h`/`--help`, with what its value completes to.
    struct Option {
        var long: String
        var short: Character?
        var help: String
        /// The placeholder of the value; nil for a flag.
        var valueName: String?
        var isRepeatable: Bool
        var completion: CompletionSource
        /// `--help` and `--version`: nothing else matters once they are given.
        var endsTheLine: Bool

        var takesValue: Bool { valueName != nil }
        /// `--long`, then `-s` when there is one.
        var words: [String] { ["--\(long)"] + (short.map { ["-\($0)"] } ?? []) }
    }

    /// Program name first.
    let path: [String]
    let spec: CommandSpec
    let options: [Option]

    init(path: [String], spec: CommandSpec, isRoot: Bool) {
        self.path = path
        self.spec = spec
        var options = spec.options.map {
            Option(
                long: $0.name, short: $0.short, help: $0.help, valueName: $0.valueName, isRepeatable: $0.isRepeatable,
                completion: $0.completion, endsTheLine: false)
        }
        options += spec.flags.map {
            Option(
                long: $0.name, short: $0.short, help: $0.help, valueName: nil, isRepeatable: $0.isRepeatable,
                completion: .none, endsTheLine: false)
        }
        if isRoot && spec.version != nil {
            options.append(
                Option(
                    long: "version", short: nil, help: "Show the version.", valueName: nil, isRepeatable: false,
                    completion: .none, endsTheLine: true))
        }
        options.append(
            Option(
                long: "help", short: "h", help: "Show help information.", valueName: nil, isRepeatable: false,
                completion: .none, endsTheLine: true))
        self.options = options
    }

    var pathText: String { path.joined(separator: " ") }
    var subcommands: [CommandSpec] { spec.subcommands }
    var arguments: [PositionalSpec] { spec.arguments }

    /// Every command of `root`'s program, the root first, each before its subcommands.
    static func all(in root: CommandSpec) -> [CompletionCommand] {
        var result: [CompletionCommand] = []
        func visit(_ spec: CommandSpec, _ path: [String]) {
            result.append(CompletionCommand(path: path, spec: spec, isRoot: path.count == 1))
            for subcommand in spec.subcommands { visit(subcommand, path + [subcommand.name]) }
        }
        visit(root, [root.name])
        return result
    }

    /// `herdr-remote` → `herdr_remote`: the program name as part of a shell function name.
    static func identifier(_ name: String) -> String {
        String(name.map { $0.isLetter || $0.isNumber ? $0 : "_" })
    }
}
