/// The fish completion script of a program, generated from its ``CommandSpec``.
///
/// Install it as `share/fish/vendor_completions.d/NAME.fish`, or `source` it. One `complete` line
/// per subcommand, option, flag and completed argument, each guarded by a condition that reads the
/// words before the cursor with ``CommandParser``'s rules (which command they select, how many
/// positional words it has, whether `--` was given), so candidates follow the command reached at
/// any depth and no option is offered after `--`.
public enum FishCompletionScript {
    /// The script for `spec`, the root of a program. `spec` must be valid
    /// (``CommandSpec/validationProblems()`` empty).
    public static func render(_ spec: CommandSpec) -> String {
        let commands = CompletionCommand.all(in: spec)
        let p = "__" + CompletionCommand.identifier(spec.name)
        let q = ShellQuoting.fish
        let program = q(spec.name)
        var out = """
            # fish completion for \(spec.name), generated from its command specs by
            # `\(spec.name) --generate-completion-script fish`. Install it as
            # share/fish/vendor_completions.d/\(spec.name).fish, or load it with `source`.

            # Succeeds when "$argv[1]" (a command's path, a space, a word) is the path of a subcommand.
            function \(p)_is_command
                switch $argv[1]

            """
        let subcommandPaths = commands.dropFirst().map { q($0.pathText) }
        if !subcommandPaths.isEmpty {
            out += "        case \(subcommandPaths.joined(separator: " "))\n            return 0\n"
        }
        out += """
                end
                return 1
            end

            # Succeeds when the word $argv[2] on the command $argv[1] is an option whose value is the next word.
            function \(p)_takes_value
                set -l word $argv[2]
                switch $word
                    case '--*=*'
                        return 1
                    case '--*'
                        switch "$argv[1] $word"

            """
        let longValued = commands.flatMap { command in
            command.options.filter(\.takesValue).map { q("\(command.pathText) --\($0.long)") }
        }
        if !longValued.isEmpty {
            out += "                case \(longValued.joined(separator: " "))\n                    return 0\n"
        }
        out += """
                        end
                        return 1
                end
                set -l value_letters
                set -l flag_letters
                switch $argv[1]

            """
        for command in commands {
            let valueLetters = command.options.filter(\.takesValue).compactMap(\.short).map { String($0) }
            let flagLetters = command.options.filter { !$0.takesValue }.compactMap(\.short).map { String($0) }
            out += "        case \(q(command.pathText))\n"
            out += "            set value_letters \(valueLetters.joined(separator: " "))\n"
            out += "            set flag_letters \(flagLetters.joined(separator: " "))\n"
        }
        out += """
                end
                # A cluster of short flags may end in one option, whose value is then the next word.
                set -l letters (string split '' -- (string sub --start 2 -- $word))
                for index in (seq (count $letters))
                    if contains -- $letters[$index] $value_letters
                        test $index -eq (count $letters)
                        return
                    end
                    contains -- $letters[$index] $flag_letters; or return 1
                end
                return 1
            end

            # Prints what the words before the cursor select: the command's path, how many positional
            # words it has, 1 after `--` (else 0), and 1 when the cursor is on an option's value (else 0).
            function \(p)_state
                set -l words (commandline -opc)
                set -l command \(program)
                set -l positionals 0
                set -l dashdash 0
                set -l index 2
                while test $index -le (count $words)
                    set -l word $words[$index]
                    set index (math $index + 1)
                    if test $dashdash -eq 1
                        set positionals (math $positionals + 1)
                        continue
                    end
                    switch $word
                        case '--'
                            set dashdash 1
                            continue
                        case '-?*'
                            if \(p)_takes_value $command $word
                                if test $index -gt (count $words)
                                    printf '%s\\n' $command $positionals 0 1
                                    return
                                end
                                set index (math $index + 1)
                            end
                            continue
                    end
                    if test $positionals -eq 0; and \(p)_is_command "$command $word"
                        set command "$command $word"
                    else
                        set positionals (math $positionals + 1)
                    end
                end
                printf '%s\\n' $command $positionals $dashdash 0
            end

            # Succeeds when the words select the command $argv[1] and options may follow (fish asks this
            # also of the option whose value is being completed).
            function \(p)_options_for
                set -l state (\(p)_state)
                test "$state[1]" = "$argv[1]" -a $state[3] -eq 0
            end

            # Succeeds when the words select the command $argv[1] and a subcommand goes next.
            function \(p)_subcommand_for
                set -l state (\(p)_state)
                test "$state[1]" = "$argv[1]" -a $state[2] -eq 0 -a $state[3] -eq 0 -a $state[4] -eq 0
            end

            # Succeeds when the next word is positional argument $argv[2] (from 0) of the command $argv[1]
            # ($argv[3] = repeating: that one or any later).
            function \(p)_argument_for
                set -l state (\(p)_state)
                test "$state[1]" = "$argv[1]" -a $state[4] -eq 0; or return 1
                if test "$argv[3]" = repeating
                    test $state[2] -ge $argv[2]
                else
                    test $state[2] -eq $argv[2]
                end
            end

            # Prints the lines this same program prints when run with $argv (saved names and the like).
            function \(p)_run
                set -l program (commandline -opc)[1]
                test -n "$program"; or set program \(program)
                $program $argv 2>/dev/null
            end

            complete -c \(program) -f

            """
        for command in commands {
            let path = q(command.pathText)
            if !command.subcommands.isEmpty {
                for subcommand in command.subcommands {
                    out +=
                        "complete -c \(program) -n \(q("\(p)_subcommand_for \(path)")) -a \(q(subcommand.name)) -d \(q(subcommand.abstract))\n"
                }
            }
            for option in command.options {
                var line = "complete -c \(program) -n \(q("\(p)_options_for \(path)")) -l \(q(option.long))"
                if let short = option.short { line += " -s \(short)" }
                if option.takesValue { line += " " + valueArguments(option.completion, prefix: p) }
                line += " -d \(q(option.help))"
                out += line + "\n"
            }
            for (index, argument) in command.arguments.enumerated() {
                guard let candidates = argumentCandidates(argument, prefix: p) else { continue }
                let repeating = argument.isRepeating ? " repeating" : ""
                out +=
                    "complete -c \(program) -n \(q("\(p)_argument_for \(path) \(index)\(repeating)")) \(candidates)\n"
            }
        }
        return out
    }

    /// What `complete` gets for an option's value: `-r` (it takes one) with its candidates.
    private static func valueArguments(_ source: CompletionSource, prefix p: String) -> String {
        switch source {
        case .none: "-x"
        case .files: "-r -F"
        case .directories: "-x -a '(__fish_complete_directories)'"
        case .values(let values): "-x -a " + ShellQuoting.fish(values.joined(separator: " "))
        case .command(let arguments): "-x -a " + ShellQuoting.fish("(\(p)_run \(arguments.joined(separator: " ")))")
        }
    }

    /// What `complete` gets for a positional argument (with its help as the candidates'
    /// description, where fish would show none of its own); nil when it offers nothing.
    private static func argumentCandidates(_ argument: PositionalSpec, prefix p: String) -> String? {
        let description = " -d " + ShellQuoting.fish(argument.help)
        switch argument.completion {
        case .none: return nil
        case .files: return "-F"
        case .directories: return "-a '(__fish_complete_directories)'"
        case .values(let values): return "-a " + ShellQuoting.fish(values.joined(separator: " ")) + description
        case .command(let arguments):
            return "-a " + ShellQuoting.fish("(\(p)_run \(arguments.joined(separator: " ")))") + description
        }
    }
}
