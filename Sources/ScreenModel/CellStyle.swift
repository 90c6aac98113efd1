/// How a cell's text is drawn: its colours and attributes (SGR).
public struct CellStyle: Hashable, Sendable {
    /// The attributes that are on or off.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let bold = Flags(rawValue: 1 << 0)
        public static let italic = Flags(rawValue: 1 << 1)
        public static let blink = Flags(rawValue: 1 << 2)
        public static let reverse = Flags(rawValue: 1 << 3)
        public static let strike = Flags(rawValue: 1 << 4)
    }

    /// SGR 4 (single), 21 (double), `4:3` (curly), 24 (off).
    public enum Underline: UInt8, Hashable, Sendable {
        case none = 0
        case single, double, curly
    }

    public var foreground: TerminalColor
    public var background: TerminalColor
    public var flags: Flags
    public var underline: Underline

    public init(
        foreground: TerminalColor = .default, background: TerminalColor = .default, flags: Flags = [],
        underline: Underline = .none
    ) {
        self.foreground = foreground
        self.background = background
        self.flags = flags
        self.underline = underline
    }

    /// The style of a cleared screen.
    public static let plain = CellStyle()
}
