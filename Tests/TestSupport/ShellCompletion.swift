import Foundation

/// Completion scripts run in the real shells, each returning the candidates the shell would offer
/// for a command line: bash's completion function called as bash-completion calls it, zsh's line
/// editor driven on a pseudo-terminal (`zsh/zpty`), fish's own `complete -C`.
public enum ShellCompletion {
    /// Sources `script` in bash, sets `COMP_WORDS` to `words` (the last is the word being completed,
    /// `""` for a new one), `COMP_CWORD`, `COMP_LINE` and `COMP_POINT` with the cursor at the end,
    /// calls `function`, and returns `COMPREPLY`.
    public static func bash(
        script: String, function: String, words: [String], environment: [String: String]? = nil,
        currentDirectory: URL? = nil
    ) throws -> [String] {
        let driver = #"""
            source "$1" || exit 3
            function=$2
            shift 2
            COMP_WORDS=("$@")
            COMP_CWORD=$(($# - 1))
            COMP_LINE="$*"
            COMP_POINT=${#COMP_LINE}
            "$function" || exit 4
            ((${#COMPREPLY[@]})) && printf '%s\n' "${COMPREPLY[@]}"
            exit 0
            """#
        let result = try ProcessRunner.run(
            "/bin/bash", ["--norc", "--noprofile", "-c", driver, "bash", script, function] + words,
            environment: environment, currentDirectory: currentDirectory)
        guard result.status == 0, result.stderr.isEmpty else {
            throw FixtureError("bash completion exited \(result.status): \(result.stderr)")
        }
        return lines(result.stdout)
    }

    /// Starts an interactive `zsh -f` on a pseudo-terminal with `functionDirectory` first on
    /// `$fpath` and `compinit` run (no dump file, nothing read from or written to a home
    /// directory), types `line` and Tab, and returns the candidates completion added, sorted and
    /// without repeats (zsh adds some twice, once per pass).
    public static func zsh(
        functionDirectory: String, line: String, environment: [String: String]? = nil, currentDirectory: URL? = nil
    ) throws -> [String] {
        // Markers are assembled when printed (${:-HIT}), so the echo of the typed text never matches.
        let driver = #"""
            zmodload zsh/zpty || exit 3
            zpty z zsh -f -i
            zpty -w z "fpath=(${(q)1} \$fpath); autoload -U compinit; compinit -u -D; PS1=''; LISTMAX=100000"
            zpty -w z 'unsetopt auto_list auto_menu list_beep beep'
            zpty -w z 'compadd() { local -a __hits; builtin compadd -O __hits "$@"; local h; for h in $__hits; do print -rn -- "<<<${:-HIT}:$h>>>" >&2; done; builtin compadd "$@" }'
            zpty -w z 'finish() { print -rn -- "<<<${:-END}-OF-CANDIDATES>>>" >&2 }; zle -N finish; bindkey "^X" finish; bindkey "^I" complete-word'
            zpty -n -w z "$2"$'\t\x18'
            zpty -r -m z out '*<<<END-OF-CANDIDATES>>>*' || exit 4
            zpty -d z
            for piece in ${(s:>>>:)out}; do [[ $piece == *'<<<HIT:'* ]] && print -r -- ${piece#*'<<<HIT:'}; done
            exit 0
            """#
        let directory = try TemporaryDirectory(prefix: "zsh-completion-")
        let driverFile = directory.file("driver.zsh")
        try driver.write(to: driverFile, atomically: true, encoding: .utf8)
        var environment = environment ?? ProcessInfo.processInfo.environment
        environment["ZDOTDIR"] = directory.path
        let result = try ProcessRunner.run(
            try ProcessRunner.which("zsh"), ["-f", driverFile.path, functionDirectory, line],
            environment: environment, currentDirectory: currentDirectory)
        guard result.status == 0 else {
            throw FixtureError("zsh completion exited \(result.status): \(result.stderr)")
        }
        return Array(Set(lines(result.stdout))).sorted()
    }

    /// Sources `script` in fish (no configuration read) and returns the candidates of
    /// `complete -C line`, without their descriptions.
    public static func fish(
        script: String, line: String, environment: [String: String]? = nil, currentDirectory: URL? = nil
    ) throws -> [String] {
        let result = try ProcessRunner.run(
            try ProcessRunner.which("fish"),
            ["--no-config", "-c", #"source $argv[1]; or exit 3; complete -C $argv[2]"#, script, line],
            environment: environment, currentDirectory: currentDirectory)
        guard result.status == 0, result.stderr.isEmpty else {
            throw FixtureError("fish completion exited \(result.status): \(result.stderr)")
        }
        return lines(result.stdout).map { String($0.prefix { $0 != "\t" }) }
    }

    private static func lines(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}
