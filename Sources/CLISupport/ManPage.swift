/// The manual page of a program, in roff with the man(7) macros, generated from its
/// ``CommandSpec``: the same abstracts, discussions, arguments, options and exit codes that
/// ``HelpFormatter`` prints for `--help`, one page for the program and all its subcommands.
///
/// Sections: NAME, SYNOPSIS (the usage line of every command), DESCRIPTION, OPTIONS (the root's),
/// COMMANDS (one subsection per subcommand, at any depth) and EXIT STATUS (every distinct code,
/// the root's first). Text is escaped for roff: backslashes, minus signs (every `-`, so options and
/// names copy as typed), a leading `.` or `'`, and characters beyond ASCII.
public enum ManPage {
    /// The page for `spec`, the root of a program, as section 1. `spec` must be valid
    /// (``CommandSpec/validationProblems()`` empty).
    public static func render(_ spec: CommandSpec) -> String {
        let commands = CompletionCommand.all(in: spec)
        let source = spec.version.map { "\(spec.name) \($0)" } ?? spec.name
        var lines = [
            #".\" Manual page for \#(spec.name), generated from its command specs by"#,
            #".\" `\#(spec.name) --generate-manual`: change the specs, not this file."#,
            ".TH \(quoted(spec.name.uppercased())) 1 \"\" \(quoted(source)) \"User Commands\"",
            // Left-aligned and never hyphenated, like --help: names and options copy as printed.
            ".ad l",
            ".nh",
            ".SH NAME",
            text("\(spec.name) - \(trimmingFinalPeriod(spec.abstract))"),
            ".SH SYNOPSIS",
        ]
        for command in commands { lines += synopsis(command) }
        // .YS turns hyphenation back on.
        lines += [".nh", ".SH DESCRIPTION"]
        lines += paragraphs(of: spec)
        lines.append(".SH OPTIONS")
        lines += entries(for: commands[0], includingHelp: true)
        if commands.count > 1 {
            lines.append(".SH COMMANDS")
            for command in commands.dropFirst() {
                lines.append(".SS \(quoted(command.pathText))")
                lines += paragraphs(of: command.spec)
                if !command.arguments.isEmpty {
                    lines += [".PP", "Arguments:"]
                    for argument in command.arguments {
                        lines += [".TP", #"\fI"# + text(argument.name) + #"\fR"#, text(argument.help)]
                    }
                }
                let options = entries(for: command, includingHelp: false)
                if !options.isEmpty { lines += [".PP", "Options:"] + options }
            }
        }
        var seen: Set<Int32> = []
        let codes = commands.flatMap(\.spec.exitCodes).filter { seen.insert($0.rawValue).inserted }
        if !codes.isEmpty {
            lines.append(".SH EXIT STATUS")
            for code in codes { lines += [".TP", ".B \(code.rawValue)", text(code.meaning)] }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The abstract, then the discussion: prose filled, the rest kept as written.
    private static func paragraphs(of spec: CommandSpec) -> [String] {
        var lines: [String] = []
        if !spec.abstract.isEmpty { lines.append(text(spec.abstract)) }
        for paragraph in DiscussionText.paragraphs(spec.discussion) {
            switch paragraph {
            case .prose(let prose):
                lines += [".PP", text(prose)]
            case .verbatim(let verbatim):
                lines += [".PP", ".nf"] + verbatim.map(text) + [".fi"]
            }
        }
        return lines
    }

    /// `.TP` entries for the options and flags (as help lists them), `--version` on the root.
    private static func entries(for command: CompletionCommand, includingHelp: Bool) -> [String] {
        var lines: [String] = []
        for option in command.spec.options {
            lines += [
                ".TP", label(long: option.name, short: option.short, value: option.valueName),
                text(option.annotatedHelp),
            ]
        }
        for flag in command.spec.flags {
            lines += [".TP", label(long: flag.name, short: flag.short, value: nil), text(flag.annotatedHelp)]
        }
        if includingHelp {
            for option in command.options where option.endsTheLine {
                lines += [".TP", label(long: option.long, short: option.short, value: nil), text(option.help)]
            }
        }
        return lines
    }

    /// `\fB\-p\fR, \fB\-\-port\fR \fIport\fR`.
    private static func label(long: String, short: Character?, value: String?) -> String {
        var label = short.map { #"\fB\-"# + text(String($0)) + #"\fR, "# } ?? ""
        label += #"\fB\-\-"# + text(long) + #"\fR"#
        if let value { label += #" \fI"# + text(value) + #"\fR"# }
        return label
    }

    /// One command's usage, as in help's USAGE line: `.SY` sets the path in bold and indents what
    /// wraps; each token is kept on one line (`\ ` inside a token does not break).
    private static func synopsis(_ command: CompletionCommand) -> [String] {
        func bold(_ word: String) -> String { #"\fB"# + text(word) + #"\fR"# }
        func italic(_ word: String) -> String { #"\fI"# + text(word) + #"\fR"# }
        var tokens: [String] = []
        for option in command.spec.options {
            var token = bold("--\(option.name)") + #"\ "# + italic(option.valueName)
            if option.isRepeatable { token += #"\ ..."# }
            tokens.append(option.isRequired ? token : "[\(token)]")
        }
        for flag in command.spec.flags {
            tokens.append("[" + bold("--\(flag.name)") + (flag.isRepeatable ? #"\ ...]"# : "]"))
        }
        for argument in command.arguments {
            let token = italic(argument.name) + (argument.isRepeating ? #"\ ..."# : "")
            tokens.append(argument.isRequired ? token : "[\(token)]")
        }
        if !command.subcommands.isEmpty { tokens.append(italic("subcommand")) }
        return [".SY \(quoted(command.pathText))"] + tokens + [".YS"]
    }

    /// `text` escaped for a roff text line.
    static func text(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += #"\e"#
            case "-": out += #"\-"#
            case "\n", "\t": out += " "
            default:
                if scalar.isASCII && scalar.value >= 0x20 && scalar.value != 0x7F {
                    out.unicodeScalars.append(scalar)
                } else if scalar.value >= 0xA0 {
                    let hex = String(scalar.value, radix: 16, uppercase: true)
                    out += #"\[u"# + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
                }
            // Other control characters are dropped: they have no place on a page.
            }
        }
        // A line starting with `.` or `'` would be read as a request.
        if out.hasPrefix(".") || out.hasPrefix("'") { out = #"\&"# + out }
        return out
    }

    /// `text` as one quoted macro argument.
    private static func quoted(_ text: String) -> String {
        "\"" + Self.text(text).replacingOccurrences(of: "\"", with: #"\(dq"#) + "\""
    }

    private static func trimmingFinalPeriod(_ text: String) -> String {
        text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}
