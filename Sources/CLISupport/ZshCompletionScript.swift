/// The zsh completion script of a program, generated from its ``CommandSpec``.
///
/// Install it as `_NAME` in a directory of `$fpath` (`share/zsh/site-functions`), where `compinit`
/// finds it by its `#compdef` line; or `source` it after `compinit`. Each command is one function
/// calling `_arguments` with its options, flags and positional arguments; a command with
/// subcommands hands the rest of the line to the selected one, at any depth. With `-S`, no option
/// is completed after `--`.
public enum ZshCompletionScript {
    /// The script for `spec`, the root of a program. `spec` must be valid
    /// (``CommandSpec/validationProblems()`` empty).
    public static func render(_ spec: CommandSpec) -> String {
        let commands = CompletionCommand.all(in: spec)
        let id = CompletionCommand.identifier(spec.name)
        let q = ShellQuoting.posix
        var out = """
            #compdef \(spec.name)
            # zsh completion for \(spec.name), generated from its command specs by
            # `\(spec.name) --generate-completion-script zsh`. Install it as _\(spec.name) in a directory
            # of $fpath (share/zsh/site-functions), or load it with `source` after compinit.

            # Offers the lines this same program prints when run with "$@" (saved names and the like).
            __\(id)_run() {
                local program=${_\(id)_program:-\(spec.name)}
                [[ $program == '~/'* ]] && program=$HOME/${program#'~/'}
                local -a lines
                lines=(${(f)"$("$program" "$@" 2>/dev/null)"})
                compadd -a lines
            }


            """
        for command in commands {
            out += function(command, id: id, quote: q)
        }
        out += """
            if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
                _\(spec.name) "$@"
            else
                compdef _\(spec.name) \(q(spec.name))
            fi

            """
        return out
    }

    /// `_herdr-remote`, `_herdr-remote.pins.forget`: a dot cannot occur in a command name.
    private static func functionName(_ command: CompletionCommand) -> String {
        "_" + command.path.joined(separator: ".")
    }

    private static func function(_ command: CompletionCommand, id: String, quote q: (String) -> String) -> String {
        var specs: [String] = []
        for option in command.options {
            let exclusion: String
            if option.endsTheLine {
                exclusion = "(- *)"
            } else if option.isRepeatable {
                exclusion = "*"
            } else {
                exclusion = "(" + option.words.joined(separator: " ") + ")"
            }
            // -p+ takes -p22 or -p 22; --port= takes --port=22 or --port 22.
            var forms = ["--\(option.long)" + (option.takesValue ? "=" : "")]
            if let short = option.short { forms.insert("-\(short)" + (option.takesValue ? "+" : ""), at: 0) }
            var tail = "[\(description(option.help))]"
            if let valueName = option.valueName {
                tail += ":\(message(valueName)):\(action(option.completion, id: id))"
            }
            let formsText = forms.count == 1 ? forms[0] : "{" + forms.joined(separator: ",") + "}"
            specs.append(q(exclusion) + formsText + q(tail))
        }
        for argument in command.arguments {
            let lead = argument.isRepeating ? "*:" : argument.isRequired ? ":" : "::"
            specs.append(q(lead + message(argument.name) + ":" + action(argument.completion, id: id)))
        }
        let isRoot = command.path.count == 1
        var out = "# \(command.pathText)\n\(functionName(command))() {\n"
        if isRoot { out += "    local _\(id)_program=${words[1]}\n" }
        if command.subcommands.isEmpty {
            out += "    _arguments -s -S \\\n"
            out += specs.map { "        \($0)" }.joined(separator: " \\\n") + "\n}\n\n"
            return out
        }
        specs += [q(": :->subcommand"), q("*:: :->argument")]
        out += """
                local curcontext=$curcontext state state_descr line ret=1
                local -A opt_args
                _arguments -s -S -C \\

            """
        out += specs.map { "        \($0)" }.joined(separator: " \\\n") + " && ret=0\n"
        out += """
                case $state in
                    (subcommand)
                        local -a subcommands
                        subcommands=(

            """
        for subcommand in command.subcommands {
            out += "                \(q(subcommand.name + ":" + subcommand.abstract))\n"
        }
        out += """
                        )
                        _describe -t commands \(q(command.pathText + " subcommand")) subcommands && ret=0
                        ;;
                    (argument)
                        curcontext=${curcontext%:*:*}:\(command.path.joined(separator: "-"))-$words[1]:
                        case $words[1] in

            """
        for subcommand in command.subcommands {
            let child = CompletionCommand(path: command.path + [subcommand.name], spec: subcommand, isRoot: false)
            out += "                (\(subcommand.name)) \(functionName(child)) && ret=0 ;;\n"
        }
        out += """
                        esac
                        ;;
                esac
                return ret
            }


            """
        return out
    }

    /// What `_arguments` runs for a value: a space shows the message and offers nothing.
    private static func action(_ source: CompletionSource, id: String) -> String {
        switch source {
        case .none: " "
        case .files: "_files"
        case .directories: "_files -/"
        case .values(let values): "(" + values.joined(separator: " ") + ")"
        case .command(let arguments): "{__\(id)_run " + arguments.joined(separator: " ") + "}"
        }
    }

    /// Text inside `[...]`: brackets and backslashes escaped.
    private static func description(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if character == "\\" || character == "[" || character == "]" { escaped.append("\\") }
            escaped.append(character == "\n" ? " " : character)
        }
        return escaped
    }

    /// A value's message between colons: colons and backslashes escaped.
    private static func message(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ":", with: "\\:")
    }
}
