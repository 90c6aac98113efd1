import HerdrAgents

/// `watch`'s board as a state machine: the agents shown, which one is chosen, and what a key
/// does (time passed in, seconds). Pure; `BoardView` draws it.
///
/// Up/down (`k`/`j`) move the choice; a number chooses that row (digits typed within
/// `digitPause` of each other make one number: `1` `2` is row 12 when there are 12 rows); Enter
/// opens the chosen agent; `q`, Ctrl-C or Ctrl-D quit. The choice follows its agent when the rows
/// are sorted again.
struct BoardScreen: Sendable {
    enum Action: Equatable {
        case none
        case redraw
        case open(AgentRow)
        case quit
    }

    static let digitPause = 1.0

    private(set) var rows: [AgentRow] = []
    /// The chosen row's index, when there are rows.
    private(set) var selected: Int?
    private var digits: (value: Int, at: Double)?

    /// New rows; the chosen agent stays chosen when it is still there, else the same place.
    mutating func show(_ rows: [AgentRow]) {
        let chosen = selected.map { self.rows[$0] }
        self.rows = rows
        guard !rows.isEmpty else {
            selected = nil
            return
        }
        if let chosen,
            let index = rows.firstIndex(where: { $0.computer == chosen.computer && $0.agent.key == chosen.agent.key })
        {
            selected = index
        } else {
            selected = min(selected ?? 0, rows.count - 1)
        }
    }

    mutating func handle(_ key: BoardKey, now: Double) -> Action {
        if case .digit = key {} else { digits = nil }
        switch key {
        case .quit: return .quit
        case .refresh: return .redraw
        case .other: return .none
        case .up:
            guard let selected, selected > 0 else { return .none }
            self.selected = selected - 1
            return .redraw
        case .down:
            guard let selected, selected < rows.count - 1 else { return .none }
            self.selected = selected + 1
            return .redraw
        case .enter:
            guard let selected else { return .none }
            return .open(rows[selected])
        case .digit(let digit):
            var number = digit
            if let typed = digits, now - typed.at < Self.digitPause, typed.value * 10 + digit <= rows.count {
                number = typed.value * 10 + digit
            }
            digits = (number, now)
            guard number >= 1, number <= rows.count else { return .none }
            selected = number - 1
            return .redraw
        }
    }
}

/// Draws `watch`'s board into lines of at most `width` characters, `height` lines in all: a title,
/// the agents (numbered, the chosen one marked `>`), a row for each computer with no agent to show,
/// notes, the last message and the keys. The rows scroll to keep the chosen one in sight. Pure.
enum BoardView {
    static let keys = "↑↓ j k or a number: choose · Enter: open its pane (~. comes back) · q: quit"

    static func render(
        _ screen: BoardScreen, computers: [ComputerEntry], message: String?, now: Int64, width: Int, height: Int
    ) -> [String] {
        let needing = screen.rows.filter { $0.agent.status.needsAttention }.count
        let away = computers.filter { !$0.isLive }.count
        func count(_ number: Int, _ word: String) -> String { "\(number) \(word)\(number == 1 ? "" : "s")" }
        var title =
            "herdr-remote watch · \(count(computers.count, "computer")) · \(count(screen.rows.count, "agent")) · \(needing) blocked or done"
        if away > 0 { title += " · \(away) not live" }
        var table = [["", "#"] + AgentTable.header]
        for (index, row) in screen.rows.enumerated() {
            table.append([index == screen.selected ? ">" : "", String(index + 1)] + AgentTable.cells(row, now: now))
        }
        for entry in computers {
            guard let status = entry.rowStatus else { continue }
            table.append(["", "", entry.name, "-", "-", "-", "-", status, "-"])
        }
        let tableLines = HostCommands.table(table).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            .map(String.init)
        let footer = (message.map { [$0] } ?? []) + [Self.keys]
        // The rows get the room first, then the notes, each cut to what is left.
        let room = max(1, height - 2 - footer.count)
        var body = Array(tableLines.dropFirst())
        if body.count > room {
            let chosen = screen.selected ?? 0
            let start = min(max(0, chosen - room / 2), body.count - room)
            body = Array(body[start..<(start + room)])
        }
        let left = room - body.count
        let notes = computers.flatMap(\.notes)
        let shownNotes = left >= 2 && !notes.isEmpty ? [""] + notes.prefix(left - 1) : []
        let lines = [title, tableLines.first ?? ""] + body + shownNotes + footer
        return lines.prefix(max(1, height)).map { String($0.prefix(max(1, width))) }
    }
}
