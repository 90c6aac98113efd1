import ScreenModel

/// The lines that scrolled off the top of the main screen, oldest first, bounded by a count of
/// lines and of cells: the oldest go first when either is reached.
public struct Scrollback: Sendable {
    public let maximumLines: Int
    public let maximumCells: Int
    /// `storage[head...]` are the lines kept; the dropped ones before `head` are compacted away
    /// once they are half the array (amortized O(1) a line).
    private var storage: [[ScreenCell]] = []
    private var head = 0
    /// The cells of the lines kept.
    public private(set) var cells = 0
    /// Every line ever pushed, dropped ones included, so a line keeps its number as others come
    /// and go.
    public private(set) var pushed = 0

    public init(maximumLines: Int, maximumCells: Int) {
        self.maximumLines = max(0, maximumLines)
        self.maximumCells = max(0, maximumCells)
    }

    /// The lines kept.
    public var count: Int { storage.count - head }

    /// The number of the oldest line kept.
    public var firstNumber: Int { pushed - count }

    /// Keeps `line` (trailing blanks already trimmed) as the newest, dropping the oldest to stay
    /// within both bounds.
    public mutating func push(_ line: [ScreenCell]) {
        pushed += 1
        guard maximumLines > 0, line.count <= maximumCells else {
            // Too long to keep at all: what came before goes too, so the lines kept stay one
            // unbroken run of numbers.
            while count > 0 { dropOldest() }
            return
        }
        while count == maximumLines || cells + line.count > maximumCells { dropOldest() }
        storage.append(line)
        cells += line.count
    }

    /// The newest line, taken back (a screen grown taller pulls its top lines back).
    public mutating func popNewest() -> [ScreenCell]? {
        guard count > 0, let line = storage.popLast() else { return nil }
        cells -= line.count
        pushed -= 1
        return line
    }

    /// Lines by number, those of `range` still kept, oldest first.
    public func lines(_ range: Range<Int>) -> [[ScreenCell]] {
        let kept = range.clamped(to: firstNumber..<pushed)
        return kept.map { storage[head + $0 - firstNumber] }
    }

    private mutating func dropOldest() {
        guard count > 0 else { return }
        cells -= storage[head].count
        storage[head] = []
        head += 1
        if head >= 1024, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}
