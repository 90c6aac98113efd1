/// What a screen session runs: a herdr session by name, as `open` does, or an agent's pane, as
/// `open agent` does.
public enum ScreenTarget: Hashable, Sendable {
    /// `name` nil: herdr's default session.
    case session(name: String?)
    case agent(session: String, pane: String)
}
