import Foundation
import HerdrAgents
import HerdrKit

/// One agent that came to need a person (`blocked`) or finished (`done`), as `watch` tells it:
/// the words of its notification, its line without a terminal, and `--exec`'s environment. Pure.
struct AgentNotice: Sendable, Equatable {
    var computer: String
    var agent: HerdrAgent
    /// Its status before (nil: it was not there).
    var previous: HerdrAgentStatus?
    /// When this device saw the change (Unix seconds).
    var at: Int64

    /// `studio: claude-2 needs you`, `studio: claude-2 is done`.
    var title: String {
        "\(computer): \(agent.displayName) \(agent.status == .blocked ? "needs you" : "is \(agent.status.rawValue)")"
    }

    /// Where it is and what it was doing: `default/w1:p2 · claude · was working · Approve edit?`.
    var body: String {
        var parts = ["\(agent.session)/\(agent.pane)"]
        if let kind = agent.kind { parts.append(kind) }
        parts.append(previous.map { "was \($0.rawValue)" } ?? "new")
        if let title = agent.title { parts.append(title) }
        return parts.joined(separator: " · ")
    }

    /// The line `watch` prints for it without a terminal, fields separated by spaces (the last,
    /// the agent's name or `-`, may hold spaces):
    /// `2026-12-05T10:00:03Z studio default/w1:p2 blocked working claude-2`.
    var line: String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        let time = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(at)))
        return
            "\(time) \(computer) \(agent.session)/\(agent.pane) \(agent.status.rawValue) \(previous?.rawValue ?? "-") \(agent.name ?? "-")"
    }

    /// What `--exec`'s command finds in its environment.
    var environment: [String: String] {
        [
            "HERDR_COMPUTER": computer,
            "HERDR_SESSION": agent.session,
            "HERDR_PANE": agent.pane,
            "HERDR_TARGET": "\(agent.session)/\(agent.pane)",
            "HERDR_AGENT": agent.name ?? "",
            "HERDR_KIND": agent.kind ?? "",
            "HERDR_TITLE": agent.title ?? "",
            "HERDR_STATUS": agent.status.rawValue,
            "HERDR_PREVIOUS_STATUS": previous?.rawValue ?? "",
            "HERDR_SINCE": agent.since.map(String.init) ?? "",
            "HERDR_EVENT_TIME": String(at),
        ]
    }

    /// The changes from `old` to `new` a person is told about: agents that became `blocked` or
    /// `done` (or appeared so), on `computer`, seen at `now`.
    static func changes(on computer: String, from old: AgentBoard, to new: AgentBoard, now: Int64) -> [AgentNotice] {
        new.changes(since: old).filter { $0.agent.status.needsAttention }.map {
            AgentNotice(computer: computer, agent: $0.agent, previous: $0.was, at: now)
        }
    }
}

/// The terminal escapes that many terminals turn into a desktop notification: OSC 777 `notify`
/// (urxvt, foot, WezTerm, Ghostty, kitty, VTE terminals…) and OSC 9 (iTerm2, Windows Terminal,
/// ConEmu…), after a bell. Texts lose control characters (an escape could end the sequence early)
/// and OSC 777's title its `;` (its field separator). Pure.
enum TerminalNotification {
    static let bell = "\u{07}"

    static func escapes(title: String, body: String) -> String {
        let title = clean(title)
        let body = clean(body)
        let notify = "\u{1B}]777;notify;\(title.replacingOccurrences(of: ";", with: ","));\(body)\u{07}"
        // "herdr: " first: ConEmu reads OSC 9 text that starts with digits and ';' as a command.
        let nine = "\u{1B}]9;herdr: \(title): \(body)\u{07}"
        return bell + notify + nine
    }

    /// At most this many characters of each text.
    static let maximumCharacters = 200

    static func clean(_ text: String) -> String {
        String(TerminalText.printable(text).prefix(maximumCharacters))
    }
}
