/// A shell ``CommandLineTool`` writes a completion script for (`--generate-completion-script SHELL`).
public enum CompletionShell: String, Sendable, CaseIterable {
    case bash, zsh, fish

    /// The completion script of the program whose root is `spec`, for this shell.
    public func script(for spec: CommandSpec) -> String {
        switch self {
        case .bash: BashCompletionScript.render(spec)
        case .zsh: ZshCompletionScript.render(spec)
        case .fish: FishCompletionScript.render(spec)
        }
    }
}
