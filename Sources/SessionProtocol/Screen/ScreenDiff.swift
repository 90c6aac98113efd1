import ScreenModel

/// What a device must redraw to go from one screen to the next: how far the whole screen moved
/// up (a shell's output scrolling, sent as a number instead of every row again) and the rows that
/// differ after that.
struct ScreenDiff: Equatable {
    var scroll: Int
    var rows: [ScreenUpdate.Row]

    /// Row `index` of `screen` as sent: trailing blank cells dropped.
    static func row(_ index: Int, of screen: TerminalScreen) -> ScreenUpdate.Row {
        var cells = screen.lines[index]
        while let last = cells.last, last == .blank { cells.removeLast() }
        return ScreenUpdate.Row(index: index, cells: cells)
    }

    /// Every row that is not blank: a whole state's rows.
    static func whole(_ screen: TerminalScreen) -> ScreenDiff {
        ScreenDiff(
            scroll: 0, rows: (0..<screen.rows).map { row($0, of: screen) }.filter { !$0.cells.isEmpty })
    }

    /// The change from `old` to `new`; the whole screen when their sizes differ.
    static func between(_ old: TerminalScreen, _ new: TerminalScreen) -> ScreenDiff {
        guard old.rows == new.rows, old.columns == new.columns else { return whole(new) }
        let scroll = bestScroll(from: old, to: new)
        var changed: [ScreenUpdate.Row] = []
        for index in 0..<new.rows {
            let source = index + scroll
            let before = source < old.rows ? old.lines[source] : nil
            if let before, before == new.lines[index] { continue }
            let row = row(index, of: new)
            guard let before else {
                // A row scrolled in at the bottom starts blank: a blank one needs no redraw.
                if !row.cells.isEmpty { changed.append(row) }
                continue
            }
            let parts = changes(index, from: before, to: new.lines[index])
            let length = { (rows: [ScreenUpdate.Row]) in rows.map(ScreenParts.encodedLength).reduce(0, +) }
            changed += length(parts) < length([row]) ? parts : [row]
        }
        return ScreenDiff(scroll: scroll, rows: changed)
    }

    /// Unchanged cells between two changes that are sent anyway rather than starting another row
    /// entry (an entry's header and its run's cost about as much as 12 plain cells of a text run).
    static let gapWorthSkipping = 12

    /// Row `index` as the cells that differ between `old` and `new` (both a full row), a part
    /// for each group of changes; the last clears the rest of the row when the new row ends in
    /// blanks there. A part never splits a wide character from its right half.
    static func changes(_ index: Int, from old: [ScreenCell], to new: [ScreenCell]) -> [ScreenUpdate.Row] {
        let width = min(old.count, new.count)
        var spans: [Range<Int>] = []
        var column = 0
        while column < width {
            guard old[column] != new[column] else {
                column += 1
                continue
            }
            var start = column
            if start > 0, old[start].width == 0 || new[start].width == 0 { start -= 1 }
            var end = column + 1
            if end < width, old[end - 1].width == 2 || new[end - 1].width == 2 { end += 1 }
            if let last = spans.last, start - last.upperBound < gapWorthSkipping {
                spans[spans.count - 1] = last.lowerBound..<max(end, last.upperBound)
            } else {
                spans.append(start..<end)
            }
            column = end
        }
        var content = new.count
        while content > 0, new[content - 1] == .blank { content -= 1 }
        return spans.enumerated().map { offset, span in
            // The last part: the new row's trailing blanks are the cleared rest, not cells.
            if offset == spans.count - 1, span.upperBound >= content {
                let start = min(span.lowerBound, content)
                return ScreenUpdate.Row(index: index, column: start, cells: Array(new[start..<content]))
            }
            return ScreenUpdate.Row(index: index, column: span.lowerBound, cells: Array(new[span]), keepsRest: true)
        }
    }

    /// The upward move that leaves the most rows in place, 0 unless it saves more rows than it
    /// costs. Rows that repeat (blank ones) do not vote: they match anywhere.
    static func bestScroll(from old: TerminalScreen, to new: TerminalScreen) -> Int {
        let rows = new.rows
        guard rows > 1 else { return 0 }
        var positions: [[ScreenCell]: [Int]] = [:]
        for index in 1..<rows { positions[old.lines[index], default: []].append(index) }
        var votes: [Int: Int] = [:]
        var inPlace = 0
        for index in 0..<rows {
            if old.lines[index] == new.lines[index] { inPlace += 1 }
            guard let matches = positions[new.lines[index]], matches.count <= 2 else { continue }
            for source in matches where source > index { votes[source - index, default: 0] += 1 }
        }
        guard let (distance, count) = votes.max(by: { ($0.value, -$0.key) < ($1.value, -$1.key) }), count > inPlace
        else { return 0 }
        return distance
    }
}
