import ScreenModel

/// One `scrollback` message (0x14): lines that scrolled off the top of the screen, numbered from 0
/// for the session, oldest first, each its cells from the left (trailing blanks dropped).
public struct ScrollbackLines: Hashable, Sendable {
    public var stream: UInt32
    /// The number of the first line here.
    public var first: UInt64
    /// The oldest line the computer still keeps (older ones are gone for good).
    public var oldest: UInt64
    /// The lines that ever scrolled off: the next line's number.
    public var total: UInt64
    public var lines: [[ScreenCell]]

    /// The most lines one request may ask for.
    public static let maximumRequest = 1000

    public init(stream: UInt32, first: UInt64, oldest: UInt64, total: UInt64, lines: [[ScreenCell]]) {
        self.stream = stream
        self.first = first
        self.oldest = oldest
        self.total = total
        self.lines = lines
    }

    func write(into out: inout SessionMessage.Writer) {
        out.u64(first)
        out.u64(oldest)
        out.u64(total)
        out.u16(lines.count)
        for line in lines { ScreenCellCoding.write(line, into: &out) }
    }

    init(stream: UInt32, reading reader: inout SessionMessage.Reader) throws(SessionMessageError) {
        self.stream = stream
        first = try reader.u64()
        oldest = try reader.u64()
        total = try reader.u64()
        let count = Int(try reader.u16())
        guard oldest <= total, count <= Self.maximumRequest, first >= oldest, first <= total,
            UInt64(count) <= total - first
        else {
            throw SessionMessageError(
                "scrollback lines \(first)..<\(first &+ UInt64(count)) of \(oldest)..<\(total)")
        }
        lines = []
        for _ in 0..<count {
            lines.append(try ScreenCellCoding.read(from: &reader, limit: SessionMessage.maximumCells))
        }
    }
}

extension ScrollbackLines {
    /// The answer to a request: `lines` (numbered from `first`), less the oldest of them until
    /// the message fits one frame.
    public static func answer(
        stream: UInt32, lines: [[ScreenCell]], first: UInt64, oldest: UInt64, total: UInt64
    ) -> ScrollbackLines {
        // type, stream, first, oldest, total, count
        var length = 1 + 4 + 8 + 8 + 8 + 2
        var kept = 0
        for line in lines.reversed() {
            let size = ScreenParts.encodedLength(of: ScreenUpdate.Row(index: 0, cells: line)) - 4
            guard length + size <= SessionMessage.maximumLength else { break }
            length += size
            kept += 1
        }
        return ScrollbackLines(
            stream: stream, first: first + UInt64(lines.count - kept), oldest: oldest, total: total,
            lines: Array(lines.suffix(kept)))
    }
}
