/// The bash completion script of a program, generated from its ``CommandSpec``.
///
/// It needs nothing but bash (no bash-completion package): `source` it, or install it as
/// `share/bash-completion/completions/NAME` where bash-completion loads it on first use. It
/// completes subcommands at any depth; after `-`, the options and flags of the command reached
/// (long and short, `-h`/`--help`, and `--version` on a root with a version); option values and
/// positional arguments by their ``CompletionSource``; and no option after `--`. The words before
/// the cursor are read with ``CommandParser``'s rules: an option's value is the next word
/// (`--port 22`, `--port=22`, `-p 22`, `-vp 22`), and a word in subcommand position selects it.
///
/// The generated part is data (`case` tables keyed by command path); the walk over the words is the
/// same for every program.
public enum BashCompletionScript {
    /// The script for `spec`, the root of a program. `spec` must be valid
    /// (``CommandSpec/validationProblems()`` empty).
    public static func render(_ spec: CommandSpec) -> String {
        let commands = CompletionCommand.all(in: spec)
        let id = CompletionCommand.identifier(spec.name)
        let p = "__\(id)"
        let q = ShellQuoting.posix
        var out = """
            # bash completion for \(spec.name), generated from its command specs by
            # `\(spec.name) --generate-completion-script bash`. Load it with `source`, or install it as
            # share/bash-completion/completions/\(spec.name).

            # Adds to COMPREPLY each argument that starts with the word being completed ($cur).
            \(p)_offer() {
                local candidate
                for candidate in "$@"; do
                    [[ $candidate == "$cur"* ]] && COMPREPLY+=("$candidate")
                done
                return 0
            }

            \(p)_files() {
                compopt -o filenames 2>/dev/null
                local path
                while IFS= read -r path; do COMPREPLY+=("$path"); done < <(compgen -f -- "$cur")
                return 0
            }

            \(p)_directories() {
                compopt -o filenames 2>/dev/null
                local path
                while IFS= read -r path; do COMPREPLY+=("$path"); done < <(compgen -d -- "$cur")
                return 0
            }

            # Adds the lines this same program prints when run with "$@" (saved names and the like),
            # quoted for the command line.
            \(p)_run() {
                local program="${COMP_WORDS[0]}" line quoted
                [[ $program == "~/"* ]] && program="$HOME/${program#"~/"}"
                while IFS= read -r line; do
                    [[ -n $line ]] || continue
                    printf -v quoted '%q' "$line"
                    [[ $line == "$cur"* || $quoted == "$cur"* ]] && COMPREPLY+=("$quoted")
                done < <("$program" "$@" 2>/dev/null)
                return 0
            }


            """

        out += "# Succeeds when \"$1\" (a command's path, a space, a word) is the path of a subcommand.\n"
        out += "\(p)_is_command() {\n"
        let subcommandPaths = commands.dropFirst().map { q($0.pathText) }
        if !subcommandPaths.isEmpty {
            out += "    case \"$1\" in\n"
            out += "        \(subcommandPaths.joined(separator: " | ")) ) return 0 ;;\n"
            out += "    esac\n"
        }
        out += "    return 1\n}\n\n"

        out += """
            # Succeeds when the word "$2" on the command "$1" is an option whose value is the next word.
            \(p)_takes_value() {
                local word="$2" valueLetters="" flagLetters="" letter
                local -i index
                case "$word" in
                    --*=*) return 1 ;;
                    --*)
                        case "$1 $word" in

            """
        let longValued = commands.flatMap { command in
            command.options.filter(\.takesValue).map { q("\(command.pathText) --\($0.long)") }
        }
        if !longValued.isEmpty { out += "                \(longValued.joined(separator: " | ")) ) return 0 ;;\n" }
        out += """
                        esac
                        return 1 ;;
                esac
                case "$1" in

            """
        for command in commands {
            let valueLetters = String(command.options.filter(\.takesValue).compactMap(\.short))
            let flagLetters = String(command.options.filter { !$0.takesValue }.compactMap(\.short))
            guard !valueLetters.isEmpty || !flagLetters.isEmpty else { continue }
            out += "        \(q(command.pathText))) valueLetters=\(q(valueLetters)) flagLetters=\(q(flagLetters)) ;;\n"
        }
        out += """
                esac
                # A cluster of short flags may end in one option, whose value is then the next word.
                for ((index = 1; index < ${#word}; index++)); do
                    letter="${word:index:1}"
                    if [[ $valueLetters == *"$letter"* ]]; then
                        ((index == ${#word} - 1))
                        return
                    fi
                    [[ $flagLetters == *"$letter"* ]] || return 1
                done
                return 1
            }

            # Offers the options and flags of the command "$1".
            \(p)_options() {
                case "$1" in

            """
        for command in commands {
            let words = command.options.flatMap(\.words).map(q)
            out += "        \(q(command.pathText))) \(p)_offer \(words.joined(separator: " ")) ;;\n"
        }
        out += """
                esac
            }

            # Offers the subcommands of the command "$1"; fails when it has none.
            \(p)_subcommands() {
                case "$1" in

            """
        for command in commands where !command.subcommands.isEmpty {
            let names = command.subcommands.map { q($0.name) }
            out += "        \(q(command.pathText))) \(p)_offer \(names.joined(separator: " ")) ;;\n"
        }
        out += """
                    *) return 1 ;;
                esac
            }

            # Offers the value of the option "$2" (its long form, or a short cluster ending in it) of the
            # command "$1".
            \(p)_option_value() {
                local option="$2"
                [[ $option == --* ]] || option="-${option: -1}"
                case "$1 $option" in

            """
        for command in commands {
            for option in command.options where option.takesValue {
                guard let action = action(option.completion, prefix: p) else { continue }
                let keys = option.words.map { q("\(command.pathText) \($0)") }
                out += "        \(keys.joined(separator: " | "))) \(action) ;;\n"
            }
        }
        out += """
                esac
                return 0
            }

            # Offers positional argument number "$2" (from 0) of the command "$1". Fails with 1 when a word
            # of free text goes there, with 2 when no argument does.
            \(p)_argument() {
                case "$1" in

            """
        for command in commands where !command.arguments.isEmpty {
            out += "        \(q(command.pathText)))\n            case \"$2\" in\n"
            for (index, argument) in command.arguments.enumerated() {
                let pattern = argument.isRepeating ? "*" : String(index)
                out += "                \(pattern)) \(action(argument.completion, prefix: p) ?? "return 1") ;;\n"
            }
            if !(command.arguments.last?.isRepeating ?? false) { out += "                *) return 2 ;;\n" }
            out += "            esac ;;\n"
        }
        out += """
                    *) return 2 ;;
                esac
            }

            _\(id)() {
                local cur="${COMP_WORDS[COMP_CWORD]}" command=\(q(spec.name)) word
                local -i index=1 positionals=0 dashdash=0
                COMPREPLY=()
                while ((index < COMP_CWORD)); do
                    word="${COMP_WORDS[index]}"
                    index+=1
                    if ((dashdash)); then
                        positionals+=1
                        continue
                    fi
                    case "$word" in
                        --)
                            dashdash=1
                            continue
                            ;;
                        -?*)
                            if \(p)_takes_value "$command" "$word"; then
                                # bash splits --option=value at '=' (COMP_WORDBREAKS): step over it.
                                if [[ ${COMP_WORDS[index]} == = ]]; then
                                    ((index == COMP_CWORD)) && cur=""
                                    ((index < COMP_CWORD)) && index+=1
                                fi
                                if ((index == COMP_CWORD)); then
                                    \(p)_option_value "$command" "$word"
                                    return 0
                                fi
                                index+=1
                            fi
                            continue
                            ;;
                    esac
                    if ((positionals == 0)) && \(p)_is_command "$command $word"; then
                        command+=" $word"
                    else
                        positionals+=1
                    fi
                done
                if ((!dashdash)); then
                    # --option=value as one word (when '=' is not a word break).
                    if [[ $cur == --*=* ]]; then
                        local option="${cur%%=*}"
                        if \(p)_takes_value "$command" "$option"; then
                            cur="${cur#*=}"
                            \(p)_option_value "$command" "$option"
                            COMPREPLY=("${COMPREPLY[@]/#/"$option="}")
                        fi
                        return 0
                    fi
                    if [[ $cur == -* ]]; then
                        \(p)_options "$command"
                        return 0
                    fi
                    \(p)_subcommands "$command" && return 0
                fi
                \(p)_argument "$command" "$positionals"
                # No argument goes here: show what else may come.
                (($? == 2 && !dashdash)) && \(p)_options "$command"
                return 0
            }

            complete -F _\(id) \(q(spec.name))

            """
        return out
    }

    /// The shell code offering `source`'s candidates; nil for ``CompletionSource/none``.
    private static func action(_ source: CompletionSource, prefix p: String) -> String? {
        switch source {
        case .none: nil
        case .files: "\(p)_files"
        case .directories: "\(p)_directories"
        case .values(let values): "\(p)_offer " + values.map(ShellQuoting.posix).joined(separator: " ")
        case .command(let arguments): "\(p)_run " + arguments.map(ShellQuoting.posix).joined(separator: " ")
        }
    }
}
