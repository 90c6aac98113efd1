/// Quoting text for the shell scripts the completion generators write.
enum ShellQuoting {
    /// `text` in single quotes for bash and zsh: nothing inside is expanded.
    static func posix(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// `text` in single quotes for fish, where `\\` and `\'` are the only escapes inside them.
    static func fish(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: #"\"#, with: #"\\"#).replacingOccurrences(of: "'", with: #"\'"#) + "'"
    }
}
