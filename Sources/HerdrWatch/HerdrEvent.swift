import HerdrAgents

/// One event herdr pushed on a subscription (specs/herdr-api.md, `events.subscribe`), reduced to
/// what the watcher uses; the data's other fields are ignored, as herdr asks of its clients.
public enum HerdrEvent: Sendable, Hashable {
    /// `pane.agent_status_changed`: the pane's agent has a new status (and maybe a kind or title).
    case statusChanged(pane: String, status: HerdrAgentStatus, kind: String?, title: String?)
    /// `pane.created`: a pane came (an agent may be detected in it later).
    case paneCreated(pane: String?)
    /// `pane.closed`: a pane and its agent are gone.
    case paneClosed(pane: String)
    /// `pane.agent_detected`: herdr found an agent in a pane.
    case agentDetected(pane: String?)
    /// Any other event, or one whose data lacks what it needs: nothing to do.
    case other(String)

    /// The lifecycle subscriptions the watcher asks for beside one status subscription per pane.
    public static let lifecycleNames = ["pane.created", "pane.closed", "pane.agent_detected"]
    public static let statusChangedName = "pane.agent_status_changed"

    /// The event of a pushed line (`HerdrJSON.Line.event`).
    public init(name: String, data: [String: Any]) {
        let pane = (data["pane_id"] as? String).flatMap { HerdrAgent.isValidPane($0) ? $0 : nil }
        switch name {
        case Self.statusChangedName:
            guard let pane, let status = data["agent_status"] as? String else {
                self = .other(name)
                return
            }
            self = .statusChanged(
                pane: pane, status: HerdrAgentStatus(herdr: status),
                kind: BoundedText.optional(
                    data["agent"] as? String ?? data["display_agent"] as? String, maxBytes: HerdrAgent.maximumKindBytes),
                title: BoundedText.optional(data["title"] as? String, maxBytes: HerdrAgent.maximumTitleBytes))
        case "pane.created": self = .paneCreated(pane: pane)
        case "pane.closed": self = pane.map { .paneClosed(pane: $0) } ?? .other(name)
        case "pane.agent_detected": self = .agentDetected(pane: pane)
        default: self = .other(BoundedText.printable(name, maxBytes: 64))
        }
    }
}
