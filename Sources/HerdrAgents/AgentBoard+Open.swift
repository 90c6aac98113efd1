extension AgentBoard {
    /// The computer's board before herdr-host has read herdr at all.
    public static let notRead = AgentBoard(
        herdr: HerdrAvailability(.failing, detail: "herdr-host has not read herdr yet"))

    /// Why `key` cannot be opened from this board (the device named an agent the computer does
    /// not list: gone, never there, or its session not ready), in words for the refusal; nil
    /// when the board lists it.
    public func refusalToOpen(_ key: AgentKey) -> String? {
        guard agents[key] == nil else { return nil }
        let base = "no agent \(key.pane) in herdr session \(key.session) on this computer"
        guard herdr.state == .ready else {
            return base + " (herdr is \(herdr.state.rawValue)\(Self.detail(herdr.detail)))"
        }
        guard let session = sessions.first(where: { $0.name == key.session }) else {
            return base + " (herdr has no such session here)"
        }
        guard session.state == .ready else {
            return base + " (the session is \(session.state.rawValue)\(Self.detail(session.detail)))"
        }
        return base
    }

    private static func detail(_ text: String?) -> String { text.map { ": \($0)" } ?? "" }
}
