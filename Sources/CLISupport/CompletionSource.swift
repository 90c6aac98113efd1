/// What a shell offers for an option's value or a positional argument when Tab is pressed.
///
/// It is part of the spec, so the bash, zsh and fish scripts (``BashCompletionScript``,
/// ``ZshCompletionScript``, ``FishCompletionScript``) complete what `--help` documents, from the
/// same data.
public enum CompletionSource: Sendable, Equatable {
    /// Nothing: free text (a name, a URL, a number).
    case none
    /// Paths of files (and directories, to reach them).
    case files
    /// Paths of directories only.
    case directories
    /// A fixed set of words, e.g. `["unix", "windows"]`.
    case values([String])
    /// The lines this same program prints when run with these arguments, e.g.
    /// `["hosts", "--names"]` for the saved host names. The command runs on every Tab press, so it
    /// must be quick, print one candidate a line, and change nothing.
    case command([String])

    /// Everything wrong with this source, described for `what` (e.g. `option '--platform'`).
    ///
    /// Words end up in shell scripts of three shells, unquoted in places, so they are kept to
    /// characters none of the shells treats specially.
    func problems(for what: String) -> [String] {
        switch self {
        case .none, .files, .directories:
            return []
        case .values(let values):
            if values.isEmpty { return ["\(what): completion values are empty"] }
            var problems = values.filter { !CompletionSource.isSafeWord($0) }.map {
                "\(what): completion value '\($0)' is not a plain word"
            }
            if Set(values).count != values.count { problems.append("\(what): a completion value is listed twice") }
            return problems
        case .command(let arguments):
            if arguments.isEmpty { return ["\(what): completion command has no arguments"] }
            return arguments.filter { !CompletionSource.isSafeWord($0) }.map {
                "\(what): completion command argument '\($0)' is not a plain word"
            }
        }
    }

    /// Letters, digits and `_ . / + @ , = -`, not starting with `+ @ , =` (zsh expands a leading `=`).
    static func isSafeWord(_ word: String) -> Bool {
        guard let first = word.first, first.isASCII, first.isLetter || first.isNumber || "_./-".contains(first)
        else { return false }
        return word.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_./+@,=-".contains($0)) }
    }
}
