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
