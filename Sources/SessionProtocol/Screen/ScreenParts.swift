import ScreenModel

/// A screen state cut into `screen` messages that each fit one frame: the header in every part,
/// the title and the scroll in the first only, as many whole row entries in each as fit.
enum ScreenParts {
    static func messages(
        stream: UInt32, state: UInt64, base: UInt64, inputBytes: UInt64, screen: TerminalScreen, bells: UInt32,
        title: String?, diff: ScreenDiff, maximumLength: Int = SessionMessage.maximumLength
    ) -> [SessionMessage] {
        let cursor = TerminalScreen.Cursor(
            row: min(max(0, screen.cursor.row), screen.rows - 1),
            column: min(max(0, screen.cursor.column), screen.columns - 1), visible: screen.cursor.visible)
        func part(_ rows: [ScreenUpdate.Row], first: Bool, last: Bool) -> SessionMessage {
            .screen(
                ScreenUpdate(
                    stream: stream, state: state, base: base, inputBytes: inputBytes, isLastPart: last,
                    columns: screen.columns, rows: screen.rows, cursor: cursor, modes: screen.modes, bells: bells,
                    scroll: first ? diff.scroll : 0, title: first ? title : nil, lines: rows))
        }
        let firstHeader =
            ScreenUpdate.headerLength + SessionMessage.utf8(title ?? "", limit: SessionMessage.maximumText).count
        var parts: [SessionMessage] = []
        var rows: [ScreenUpdate.Row] = []
        var length = firstHeader
        for row in diff.rows {
            let size = encodedLength(of: row)
            if !rows.isEmpty, length + size > maximumLength {
                parts.append(part(rows, first: parts.isEmpty, last: false))
                rows = []
                length = ScreenUpdate.headerLength
            }
            rows.append(row)
            length += size
        }
        parts.append(part(rows, first: parts.isEmpty, last: true))
        return parts
    }

    /// The bytes `row` takes in a `screen` message: its index, its column and its cells.
    static func encodedLength(of row: ScreenUpdate.Row) -> Int {
        var out = SessionMessage.Writer()
        ScreenCellCoding.write(row.cells, into: &out)
        return 4 + out.bytes.count
    }
}
