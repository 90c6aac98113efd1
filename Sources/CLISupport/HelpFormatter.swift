/// Renders a command's `--help` text: OVERVIEW, discussion, USAGE, ARGUMENTS, OPTIONS, SUBCOMMANDS and
/// EXIT CODES, wrapped at ``width`` columns.
public enum HelpFormatter {
    /// The column limit for help text (a word longer than a line is never cut).
    public static let width = 80
    /// Where the description column of ARGUMENTS, OPTIONS and SUBCOMMANDS starts.
    static let descriptionColumn = 26
    /// Where the meaning column of EXIT CODES starts.
    static let exitCodeColumn = 8

    /// The complete help text of `command`, reached through `path` (program name first).
    /// `showsVersion` adds the `--version` line (the root of a program with a version).
    public static func help(for command: CommandSpec, path: [String], showsVersion: Bool = false) -> String {
        var sections: [[String]] = []
        if !command.abstract.isEmpty {
            sections.append(TextWrapper.hanging(command.abstract, firstPrefix: "OVERVIEW: ", indent: 10, width: width))
        }
        sections += discussionParagraphs(command.discussion)
        sections.append(usageLines(for: command, path: path))

        if !command.arguments.isEmpty {
            sections.append(
                ["ARGUMENTS:"] + command.arguments.flatMap { entry("<\($0.name)>", $0.help) })
        }

        var options: [String] = ["OPTIONS:"]
        for option in command.options {
            var label = option.short.map { "-\($0), " } ?? ""
            label += option.synopsis
            options += entry(label, option.annotatedHelp)
        }
        for flag in command.flags {
            let label = (flag.short.map { "-\($0), " } ?? "") + "--\(flag.name)"
            options += entry(label, flag.annotatedHelp)
        }
        if showsVersion { options += entry("--version", "Show the version.") }
        options += entry("-h, --help", "Show help information.")
        sections.append(options)

        if !command.subcommands.isEmpty {
            let pathText = path.joined(separator: " ")
            sections.append(
                ["SUBCOMMANDS:"] + command.subcommands.flatMap { entry($0.name, $0.abstract) } + [""]
                    + TextWrapper.hanging(
                        "See '\(pathText) <subcommand> --help' for detailed help.", firstPrefix: "", indent: 2,
                        width: width))
        }

        if !command.exitCodes.isEmpty {
            sections.append(
                ["EXIT CODES:"]
                    + command.exitCodes.flatMap {
                        TextWrapper.hanging(
                            $0.meaning, firstPrefix: "  \($0.rawValue)", indent: exitCodeColumn, width: width)
                    })
        }
        return sections.map { $0.joined(separator: "\n") }.joined(separator: "\n\n") + "\n"
    }

    /// The USAGE line alone, e.g. `USAGE: herdr-remote add [--port <port>] <name> <host>`.
    public static func usage(for command: CommandSpec, path: [String]) -> String {
        usageLines(for: command, path: path).joined(separator: "\n")
    }

    private static func usageLines(for command: CommandSpec, path: [String]) -> [String] {
        let pathText = path.joined(separator: " ")
        var tokens = command.options.map(\.usageToken) + command.flags.map(\.usageToken)
        tokens += command.arguments.map(\.usageToken)
        if !command.subcommands.isEmpty { tokens.append("<subcommand>") }
        let prefix = "USAGE: \(pathText)"
        let indent = min(prefix.count + 1, 40)
        var lines: [String] = []
        var line = prefix
        // Tokens stay whole (`[--port <port>]` never splits), so a line breaks only between them.
        for token in tokens {
            if line.count + 1 + token.count > width && line.count > indent {
                lines.append(line)
                line = String(repeating: " ", count: indent) + token
            } else {
                line += " " + token
            }
        }
        lines.append(line)
        return lines
    }

    /// One row of a two-column section: the label, then the wrapped description at
    /// ``descriptionColumn``, on the next line when the label is too wide.
    private static func entry(_ label: String, _ help: String) -> [String] {
        let lead = "  " + label
        if lead.count + 2 <= descriptionColumn {
            return TextWrapper.hanging(help, firstPrefix: lead, indent: descriptionColumn, width: width)
        }
        let pad = String(repeating: " ", count: descriptionColumn)
        return [lead] + TextWrapper.wrap(help, width: width - descriptionColumn).map { pad + $0 }
    }

    /// The discussion's paragraphs: verbatim ones as written, the others re-wrapped.
    private static func discussionParagraphs(_ text: String) -> [[String]] {
        DiscussionText.paragraphs(text).map { paragraph in
            switch paragraph {
            case .prose(let text): TextWrapper.wrap(text, width: width)
            case .verbatim(let lines): lines
            }
        }
    }
}
